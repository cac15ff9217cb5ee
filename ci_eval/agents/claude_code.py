"""Claude Code (`claude`), headless: `claude -p --output-format stream-json --verbose`.

stream-json (which needs --verbose in print mode) rather than json: the log then shows what the
agent did, and a run killed before the end still has per-message usage. The last line is the
same result object `--output-format json` prints:

    {"type":"result","subtype":"success"|"error_max_turns"|"error_during_execution"|
     "error_max_budget_usd"|...,"is_error":false,"num_turns":4,"result":"...",
     "total_cost_usd":0.0123,"usage":{"input_tokens":10,"cache_creation_input_tokens":500,
     "cache_read_input_tokens":2000,"output_tokens":300},"modelUsage":{"<model>":{...}}}

The outcome is read from subtype AND is_error: an API failure (rate limit, invalid key) comes as
subtype "success" with is_error true and the message in `result` (anthropics/claude-code#79500),
so is_error with a known signature is an infra_error whatever the subtype; error_max_turns and
error_max_budget_usd are the agent's own limits, never infrastructure.

Unattended edits: --permission-mode bypassPermissions; as root that needs IS_SANDBOX=1.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from ci_eval.agents.installs import Install
from ci_eval.agents.preset import (
    PROXY_ENV,
    AgentReport,
    InfraError,
    ModelUsage,
    Preset,
    add,
    count,
    money,
    one_line,
    total,
)
from ci_eval.agents.reading import classify, classify_first, compact, json_lines, status_infra

API_RETRIES = 2
AGENT_LIMIT_SUBTYPES = ("error_max_turns", "error_max_budget_usd",
                        "error_max_structured_output_retries")


class ClaudeCode(Preset):
    name = "claude-code"
    program = "claude"
    install = Install(
        "npm", "@anthropic-ai/claude-code", "2.1.332", "claude", ("ANTHROPIC_API_KEY",),
        login="a Claude subscription instead of an API key: run `claude setup-token` and "
        "store its token as the secret CLAUDE_CODE_OAUTH_TOKEN (add it to the env: of the "
        "run step); the ~/.claude login file of `claude login` does not exist on a runner")
    api_hosts = ("api.anthropic.com",)
    harness_files = ("CLAUDE.md", ".claude", ".mcp.json")
    key_env = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN",
               "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")
    login_file = (".claude", ".credentials.json")
    pass_env = ("ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL",
                "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "MAX_THINKING_TOKENS",
                "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_VERTEX_PROJECT_ID",
                "CLOUD_ML_REGION", "GOOGLE_APPLICATION_CREDENTIALS", *PROXY_ENV)
    # CLAUDE_CODE_MAX_RETRIES: Claude retries a failed API call 10 times by default (401s
    # too), for minutes, under ci-eval's own retries.
    fixed_env = MappingProxyType({"IS_SANDBOX": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                                  "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
                                  "CLAUDE_CODE_MAX_RETRIES": str(API_RETRIES)})
    base_url_env = ("ANTHROPIC_BASE_URL",)

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        argv = [self.program, "-p", "--output-format", "stream-json", "--verbose",
                "--permission-mode", "bypassPermissions"]
        if model:
            argv += ["--model", model]
        # "--": a prompt that starts with "-" is not an option.
        return argv + list(extra_args) + ["--", prompt_text]

    def read(self, output, exit_code, files):
        events, unreadable = json_lines(output)
        notes = [unreadable] if unreadable else []
        model = next((e.get("model") for e in events if e.get("type") == "system"
                      and e.get("subtype") == "init" and isinstance(e.get("model"), str)), None)
        result = next((e for e in reversed(events) if e.get("type") == "result"), None)
        if result is None:
            return self._without_result(events, output, exit_code, model, notes)

        usage = _usage(result.get("usage"))
        by_model = _model_usage(result.get("modelUsage"))
        if (usage is None or not any(usage)) and any(m.input_tokens or m.output_tokens
                                                     for m in by_model):
            # After a cut stream Claude retries without streaming, and `usage` is then all
            # zeros while modelUsage has the figures.
            usage = tuple(add(*(getattr(m, name) for m in by_model)) for name in (
                "input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens"))
            notes.append("tokens from modelUsage (the result's usage was empty)")
        elif usage is None:
            notes.append("result object has no usage")
        cost = money(result.get("total_cost_usd", result.get("cost_usd")))
        subtype = result.get("subtype") if isinstance(result.get("subtype"), str) else None
        is_error = result.get("is_error") is True
        outcome = {"subtype": subtype, "is_error": is_error,
                   "num_turns": count(result.get("num_turns"))}
        if isinstance(result.get("stop_reason"), str):
            outcome["stop_reason"] = result["stop_reason"]

        infra = None
        error_texts = [compact(e) for e in result.get("errors") or [] if e] \
            if isinstance(result.get("errors"), list) else []
        if is_error and isinstance(result.get("result"), str):
            error_texts.insert(0, result["result"])
        status = count(result.get("api_error_status"))
        if isinstance(result.get("error"), str):
            error_texts.insert(0, result["error"])
            outcome["error"] = one_line(result["error"], 80)
        if status is not None:
            outcome["api_error_status"] = status
        if subtype not in AGENT_LIMIT_SUBTYPES and (is_error or (subtype or "").startswith("error")):
            infra = _status_infra(status, error_texts) or classify_first(error_texts)
            if infra is None:
                notes.append("claude reported an error"
                             + (f": {one_line(error_texts[0])}" if error_texts else f" ({subtype})"))

        if model is None and by_model:
            model = max(by_model, key=lambda m: (m.output_tokens or 0)).model
        inp, out, cached, written = usage or (None, None, None, None)
        return AgentReport(
            tokens=total(inp, out), input_tokens=inp, output_tokens=out,
            cached_input_tokens=cached, cache_write_tokens=written,
            cost_usd=cost, cost_source="agent" if cost is not None else None,
            model=model, model_usage=by_model, outcome=outcome, infra_error=infra,
            notes=tuple(notes))

    def _without_result(self, events, output, exit_code, model, notes):
        """Killed or crashed before the result line: sum the per-message usage (no cost)."""
        per_message: dict[Any, tuple] = {}
        for event in events:
            message = event.get("message") if event.get("type") == "assistant" else None
            if isinstance(message, dict) and (usage := _usage(message.get("usage"))):
                key = message.get("id")  # one message id per content block: count it once
                per_message[key if isinstance(key, str) and key else len(per_message)] = usage
        sums = [add(*(u[i] for u in per_message.values())) for i in range(4)]
        # A message's event carries the usage of its message_start: the prompt counts are
        # right, the output count is the API's placeholder (1), not what was generated.
        sums[1] = None
        note = "no result object in output"
        if per_message:
            note += (f"; input tokens summed from {len(per_message)} assistant message(s); "
                     "output tokens and cost unknown")
        infra = None
        if exit_code not in (0, None):
            plain = [line for line in output.splitlines()[-20:] if not line.lstrip().startswith("{")]
            infra = classify("\n".join(plain))
        inp, out, cached, written = sums
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, cache_write_tokens=written, model=model,
                           infra_error=infra, notes=(note, *notes))


def _status_infra(status: int | None, texts: list[str]) -> InfraError | None:
    """The kind an HTTP status Claude reports (api_error_status) names, if it names one."""
    detail = one_line(texts[0]) if texts else "no message"
    return status_infra(status, detail)


def _usage(value: Any) -> tuple[int, int | None, int | None, int | None] | None:
    """(input incl. cache, output, cache read, cache write) from an Anthropic usage object."""
    if not isinstance(value, dict):
        return None
    fresh, out = count(value.get("input_tokens")), count(value.get("output_tokens"))
    if fresh is None or out is None:
        return None
    read, written = count(value.get("cache_read_input_tokens")), count(value.get("cache_creation_input_tokens"))
    return fresh + (read or 0) + (written or 0), out, read, written


def _model_usage(value: Any) -> tuple[ModelUsage, ...]:
    if not isinstance(value, dict):
        return ()
    models = []
    for name, usage in list(value.items())[:50]:
        if not isinstance(usage, dict):
            continue
        fresh, out = count(usage.get("inputTokens")), count(usage.get("outputTokens"))
        read, written = count(usage.get("cacheReadInputTokens")), count(usage.get("cacheCreationInputTokens"))
        if fresh is None or out is None:
            continue
        models.append(ModelUsage(str(name), fresh + (read or 0) + (written or 0), out, read, written))
    return tuple(models)


PRESET = ClaudeCode()
