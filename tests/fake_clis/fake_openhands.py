#!/usr/bin/env python3
"""Fake OpenHands CLI (`openhands`) for tests, beside fake_agent.py (whose modes and variables
it follows: FAKE_AGENT_MODE success | max_turns | rate_limit | auth | malformed | hang,
FAKE_AGENT_FILE, FAKE_AGENT_CONTENT, FAKE_AGENT_RECORD). What the real CLI 1.16.0 does headless
(tests/fixtures/real_clis/openhands-1.16.0-*): one JSON event per line on stdout, the
conversation's state in $OPENHANDS_CONVERSATIONS_DIR/ID/base_state.json (ID: --resume's, without
dashes), exit 0 whether the conversation finished or ended on an error. It refuses what the real
CLI refuses: no --headless (the terminal UI), --headless without a task, --override-with-envs
without LLM_API_KEY and LLM_MODEL (when no agent settings file exists).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

from fake_agent import MODE, edit_workspace, emit, hang, usage_error, value_after


def state(status: str, model: str, usages: list[tuple[int, int, int]], cost: float) -> dict:
    def tokens(prompt: int, completion: int, cached: int) -> dict:
        return {"model": model, "prompt_tokens": prompt, "completion_tokens": completion,
                "cache_read_tokens": cached, "cache_write_tokens": 0, "reasoning_tokens": 0}
    total = [sum(u[i] for u in usages) for i in range(3)]
    return {"id": "fake", "execution_status": status, "stats": {"usage_to_metrics": {
        "agent": {"model_name": model, "accumulated_cost": cost,
                  "accumulated_token_usage": tokens(*total),
                  "token_usages": [tokens(*u) for u in usages]},
        "condenser": {"model_name": model, "accumulated_cost": 0.0,
                      "accumulated_token_usage": tokens(0, 0, 0), "token_usages": []}}}}


def error_event(code: str, detail: str) -> dict:
    return {"id": "e1", "source": "environment", "code": code, "detail": detail,
            "kind": "ConversationErrorEvent"}


def main() -> int:
    args = sys.argv[1:]
    record = os.environ.get("FAKE_AGENT_RECORD")
    if record:
        Path(record).write_text(json.dumps({"tool": "openhands", "argv": args,
                                            "cwd": os.getcwd(), "env": dict(os.environ)}))
    task_file = value_after(args, "-f", "--file")
    if "--headless" not in args:
        return usage_error("openhands", "fake openhands only runs headless (the terminal UI)", 2)
    if not task_file and not value_after(args, "-t", "--task"):
        return usage_error("openhands", "--headless requires either --task or --file to be "
                           "specified", 2)
    home_settings = Path(os.environ.get("HOME", "/nonexistent")) / ".openhands" / \
        "agent_settings.json"
    missing = [n for n in ("LLM_API_KEY", "LLM_MODEL") if not os.environ.get(n)]
    if "--override-with-envs" in args and missing and not home_settings.is_file():
        print(f"Error: Missing required environment variable(s): {', '.join(missing)}")
        return 1
    conversation = uuid.UUID(value_after(args, "--resume") or str(uuid.uuid4())).hex
    folder = Path(os.environ.get("OPENHANDS_CONVERSATIONS_DIR",
                                 Path.home() / ".openhands" / "conversations")) / conversation
    model = os.environ.get("LLM_MODEL", "anthropic/claude-sonnet-4-5-20250929")
    print("Initializing agent...\n✓ Agent initialized with model: " + model, flush=True)
    emit({"source": "user", "kind": "MessageEvent", "llm_message": {"role": "user", "content": [
        {"type": "text", "text": Path(task_file).read_text() if task_file else ""}]}})
    if MODE == "success":
        edit_workspace()
        emit({"source": "agent", "tool_name": "terminal", "kind": "ActionEvent"},
             {"source": "agent", "kind": "MessageEvent",
              "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}})
        doc = state("finished", model, [(6000, 120, 0), (7200, 90, 5800)], 0.0291)
    elif MODE == "max_turns":
        edit_workspace()
        emit(error_event("MaxIterationsReached", "Agent reached maximum iterations limit (2)."))
        doc = state("error", model, [(6000, 120, 0), (7200, 90, 5800)], 0.0291)
    elif MODE in ("rate_limit", "auth"):
        code, detail = (("LLMRateLimitError", "litellm.RateLimitError: AnthropicException - "
                         '{"type":"error","error":{"type":"rate_limit_error"}}')
                        if MODE == "rate_limit" else
                        ("LLMAuthenticationError", "litellm.AuthenticationError: "
                         "AnthropicException - invalid x-api-key"))
        emit(error_event(code, detail))
        doc = state("error", model, [], 0.0)
    elif MODE == "malformed":
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "base_state.json").write_text('{"execution_status": "finished", "stats": {')
        return 0
    elif MODE == "hang":
        return hang()
    else:
        return usage_error("openhands", f"fake: unknown mode {MODE}", 2)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "base_state.json").write_text(json.dumps(doc, indent=2))
    print("Goodbye! 👋\nConversation ID: " + conversation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
