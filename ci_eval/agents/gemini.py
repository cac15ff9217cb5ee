"""Gemini CLI (`gemini`), headless: `gemini --yolo --output-format json --prompt=...`.

stdout is one pretty-printed JSON object (docs/cli/headless.md): {session_id, response,
stats: {models: {<model>: {api: {...}, tokens: {input, prompt, candidates, total, cached,
thoughts, tool}}}, tools: {...}}, error?: {type, message, code}}. Per model, `prompt` counts
every prompt token (input = prompt - cached), `candidates` the answer, `thoughts` reasoning,
`tool` tool-use prompt tokens; total = prompt + candidates + thoughts + tool. No cost field.

Exit codes (headless mode): 0 success, 1 general error, 41 authentication, 42 input error,
52 configuration error, 53 turn limit (maxSessionTurns), 54 fatal tool error, 130 cancelled.

Unattended: --yolo, which Gemini CLI only honours in a trusted folder, hence
GEMINI_CLI_TRUST_WORKSPACE=true. `--prompt=TEXT` keeps a prompt starting with "-" a value.

GEMINI_CLI_NO_RELAUNCH=true: without it gemini-cli loads its whole bundle, then starts itself
again as a child node process (with a larger heap limit) that loads it a second time, while the
parent ignores SIGTERM and only relays: about 1.2 CPU s of every run, and the harness's timeout
signal would reach a relay instead of the agent. The child gemini-cli starts sets the same variable.
"""

from __future__ import annotations

import json
import re
from types import MappingProxyType

from ci_eval.agents.installs import Install
from ci_eval.agents.preset import (
    PROXY_ENV,
    AgentReport,
    InfraError,
    ModelUsage,
    Preset,
    add,
    count,
    make_infra,
    one_line,
    total,
)
from ci_eval.agents.reading import classify, compact, last_json_object

# ~/.gemini/settings.json of the agent's own HOME. With GOOGLE_GEMINI_BASE_URL set (base_url:)
# gemini-cli picks a "gateway" auth type and headless mode exits 41 "Invalid auth method
# selected" unless the key auth is selected here; maxAttempts bounds its own retries (10 by
# default, 5 to 30 s apart) under ci-eval's; no usage statistics, no update check.
HOME_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                 "general": {"maxAttempts": 2, "disableAutoUpdate": True, "disableUpdateNag": True},
                 "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}
EXIT_MEANINGS = {0: "success", 1: "error", 41: "auth_error", 42: "input_error",
                 52: "config_error", 53: "turn_limit", 54: "tool_error", 130: "cancelled"}


class Gemini(Preset):
    name = "gemini"
    program = "gemini"
    install = Install(
        "npm", "@google/gemini-cli", "0.61.0", "gemini", ("GEMINI_API_KEY",),
        login="a Google login instead of an API key: ~/.gemini/oauth_creds.json, on a "
        "self-hosted runner only (log in once as the runner's user)")
    api_hosts = ("generativelanguage.googleapis.com", "oauth2.googleapis.com")
    harness_files = ("GEMINI.md", ".gemini", ".geminiignore")
    key_env = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
               "GOOGLE_APPLICATION_CREDENTIALS")
    login_file = (".gemini", "oauth_creds.json")
    pass_env = ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GEMINI_BASE_URL",
                "GEMINI_MODEL", *PROXY_ENV)
    fixed_env = MappingProxyType({"GEMINI_CLI_TRUST_WORKSPACE": "true",
                                  "GEMINI_CLI_NO_RELAUNCH": "true"})
    base_url_env = ("GOOGLE_GEMINI_BASE_URL",)

    def home_files(self, model):
        return {".gemini/settings.json": json.dumps(HOME_SETTINGS, indent=2) + "\n"}

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        argv = [self.program, "--yolo", "--output-format", "json"]
        if model:
            argv += ["--model", model]
        return argv + list(extra_args) + [f"--prompt={prompt_text}"]

    def read(self, output, exit_code, files):
        doc, problem = last_json_object(
            output, lambda o: any(k in o for k in ("response", "stats", "error")))
        status = EXIT_MEANINGS.get(exit_code, "killed" if exit_code is None else "error")
        outcome: dict = {"status": status}
        notes = [problem] if doc is None else []
        error = doc.get("error") if doc else None
        message = None
        if isinstance(error, dict):
            message = error.get("message") if isinstance(error.get("message"), str) else compact(error)
            outcome["error_type"] = one_line(error.get("type", ""), 80) or None
            outcome["error_code"] = error.get("code") if isinstance(error.get("code"), (int, str)) else None
        elif isinstance(error, str):
            message = error
        if message:
            outcome["error"] = one_line(message)

        infra = self._infra(exit_code, error, message) or _cut_connection(output, exit_code, message)
        if message and infra is None and status != "turn_limit":
            notes.append(f"gemini reported an error: {one_line(message)}")

        by_model = _models(doc.get("stats") if doc else None)
        if doc is not None and not by_model:
            notes.append("no token stats in output")
        inp = add(*(m.input_tokens for m in by_model))
        out = add(*(m.output_tokens for m in by_model))
        cached = add(*(m.cached_input_tokens for m in by_model))
        main = max(by_model, key=lambda m: (m.input_tokens or 0) + (m.output_tokens or 0)).model \
            if by_model else None
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, model=main, model_usage=by_model,
                           outcome=outcome, infra_error=infra, notes=tuple(notes))

    @staticmethod
    def _infra(exit_code, error, message) -> InfraError | None:
        code = error.get("code") if isinstance(error, dict) else None
        detail = f": {one_line(message)}" if message else ""
        if exit_code == 41 or code == 41:
            return make_infra("auth", f"authentication (gemini exit 41){detail}")
        if exit_code in (42, 52) or code in (42, 52):
            what = "input" if 42 in (exit_code, code) else "configuration"
            return make_infra("setup", f"gemini refused its {what} (exit {exit_code}){detail}")
        if exit_code == 53:
            return None  # the turn limit: the agent's own outcome
        return classify(message) if message else None


# undici's words for a connection the server (or a gateway) dropped mid-answer. gemini-cli
# reports it as error message "terminated" (exit 1) and prints the cause on stderr; it does not
# retry. Read only when gemini itself reported an error.
CUT_CONNECTION = re.compile(r"\bUND_ERR_SOCKET\b|SocketError: other side closed|"
                            r"\bother side closed\b")


def _cut_connection(output: str, exit_code: int | None, message: str | None) -> InfraError | None:
    if not message or exit_code in (0, None):
        return None
    plain = "\n".join(line for line in output.splitlines()[-200:]
                      if not line.lstrip().startswith(("{", "}", '"')))
    found = CUT_CONNECTION.search(plain)
    if found or message.strip().lower() == "terminated":
        cause = found.group() if found else "terminated"
        return make_infra("network", f"connection cut ({cause}): gemini reported "
                          f"{one_line(message, 80)!r}")
    return None


def _models(stats) -> tuple[ModelUsage, ...]:
    models = stats.get("models") if isinstance(stats, dict) else None
    if not isinstance(models, dict):
        return ()
    found = []
    for name, entry in list(models.items())[:50]:
        tokens = entry.get("tokens") if isinstance(entry, dict) else None
        if not isinstance(tokens, dict):
            continue
        prompt, candidates = count(tokens.get("prompt")), count(tokens.get("candidates"))
        if prompt is None or candidates is None:
            continue
        found.append(ModelUsage(
            model=str(name),
            input_tokens=prompt + (count(tokens.get("tool")) or 0),
            output_tokens=candidates + (count(tokens.get("thoughts")) or 0),
            cached_input_tokens=count(tokens.get("cached"))))
    return tuple(found)


PRESET = Gemini()
