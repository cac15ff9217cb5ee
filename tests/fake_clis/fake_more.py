"""Fake agent CLIs of the second round of presets (qwen, opencode), in the format their real tools print
(tests/fixtures/real_clis holds that real output): see fake_agent.py, which dispatches here."""

from __future__ import annotations

import json
import os
import sys

from fake_agent import MODE, SESSION, edit_workspace, emit, hang, usage_error, value_after

# --- qwen (Qwen Code 0.24.4: stream-json, Claude Code's shape) ---------------------------------

QWEN_MODEL = "qwen3-coder-plus"


def _qwen_usage(inp: int, out: int, cached: int) -> dict:
    return {"input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": cached,
            "total_tokens": inp + out}


def _qwen_assistant(ident: str, model: str, content: list, usage: dict) -> dict:
    return {"type": "assistant", "uuid": ident, "session_id": SESSION, "parent_tool_use_id": None,
            "message": {"id": ident, "type": "message", "role": "assistant", "model": model,
                        "content": content, "stop_reason": None, "usage": usage}}


def qwen(args: list[str]) -> int:
    if value_after(args, "--output-format", "-o") != "stream-json":
        return usage_error("qwen", "fake qwen prints stream-json only", 1)
    if value_after(args, "--approval-mode") != "yolo":
        return usage_error("qwen", "fake qwen needs --approval-mode yolo to edit", 1)
    settings = os.path.join(os.environ.get("HOME", "/nonexistent"), ".qwen", "settings.json")
    selected = ""
    if os.path.isfile(settings):
        with open(settings) as handle:
            selected = (json.load(handle).get("security") or {}).get("auth", {}).get("selectedType")
    if selected != "openai" and "--auth-type" not in args:
        # the real qwen asks for an auth method (a dialog) it cannot show headless
        return usage_error("qwen", "No auth type is selected", 1)
    if not value_after(args, "--prompt", "-p"):
        return usage_error("qwen", "no prompt", 1)
    model = value_after(args, "--model", "-m") or QWEN_MODEL
    emit({"type": "system", "subtype": "init", "uuid": SESSION, "session_id": SESSION,
          "cwd": os.getcwd(), "tools": ["run_shell_command"], "model": model,
          "permission_mode": "yolo", "qwen_code_version": "0.24.4"})
    if MODE == "malformed":
        print('{"type":"result","subtype":"success","is_error":false,"usage":{"input_tok', flush=True)
        return 0
    if MODE in ("rate_limit", "auth"):
        message = ("[API Error: 429 Rate limit reached for requests]" if MODE == "rate_limit"
                   else "[API Error: 401 Incorrect API key provided: sk-test.]")
        emit(_qwen_assistant("a1", model, [{"type": "text", "text": message}],
                             {"input_tokens": 0, "output_tokens": 0}),
             {"type": "result", "subtype": "error_during_execution", "session_id": SESSION,
              "is_error": True, "num_turns": 1, "duration_ms": 1200,
              "usage": _qwen_usage(0, 0, 0), "error": {"message": message}})
        return 1
    if MODE not in ("success", "max_turns", "hang"):
        return usage_error("qwen", f"fake: unknown mode {MODE}", 2)
    emit(_qwen_assistant("a1", model, [{"type": "tool_use", "id": "call_1", "name": "run_shell_command",
                                        "input": {"command": "printf '42\\n' > answer.txt"}}],
                         _qwen_usage(12000, 210, 9000)))
    edit_workspace()
    if MODE == "hang":
        return hang()
    if MODE == "max_turns":  # no result line: the message on stderr, exit 53
        print("Reached max session turns for this session. Increase the number of turns by "
              "specifying maxSessionTurns in settings.json.", file=sys.stderr)
        return 53
    emit(_qwen_assistant("a2", model, [{"type": "text", "text": "Done."}],
                         _qwen_usage(12500, 90, 11000)),
         {"type": "result", "subtype": "success", "session_id": SESSION, "is_error": False,
          "num_turns": 2, "result": "Done.", "usage": _qwen_usage(24500, 300, 20000)})
    return 0


# --- opencode (opencode 1.18.33: `run --format json`, one event per line) ------------------------


def _oc(kind: str, part: dict) -> dict:
    return {"type": kind, "timestamp": 1796301400409, "sessionID": "ses_fake", "part": part}


def _oc_step(reason: str, fresh: int, out: int, read: int, write: int, cost: float) -> dict:
    return _oc("step_finish", {"type": "step-finish", "reason": reason, "cost": cost, "tokens": {
        "total": fresh + out + read + write, "input": fresh, "output": out, "reasoning": 0,
        "cache": {"read": read, "write": write}}})


def opencode(args: list[str]) -> int:
    if args[:1] != ["run"] or value_after(args, "--format") != "json":
        return usage_error("opencode", "fake opencode runs `run --format json` only", 1)
    if "--" not in args or not args[args.index("--") + 1:]:
        return usage_error("opencode", "no prompt", 1)
    if MODE == "malformed":
        print('{"type":"step_finish","part":{"tokens":{"input":7', flush=True)
        return 0
    if MODE in ("rate_limit", "auth"):
        status, message = (429, "Rate limit reached") if MODE == "rate_limit" else \
            (401, "invalid x-api-key")
        emit({"type": "error", "timestamp": 1796301687558, "sessionID": "ses_fake", "error": {
            "name": "APIError", "data": {"message": message, "statusCode": status,
                                         "isRetryable": status == 429}}})
        return 1
    if MODE not in ("success", "max_turns", "hang"):
        return usage_error("opencode", f"fake: unknown mode {MODE}", 2)
    emit(_oc("step_start", {"type": "step-start"}),
         _oc("tool_use", {"type": "tool", "tool": "bash", "state": {
             "status": "completed", "input": {"command": "printf '42\\n' > answer.txt"}}}))
    edit_workspace()
    emit(_oc_step("tool-calls", 700, 50, 200, 100, 0.003285))
    if MODE == "hang":
        return hang()
    if MODE == "max_turns":  # an agent's `steps:` limit: opencode asks for a last answer
        # without tools and stops (from its docs; not seen with the real tool)
        emit(_oc("text", {"type": "text", "text": "Maximum steps reached."}),
             _oc_step("stop", 800, 20, 300, 0, 0.0027))
        return 0
    emit(_oc("text", {"type": "text", "text": "Done."}), _oc_step("stop", 900, 30, 1000, 0, 0.00345))
    return 0


TOOLS = {"qwen": qwen, "opencode": opencode}

if __name__ == "__main__":
    sys.exit(usage_error("fake_more", "run through fake_agent.py", 2))
