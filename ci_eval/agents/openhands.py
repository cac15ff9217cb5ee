"""OpenHands (`openhands`, PyPI `openhands`: the OpenHands CLI on the OpenHands SDK), headless:

    openhands --headless --json --override-with-envs --resume CONVERSATION_ID -f PROMPT_FILE

with OPENHANDS_CONVERSATIONS_DIR=RUN_DIR/openhands (the run's folder, outside the workspace).
It runs in the workspace itself (the SDK's LocalWorkspace: no Docker). The model, key and base URL
come from LLM_MODEL, LLM_API_KEY and LLM_BASE_URL (--override-with-envs; a litellm model name such
as openai/gpt-4o or anthropic/claude-sonnet-4-5). --resume of a conversation that does not exist
yet starts it under that fixed id, so its state file has a known path in the run's own folder:

    RUN_DIR/openhands/ID/base_state.json
      {"execution_status": "finished"|"error"|"stuck"|...,
       "stats": {"usage_to_metrics": {"agent": {"model_name": ..., "accumulated_cost": 0.01,
                 "token_usages": [...], "accumulated_token_usage": {"prompt_tokens": ...,
                 "completion_tokens": ..., "cache_read_tokens": ..., "cache_write_tokens": ...}},
                 "condenser": {...}}}}

Usage and cost are read from that file (written by the SDK, not the model), summed over its
LLMs (the agent and the condenser); prompt_tokens already count cache reads and writes (litellm).
cache_write_tokens is 0 for an API that has no such field (OpenAI chat completions): 0 is read
as not reported.
The cost is litellm's price list's: 0 after model calls is a model without a price, read as unknown.

An API error ends the conversation with execution_status "error" and, on stdout (one JSONL event
per line), {"kind": "ConversationErrorEvent", "source": "environment", "code": "RateLimitError",
"detail": "litellm.RateLimitError: ..."}. The tool exits 0
either way. The SDK retries a failed model call 5 times with waits of 8 to 64 s by default: the
agent settings file written into the run's HOME (.openhands/agent_settings.json) lowers that to
one retry after 2 s, under ci-eval's own retries (with `home: host` the user's settings apply and
the run's timeout is the bound).
"""

from __future__ import annotations

import json
import re
from types import MappingProxyType

from ci_eval import strict_json
from ci_eval.agents.installs import Install
from ci_eval.agents.preset import (
    LITELLM_OFFLINE,
    PROXY_ENV,
    AgentReport,
    Preset,
    add,
    count,
    make_infra,
    money,
    one_line,
    total,
)
from ci_eval.agents.reading import classify, classify_as, json_lines

CONVERSATIONS = "openhands"  # under the run's folder
CONVERSATION_ID = "0c1e7a1e-0000-4000-8000-000000000001"  # fresh in every run's own folder
STATE_FILE = f"{CONVERSATIONS}/{CONVERSATION_ID.replace('-', '')}/base_state.json"
# The event's code is the exception's class name: the SDK's own (openhands.sdk.llm.exceptions,
# which folds a lost connection into LLMServiceUnavailableError) or litellm's where it passes
# one through. MaxIterationsReached and a context window exceeded are the agent's failures.
API_ERRORS = {
    "LLMAuthenticationError": "auth", "AuthenticationError": "auth",
    "PermissionDeniedError": "auth",
    "LLMRateLimitError": "rate_limit", "RateLimitError": "rate_limit",
    "BudgetExceededError": "rate_limit",
    "LLMServiceUnavailableError": "overloaded", "ServiceUnavailableError": "overloaded",
    "InternalServerError": "overloaded",
    "LLMTimeoutError": "network", "APIConnectionError": "network", "Timeout": "network",
    "NotFoundError": "setup", "LLMBadRequestError": "setup", "BadRequestError": "setup",
}
AGENT_ENDINGS = ("finished", "stuck")
# --override-with-envs without its variables (and no agent settings file): before any model call
MISSING_ENV = re.compile(r"Missing required environment variable\(s\): ([A-Z_, ]+)")
MODEL_RETRIES = 1
# The agent as the CLI's default builds it (openhands_cli.utils.get_default_cli_agent: the same
# condenser), with bounded retries; LLM_MODEL, LLM_API_KEY and LLM_BASE_URL replace the model
# and connection of both LLMs. Tools, skills and MCP servers are set by the CLI at start.
_RETRIES = {"num_retries": MODEL_RETRIES, "retry_min_wait": 2, "retry_max_wait": 8,
            "retry_multiplier": 2}
AGENT_SETTINGS = json.dumps({
    "llm": {"model": "set-by-LLM_MODEL", "usage_id": "agent", **_RETRIES},
    "system_prompt_kwargs": {"cli_mode": True},
    "condenser": {"kind": "LLMSummarizingCondenser", "max_size": 80, "keep_first": 4,
                  "llm": {"model": "set-by-LLM_MODEL", "usage_id": "condenser", **_RETRIES}},
}, indent=1)


class OpenHands(Preset):
    name = "openhands"
    program = "openhands"
    install = Install(
        "pip", "openhands", "1.16.0", "openhands", ("LLM_API_KEY",),
        model_note="OpenHands needs a litellm model name: set `model:` in an agents: entry of "
        "ci-eval.yaml (preset: openhands), e.g. anthropic/claude-sonnet-4-5 (it becomes "
        "LLM_MODEL; the key is LLM_API_KEY)",
        needs_model=True, python="3.12")
    api_hosts = ("api.anthropic.com", "api.openai.com")
    # AGENTS.md (also agent.md), CLAUDE.md, GEMINI.md and .cursorrules of the working folder
    # and the git root are loaded as skills (openhands.sdk.skills: load_project_skills), and
    # the skill folders .agents/skills, .openhands/skills, .openhands/microagents
    harness_files = ("AGENTS.md", "agent.md", "CLAUDE.md", "GEMINI.md", ".cursorrules",
                     ".agents", ".openhands")
    key_env = ("LLM_API_KEY",)
    model_env = ("LLM_MODEL",)
    pass_env = ("LLM_MODEL", "LLM_BASE_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                "AWS_SESSION_TOKEN", "AWS_REGION_NAME", *PROXY_ENV)
    base_url_env = ("LLM_BASE_URL",)
    fixed_env = MappingProxyType({"OPENHANDS_SUPPRESS_BANNER": "1", **LITELLM_OFFLINE})

    def env(self, model):
        env = dict(self.fixed_env)
        if model:
            env["LLM_MODEL"] = model
        return env

    def home_files(self, model):
        return {".openhands/agent_settings.json": AGENT_SETTINGS}

    def run_env(self, run_dir):
        return {"OPENHANDS_CONVERSATIONS_DIR": f"{run_dir}/{CONVERSATIONS}"}

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        return [self.program, "--headless", "--json", "--override-with-envs",
                "--resume", CONVERSATION_ID, "-f", prompt_file, *extra_args]

    def output_files(self, run_dir):
        return {"state": f"{run_dir}/{STATE_FILE}"}

    def read(self, output, exit_code, files):
        error = _error_event(output)
        text = files.get("state")
        if text is None:
            infra = None
            if error is not None:
                infra = _infra(*error)
            elif missing := MISSING_ENV.search(output):
                infra = make_infra("auth" if "LLM_API_KEY" in missing.group(1) else "setup",
                                   f"openhands: {missing.group(0)}")
            elif exit_code not in (0, None):
                infra = classify("\n".join(output.splitlines()[-5:])) or make_infra(
                    "setup", f"openhands exited {exit_code} before it started a conversation: "
                    f"{one_line(output.strip().splitlines()[-1] if output.strip() else '')}")
            return AgentReport(infra_error=infra, notes=("no conversation state file: usage unknown",))
        try:
            state = strict_json.loads_limited(text)
        except ValueError as exc:
            return AgentReport(notes=(f"conversation state file not readable ({one_line(exc, 120)})",))
        if not isinstance(state, dict):
            return AgentReport(notes=("conversation state file holds no object",))

        notes = []
        status = state.get("execution_status") if isinstance(state.get("execution_status"), str) else None
        usage = _usage(state.get("stats"))
        inp, out, cached, written, cost, calls, model = usage
        if cost == 0:  # no model call answered, or a model without a price
            cost = None
            if calls:
                notes.append("openhands reported cost 0 after model calls (model price unknown)")
        if inp is None and calls:
            notes.append("no token usage in the conversation state")
        infra = None
        if status == "error":
            if error is not None:
                infra = _infra(*error)
            else:
                notes.append("openhands ended with an error and no error event")
        elif status not in AGENT_ENDINGS:
            notes.append(f"openhands ended with {one_line(status, 80) if status else 'no execution status'}")
        outcome = {"execution_status": status, "llm_calls": calls}
        if error is not None and status == "error":
            outcome["error"] = error[0]
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, cache_write_tokens=written, cost_usd=cost,
                           cost_source="agent" if cost is not None else None, model=model,
                           outcome=outcome, infra_error=infra, notes=tuple(notes))


def _error_event(output: str) -> tuple[str, str] | None:
    """(code, detail) of the last ConversationErrorEvent the CLI printed, or None. Events are
    whole JSON lines of the CLI's; the model's text is inside their strings, never a line."""
    found = None
    for event in json_lines(output)[0]:
        if event.get("kind") == "ConversationErrorEvent" and event.get("source") == "environment":
            code, detail = event.get("code"), event.get("detail")
            found = (one_line(code, 80) if isinstance(code, str) else "error",
                     detail if isinstance(detail, str) else "")
    return found


def _infra(code: str, detail: str):
    kind = API_ERRORS.get(code)
    reason = f"{code}: {one_line(detail)}"
    if kind == "overloaded" and classify_as("network", detail):
        kind = "network"  # a lost connection, wrapped as a server error
    if kind is None:
        found = classify(detail)
        return make_infra(found.kind, reason) if found else None
    return make_infra(kind, reason)


def _usage(stats) -> tuple:
    """(input, output, cached, cache write, cost, model calls, main model) over the LLMs."""
    inp = out = cached = written = cost = None
    calls = 0
    model = None
    metrics = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    if not isinstance(metrics, dict):
        return inp, out, cached, written, cost, calls, model
    for usage_id, metric in metrics.items():
        if not isinstance(metric, dict):
            continue
        if usage_id == "agent" and isinstance(metric.get("model_name"), str):
            model = one_line(metric["model_name"], 120)
        usages = metric.get("token_usages")
        calls += len(usages) if isinstance(usages, list) else 0
        cost = _sum_money(cost, money(metric.get("accumulated_cost")))
        tokens = metric.get("accumulated_token_usage")
        if not isinstance(tokens, dict):
            continue
        prompt, completion = count(tokens.get("prompt_tokens")), count(tokens.get("completion_tokens"))
        if prompt is None or completion is None or (prompt == completion == 0 and not usages):
            continue
        inp, out = add(inp, prompt), add(out, completion)
        cached = add(cached, count(tokens.get("cache_read_tokens")))
        # 0 is also what an API without the field gives (OpenAI chat completions): unknown
        written = add(written, count(tokens.get("cache_write_tokens")) or None)
    return inp, out, cached, written, cost, calls, model


def _sum_money(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else money(a + b)


PRESET = OpenHands()
