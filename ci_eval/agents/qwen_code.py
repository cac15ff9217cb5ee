"""Qwen Code (`qwen`, npm @qwen-code/qwen-code, a gemini-cli fork speaking OpenAI chat
completions), headless: `qwen --output-format stream-json --approval-mode yolo -m M --prompt=PROMPT`.

stream-json is Claude Code's shape: system/init (with qwen_code_version), assistant messages
each with the usage of the answer it came from, system/retry on a replayed stream, and a last

    {"type":"result","subtype":"success"|"error_during_execution","is_error":false,
     "num_turns":2,"result":"...","usage":{"input_tokens":2000,"output_tokens":100,
     "cache_read_input_tokens":400,"total_tokens":2100},"error"?:{"message":"..."}}

Unlike Claude's, `input_tokens` counts the cached tokens too (it is the API's prompt_tokens).
No cost field and no cache writes (chat completions does not report them). An API failure is
`is_error` with `error.message` "[API Error: 401 Incorrect API key …]" (the HTTP status first),
"[API Error: terminated (cause: UND_ERR_SOCKET: other side closed)]" for a cut connection.
The same text is also printed as an assistant message: only the result's error is read.

Retries (0.24.4's bundle, verified against the fake): three loops nest. The OpenAI SDK's
retries and an outer rate-limit loop (10 times, 60 s apart by default) both take
`model.generationConfig.maxRetries` of settings.json, set to 0 here; between them gemini-cli's
retryWithBackoff makes up to 7 attempts of each call on 429/5xx (1.5 s doubling to 30 s, or the
server's retry-after), with no setting: a failing provider costs a run at most 7 requests and
about 80 s, then ci-eval's own retries take over. QWEN_CODE_UNATTENDED_RETRY, which makes that
loop retry 429s for up to six hours, is not let through.

QWEN_CODE_NO_RELAUNCH=true: as gemini-cli, without it qwen starts itself again as a child node
process with a larger heap limit.
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
    Preset,
    add,
    count,
    one_line,
    total,
)
from ci_eval.agents.reading import classify, compact, json_lines, status_infra

# ~/.qwen/settings.json of the agent's own HOME: the OpenAI-compatible key auth (qwen's OAuth
# free tier is gone), maxRetries 0 (see the module docstring), no usage statistics, telemetry
# or update check.
HOME_SETTINGS = {"security": {"auth": {"selectedType": "openai"}},
                 "model": {"generationConfig": {"maxRetries": 0}},
                 "general": {"enableAutoUpdate": False},
                 "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}
TURN_LIMIT_EXIT = 53  # --max-session-turns / model.maxSessionTurns reached (as gemini-cli)
API_ERROR = re.compile(r"^\s*\[API Error:\s*(\d{3})\b")


class QwenCode(Preset):
    name = "qwen-code"
    program = "qwen"
    install = Install(
        "npm", "@qwen-code/qwen-code", "0.24.4", "qwen", ("OPENAI_API_KEY",),
        model_note="Qwen Code speaks OpenAI chat completions: set `model:` (e.g. "
        "qwen3-coder-plus) and `base_url:` (e.g. "
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1) in an agents: entry of "
        "ci-eval.yaml (preset: qwen-code), the key in OPENAI_API_KEY")
    api_hosts = ("api.openai.com", "dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com")
    harness_files = ("QWEN.md", "AGENTS.md", "QWEN.local.md", ".qwen", ".qwenignore")
    key_env = ("OPENAI_API_KEY",)
    pass_env = ("OPENAI_BASE_URL", "OPENAI_MODEL", *PROXY_ENV)
    fixed_env = MappingProxyType({"QWEN_CODE_NO_RELAUNCH": "true",
                                  "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"})
    base_url_env = ("OPENAI_BASE_URL",)

    def home_files(self, model):
        return {".qwen/settings.json": json.dumps(HOME_SETTINGS, indent=2) + "\n"}

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        argv = [self.program, "--output-format", "stream-json", "--approval-mode", "yolo"]
        if model:
            argv += ["--model", model]
        # --prompt=TEXT keeps a prompt starting with "-" a value (qwen ignores what follows "--")
        return argv + list(extra_args) + [f"--prompt={prompt_text}"]

    def read(self, output, exit_code, files):
        events, unreadable = json_lines(output)
        notes = [unreadable] if unreadable else []
        model = next((e.get("model") for e in events if e.get("type") == "system"
                      and e.get("subtype") == "init" and isinstance(e.get("model"), str)), None)
        retries = sum(1 for e in events if e.get("type") == "system" and e.get("subtype") == "retry")
        if retries:
            notes.append(f"qwen replayed a stream {retries} time(s)")
        result = next((e for e in reversed(events) if e.get("type") == "result"), None)
        if result is None:
            return self._without_result(events, exit_code, model, notes)

        usage = _usage(result.get("usage"))
        if usage is None:
            notes.append("result object has no usage")
        is_error = result.get("is_error") is True
        outcome = {"subtype": result.get("subtype") if isinstance(result.get("subtype"), str) else None,
                   "is_error": is_error, "num_turns": count(result.get("num_turns"))}
        error = result.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        message = message if isinstance(message, str) else (compact(error) if error else None)
        infra = None
        if message:
            outcome["error"] = one_line(message, 200)
        if is_error:
            infra = _infra(message)
            if infra is None:
                notes.append("qwen reported an error"
                             + (f": {one_line(message)}" if message else f" ({outcome['subtype']})"))
        inp, cached, out = usage or (None, None, None)
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, model=model, outcome=outcome,
                           infra_error=infra, notes=tuple(notes))

    def _without_result(self, events, exit_code, model, notes):
        """Killed, crashed or at its turn limit (exit 53, no result line: the agent's own
        ending, scored) before the result line: sum the usage of the assistant messages (each
        is printed once its answer is complete, with that answer's whole usage)."""
        per_message: dict = {}
        for event in events:
            message = event.get("message") if event.get("type") == "assistant" else None
            if isinstance(message, dict) and (usage := _usage(message.get("usage"))):
                key = message.get("id")
                per_message[key if isinstance(key, str) and key else len(per_message)] = usage
        inp, cached, out = (add(*(u[i] for u in per_message.values())) for i in range(3))
        note = "no result object in output"
        if per_message:
            note += f"; tokens summed from {len(per_message)} assistant message(s)"
        outcome = {"status": "turn_limit"} if exit_code == TURN_LIMIT_EXIT else {}
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, model=model, outcome=outcome,
                           notes=(note, *notes))


def _infra(message: str | None) -> InfraError | None:
    """The kind of an "[API Error: STATUS …]" (404: the model does not exist, never retried),
    else of the error's signature."""
    status = API_ERROR.match(message or "")
    code = int(status.group(1)) if status else None
    detail = one_line(message or "no message")
    return status_infra(code, detail) or classify(message)


def _usage(value) -> tuple[int, int | None, int] | None:
    """(input incl. cached, cached, output) of a qwen usage object."""
    if not isinstance(value, dict):
        return None
    inp, out = count(value.get("input_tokens")), count(value.get("output_tokens"))
    if inp is None or out is None:
        return None
    return inp, count(value.get("cache_read_input_tokens")), out


PRESET = QwenCode()
