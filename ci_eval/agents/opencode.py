"""opencode (`opencode`, npm opencode-ai), headless: `opencode run --format json --title ci-eval
[-m PROVIDER/MODEL] PROMPT`.

stdout is JSONL, one event per line (opencode 1.18.33, verified against the fake):
step_start, tool_use {part: {tool, state: {status, input, output}}}, text {part: {text}},
step_finish {part: {reason: "tool-calls"|"stop", tokens: {total, input, output, reasoning,
cache: {read, write}}, cost}} once per model answer, and on failure

    {"type":"error","error":{"name":"APIError","data":{"message":"invalid x-api-key",
     "statusCode":401,"isRetryable":false,...}}}

with exit 1. `tokens.input` is the fresh input only (the cache reads and writes are apart, as
Anthropic counts them), `output` excludes `reasoning`. `cost` is opencode's own figure from its
models.dev prices (0 for a model it has no price for).

`--title`: without it opencode first asks the model for a session title, a request whose usage
is in no event. A gateway is set through the provider's own variable (ANTHROPIC_BASE_URL,
OPENAI_BASE_URL: the AI SDK providers read them), chosen by the model's provider prefix;
`provider.<id>.options.baseURL` of opencode.json did not take effect in 1.18.33.
"""

from __future__ import annotations

import re
from types import MappingProxyType

from ci_eval.agents.installs import Install
from ci_eval.agents.preset import (
    PROVIDER_KEYS,
    PROXY_ENV,
    AgentReport,
    InfraError,
    Preset,
    add,
    count,
    make_infra,
    money,
    one_line,
    total,
)
from ci_eval.agents.reading import classify, compact, json_lines, status_infra

# The providers whose AI SDK package reads a base URL variable (the model's prefix: anthropic/…)
BASE_URL_ENV = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
TITLE = "ci-eval"
# Bun's fetch's words for a connection that failed or was dropped mid-answer, behind opencode's
# "Cannot connect to API: " (an APIError without a status)
CUT = re.compile(r"^Cannot connect to API:|socket connection was closed unexpectedly", re.I)


class Opencode(Preset):
    name = "opencode"
    program = "opencode"
    install = Install(
        "npm", "opencode-ai", "1.18.33", "opencode", ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
        login="an opencode login instead of a key: `opencode auth login` writes "
        "~/.local/share/opencode/auth.json, on a self-hosted runner only (log in once as the "
        "runner's user)",
        model_note="opencode names models PROVIDER/MODEL: set `model:` (e.g. "
        "anthropic/claude-sonnet-4-5) in an agents: entry of ci-eval.yaml (preset: opencode)")
    api_hosts = ("api.anthropic.com", "api.openai.com")
    # AGENTS.md (CLAUDE.md when there is none), the project's opencode.json(c) and .opencode/
    # (agents, commands, plugins, tools)
    harness_files = ("AGENTS.md", "CLAUDE.md", "opencode.json", "opencode.jsonc", ".opencode")
    key_env = PROVIDER_KEYS
    login_file = (".local/share/opencode", "auth.json")  # `opencode auth login`
    pass_env = ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "AWS_SECRET_ACCESS_KEY",
                "AWS_SESSION_TOKEN", "AWS_REGION", *PROXY_ENV)
    fixed_env = MappingProxyType({"OPENCODE_DISABLE_AUTOUPDATE": "1",
                                  "OPENCODE_DISABLE_MODELS_FETCH": "1"})

    def gateway_env(self, base_url, model):
        provider = (model or "").partition("/")[0]
        names = [BASE_URL_ENV[provider]] if provider in BASE_URL_ENV else list(BASE_URL_ENV.values())
        return {name: base_url for name in names}

    def home_files(self, model):
        return {".config/opencode/opencode.json":
                '{\n  "autoupdate": false,\n  "share": "disabled"\n}\n'}

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        argv = [self.program, "run", "--format", "json", "--title", TITLE]
        if model:
            argv += ["--model", model]
        # "--": a prompt that starts with "-" is not an option.
        return argv + list(extra_args) + ["--", prompt_text]

    def read(self, output, exit_code, files):
        events, unreadable = json_lines(output)
        notes = [unreadable] if unreadable else []
        steps = [e.get("part") for e in events if e.get("type") == "step_finish"
                 and isinstance(e.get("part"), dict)]
        usages = [u for u in (_tokens(p.get("tokens")) for p in steps) if u is not None]
        if len(usages) < len(steps):
            notes.append(f"{len(steps) - len(usages)} step_finish event(s) without tokens")
        if not events:
            notes.append("no JSON events in output")
        elif not steps:
            notes.append("no step_finish event: usage unknown")
        inp, cached, written, out = (add(*(u[i] for u in usages)) for i in range(4))
        costs = [money(p.get("cost")) for p in steps]
        # 0 is opencode's figure for a model it has no price for: unknown, not free
        cost = round(sum(costs), 10) if steps and None not in costs and any(costs) else None

        errors = [e.get("error") for e in events if e.get("type") == "error"]
        outcome = {"steps": len(steps),
                   "finish": next((p.get("reason") for p in reversed(steps)
                                   if isinstance(p.get("reason"), str)), None)}
        infra = None
        if errors:
            name, message, status = _error(errors[-1])
            outcome["error"] = one_line(f"{name}: {message}" if name else message, 200)
            infra = _infra(status, message)
            if infra is None:
                notes.append(f"opencode reported an error: {outcome['error']}")
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, cache_write_tokens=written,
                           cost_usd=cost, cost_source="agent" if cost is not None else None,
                           outcome=outcome, infra_error=infra, notes=tuple(notes))


def _error(value) -> tuple[str | None, str, int | None]:
    """(name, message, HTTP status) of an error event's `error`."""
    if not isinstance(value, dict):
        return None, compact(value) if value is not None else "no message", None
    data = value.get("data")
    data = data if isinstance(data, dict) else {}
    message = data.get("message", value.get("message"))
    name = value.get("name") if isinstance(value.get("name"), str) else None
    return (name, message if isinstance(message, str) else compact(value),
            count(data.get("statusCode")))


def _infra(status: int | None, message: str) -> InfraError | None:
    detail = one_line(message)
    known = status_infra(status, detail)
    if known:
        return known
    if status is None and CUT.search(message):
        return make_infra("network", f"connection failed: {detail}")
    return classify(message)


def _tokens(value) -> tuple[int, int | None, int | None, int] | None:
    """(input incl. cache reads and writes, cache reads, cache writes, output incl. reasoning)."""
    if not isinstance(value, dict):
        return None
    fresh, out = count(value.get("input")), count(value.get("output"))
    if fresh is None or out is None:
        return None
    cache = value.get("cache")
    cache = cache if isinstance(cache, dict) else {}
    read, written = count(cache.get("read")), count(cache.get("write"))
    return (fresh + (read or 0) + (written or 0), read, written,
            out + (count(value.get("reasoning")) or 0))


PRESET = Opencode()
