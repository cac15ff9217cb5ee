"""GitHub Copilot CLI (`copilot`, npm `@github/copilot`), headless: `copilot --prompt=PROMPT
--allow-all-tools --output-format json --session-id ID`.

stdout is JSONL of session events: `assistant.message`, `tool.execution_*`, `assistant.turn_end`,
`session.error` {errorType ("authentication", "rate_limit", "query", ...), message,
statusCode}, and last `result` {exitCode, usage {premiumRequests, totalApiDurationMs, ...}}.
stdout carries no token counts: Copilot writes them to the session's own event log,
~/.copilot/session-state/ID/events.jsonl (`session.usage_record` {usage {model, inputTokens
(every prompt token, cache reads included), outputTokens, cacheReadTokens, cacheWriteTokens,
cost}} per model call). ID is fixed per run (a UUID of the run folder) so the log's path is known;
it lies in the run's own HOME (home: run), so with `home: host` usage stays unknown. Its `cost`
is not US dollars (0 for a custom provider; GitHub bills premium requests): the cost comes from
the pricing table, premium requests are an outcome field.

Models: GitHub's Copilot API with a GitHub token (COPILOT_GITHUB_TOKEN, GH_TOKEN, GITHUB_TOKEN),
or a custom provider ("BYOK", `copilot help environment`): COPILOT_PROVIDER_BASE_URL,
COPILOT_PROVIDER_TYPE (openai | azure | anthropic), COPILOT_PROVIDER_API_KEY. `base_url:` sets
those (the type by the model: claude... is anthropic, else openai) and COPILOT_OFFLINE=true (no
GitHub login, telemetry or update check).

Retries: Copilot retries a failing model call 5 times by itself (about 5 s of waits against the
fake) and then reports "retried 5 times"; not settable, bounded.
"""

from __future__ import annotations

import os
import uuid
from types import MappingProxyType

from ci_eval.agents.installs import Install
from ci_eval.agents.preset import (
    PROXY_ENV,
    AgentReport,
    InfraError,
    Preset,
    add,
    count,
    make_infra,
    one_line,
    total,
)
from ci_eval.agents.reading import classify, json_lines

OWN_HOME = "home"  # run/sandbox/home.py's folder of the agent's own HOME in the run folder
SESSION_NAMESPACE = uuid.UUID("6f0e8a52-3c1d-4b7e-9a2f-5d8c1e4b7a90")
ERROR_TYPES = {"authentication": "auth", "rate_limit": "rate_limit"}
STATUS_KINDS = {401: "auth", 403: "auth", 404: "setup", 429: "rate_limit", 500: "overloaded",
                502: "overloaded", 503: "overloaded", 529: "overloaded"}


def session_id(run_dir: str) -> str:
    return str(uuid.uuid5(SESSION_NAMESPACE, os.path.abspath(run_dir)))


class Copilot(Preset):
    name = "copilot"
    program = "copilot"
    install = Install(
        "npm", "@github/copilot", "1.0.102", "copilot",
        ("COPILOT_GITHUB_TOKEN", "COPILOT_PROVIDER_API_KEY"),
        login="a fine-grained personal access token with the \"Copilot Requests\" permission, "
        "stored as the secret COPILOT_GITHUB_TOKEN (the workflow's own GITHUB_TOKEN cannot use "
        "Copilot); or your own model provider: COPILOT_PROVIDER_API_KEY with `base_url:` in "
        "ci-eval.yaml")
    api_hosts = ("api.githubcopilot.com", "api.individual.githubcopilot.com",
                 "api.business.githubcopilot.com", "api.enterprise.githubcopilot.com",
                 "api.github.com")
    harness_files = ("AGENTS.md", ".github/copilot-instructions.md", ".github/instructions",
                     "CLAUDE.md", "GEMINI.md")
    key_env = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_PROVIDER_API_KEY",
               "COPILOT_PROVIDER_BEARER_TOKEN")
    pass_env = ("COPILOT_MODEL", "COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE",
                "COPILOT_PROVIDER_WIRE_API", "COPILOT_PROVIDER_MODEL_ID",
                "COPILOT_PROVIDER_WIRE_MODEL", "COPILOT_OFFLINE", "GH_HOST", "COPILOT_GH_HOST",
                *PROXY_ENV)
    fixed_env = MappingProxyType({"COPILOT_AUTO_UPDATE": "false"})

    def gateway_env(self, base_url, model):
        kind = "anthropic" if (model or "").lower().startswith("claude") else "openai"
        return {"COPILOT_PROVIDER_BASE_URL": base_url, "COPILOT_PROVIDER_TYPE": kind,
                "COPILOT_OFFLINE": "true"}

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        argv = [self.program, "--allow-all-tools", "--output-format", "json",
                "--session-id", session_id(run_dir)]
        if model:
            argv += ["--model", model]
        return argv + list(extra_args) + [f"--prompt={prompt_text}"]

    def output_files(self, run_dir):
        return {"events": os.path.join(run_dir, OWN_HOME, ".copilot", "session-state",
                                       session_id(run_dir), "events.jsonl")}

    def read(self, output, exit_code, files):
        lines, unreadable = json_lines(output)
        notes = [unreadable] if unreadable else []
        results = [e for e in lines if e.get("type") == "result"]
        errors = [e.get("data") for e in lines
                  if e.get("type") == "session.error" and isinstance(e.get("data"), dict)]
        outcome: dict = {"turns": sum(1 for e in lines if e.get("type") == "assistant.turn_end")}
        result = results[-1] if results else None
        if result is None:
            notes.append("no result line in output" if lines else "no JSON events in output")
        else:
            usage = result.get("usage")
            premium = count(usage.get("premiumRequests")) if isinstance(usage, dict) else None
            if premium is not None:
                outcome["premium_requests"] = premium

        records, unreadable_log = json_lines(files.get("events", ""))
        if unreadable_log:
            notes.append(f"session log: {unreadable_log}")
        calls = [u for u in (_call(e) for e in records) if u is not None]
        inp, out, cached, written = (add(*(c[i] for c in calls)) for i in range(4))
        models = {c[4] for c in calls if c[4]}
        if not calls and "events" not in files:
            notes.append("no session log: usage unknown")
        elif not calls:
            notes.append("no usage records in the session log")

        message = errors[-1].get("message") if errors else None
        if errors and not isinstance(message, str):
            message = "error"
        if message:
            outcome["error"] = one_line(message)
        infra = _infra(errors[-1], message) if message else None
        if message and infra is None:
            notes.append(f"copilot reported an error: {one_line(message)}")
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, cache_write_tokens=written,
                           model=sorted(models)[0] if len(models) == 1 else None,
                           outcome=outcome, infra_error=infra, notes=tuple(notes))


def _call(event: dict) -> tuple | None:
    """(input, output, cache read, cache write, model) of a session.usage_record event."""
    if event.get("type") != "session.usage_record":
        return None
    data = event.get("data")
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return None
    inp, out = count(usage.get("inputTokens")), count(usage.get("outputTokens"))
    if inp is None or out is None:
        return None
    model = usage.get("model")
    return (inp, out, count(usage.get("cacheReadTokens")), count(usage.get("cacheWriteTokens")),
            model if isinstance(model, str) else None)


def _infra(error: dict, message: str) -> InfraError | None:
    error_type = error.get("errorType")
    kind = ERROR_TYPES.get(error_type) if isinstance(error_type, str) else None
    status = count(error.get("statusCode"))
    kind = kind or (STATUS_KINDS.get(status) if status is not None else None) or ("overloaded" if status and status >= 500 else None)
    if kind:
        label = f"HTTP {status}" if status is not None else "copilot"
        return make_infra(kind, f"{kind} ({label}): {message}")
    return classify(message)


PRESET = Copilot()
