#!/usr/bin/env python3
"""Fake agent CLIs for tests: claude, codex, gemini, aider, goose, mini-swe-agent, cline and
copilot, each
printing exactly its tool's documented headless output format.

Run through the wrappers in bin/ (bin/claude, bin/codex, ...; put bin/ first on PATH). A wrapper
sets FAKE_AGENT_TOOL and runs this file with $FAKE_AGENT_PYTHON (default python3), so argv[1:]
here is what the real tool would get. Environment:

    FAKE_AGENT_MODE     success (default) | max_turns | rate_limit | auth | malformed | hang
                        (claude also: overloaded)
                        (claude with neither a key variable nor ~/.claude/.credentials.json: auth)
    FAKE_AGENT_FILE     file the agent writes in its working directory (default answer.txt)
    FAKE_AGENT_CONTENT  what it writes (default "42\\n")
    FAKE_AGENT_RECORD   if set: a JSON file {tool, argv, cwd, env} is written there
    FAKE_AGENT_HANG_SECONDS  how long "hang" sleeps after its first output (default 3600)

success and max_turns edit the file (an agent at its turn limit has often edited already);
rate_limit and auth do not. Each tool also refuses an invocation the real tool would refuse
(claude: stream-json without --verbose; codex outside a git repo without --skip-git-repo-check;
...) with the tool's own kind of usage error, so argv tests cannot pass on a wrong command line.
Token numbers are fixed per tool and mode; tests/test_presets.py asserts them.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

MODE = os.environ.get("FAKE_AGENT_MODE", "success")
SESSION = "3f1c9a52-6d1e-4b8a-9f4e-2c7d5e8a1b90"


def main() -> int:
    tool = os.environ.get("FAKE_AGENT_TOOL") or Path(sys.argv[0]).name
    args = sys.argv[1:]
    record = os.environ.get("FAKE_AGENT_RECORD")
    if record:
        Path(record).write_text(json.dumps({"tool": tool, "argv": args, "cwd": os.getcwd(),
                                            "env": dict(os.environ)}))
    handler = TOOLS.get(tool)
    if handler is None:
        print(f"fake_agent: unknown tool {tool!r}", file=sys.stderr)
        return 127
    return handler(args)


# --- shared ------------------------------------------------------------------------------------


def edit_workspace() -> str:
    name = os.environ.get("FAKE_AGENT_FILE", "answer.txt")
    Path(name).write_text(os.environ.get("FAKE_AGENT_CONTENT", "42\n"))
    return name


def emit(*objects: object) -> None:
    for obj in objects:
        # compact, one object per line, as the tools write JSONL
        print(obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False,
                                                          separators=(",", ":")), flush=True)


def hang() -> int:
    time.sleep(float(os.environ.get("FAKE_AGENT_HANG_SECONDS", "3600")))
    return 0


def value_after(args: list[str], *names: str) -> str | None:
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(name + "="):
                return arg[len(name) + 1:]
    return None


def after_double_dash(args: list[str]) -> str | None:
    return " ".join(args[args.index("--") + 1:]) if "--" in args else None


def usage_error(tool: str, message: str, code: int) -> int:
    print(f"{tool}: error: {message}", file=sys.stderr)
    return code


# --- claude ------------------------------------------------------------------------------------

CLAUDE_MODEL = "claude-sonnet-4-5-20250929"
CLAUDE_KEYS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN",
               "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")


def claude(args: list[str]) -> int:
    if "-p" not in args and "--print" not in args:
        return usage_error("claude", "fake claude only runs headless (-p)", 1)
    fmt = value_after(args, "--output-format")
    if fmt == "stream-json" and "--verbose" not in args:
        print("Error: When using --print, --output-format=stream-json requires --verbose",
              file=sys.stderr)
        return 1
    if fmt not in ("json", "stream-json"):
        return usage_error("claude", "fake claude prints json or stream-json only", 1)
    if value_after(args, "--permission-mode") != "bypassPermissions" \
            and "--dangerously-skip-permissions" not in args:
        return usage_error("claude", "fake claude needs bypassed permissions to edit", 1)
    if not after_double_dash(args):
        print("Error: Input must be provided either through stdin or as a prompt argument "
              "when using --print", file=sys.stderr)
        return 1
    model = value_after(args, "--model") or CLAUDE_MODEL
    keyed = any(os.environ.get(name) for name in CLAUDE_KEYS)
    login = Path(os.environ.get("HOME", "/nonexistent"), ".claude", ".credentials.json")
    mode = MODE if keyed or login.is_file() else "auth"  # neither a key nor `claude login`
    init = {"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION,
            "tools": ["Bash", "Edit", "Read", "Write"], "model": model,
            "permissionMode": "bypassPermissions", "apiKeySource": "ANTHROPIC_API_KEY" if keyed else "none"}

    def assistant(n: int, content: list, fresh: int, write: int, read: int, out: int) -> dict:
        return {"type": "assistant", "session_id": SESSION, "parent_tool_use_id": None,
                "message": {"id": f"msg_0{n}", "type": "message", "role": "assistant",
                            "model": model, "content": content, "stop_reason": None,
                            "usage": {"input_tokens": fresh, "cache_creation_input_tokens": write,
                                      "cache_read_input_tokens": read, "output_tokens": out,
                                      "service_tier": "standard"}}}

    def result(subtype: str, is_error: bool, turns: int, cost: float, usage: tuple, **extra) -> dict:
        fresh, write, read, out = usage
        body = {"type": "result", "subtype": subtype, "is_error": is_error,
                "duration_ms": 5210, "duration_api_ms": 4900 if cost else 0,
                "num_turns": turns, "session_id": SESSION, "total_cost_usd": cost,
                "usage": {"input_tokens": fresh, "cache_creation_input_tokens": write,
                          "cache_read_input_tokens": read, "output_tokens": out,
                          "server_tool_use": {"web_search_requests": 0},
                          "service_tier": "standard"},
                "modelUsage": {model: {"inputTokens": fresh, "outputTokens": out,
                                       "cacheReadInputTokens": read,
                                       "cacheCreationInputTokens": write,
                                       "webSearchRequests": 0, "costUSD": cost}} if cost else {},
                "permission_denials": [], "uuid": "0b9e3d5c-1a2b-4c3d-8e9f-001122334455"}
        body.update(extra)
        return body

    write_call = [{"type": "tool_use", "id": "toolu_01", "name": "Write",
                   "input": {"file_path": f"{os.getcwd()}/answer.txt", "content": "42\n"}}]
    tool_result = {"type": "user", "session_id": SESSION, "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "File created successfully"}]}}
    lines: list = [init] if fmt == "stream-json" else []
    if mode == "success":
        edit_workspace()
        lines += [assistant(1, write_call, 12, 1500, 3000, 80), tool_result,
                  assistant(2, [{"type": "text", "text": "Done."}], 4, 100, 4500, 20)]
        lines.append(result("success", False, 2, 0.0123, (16, 1600, 7500, 100), result="Done.",
                            stop_reason="end_turn"))
        code = 0
    elif mode == "max_turns":
        edit_workspace()
        lines += [assistant(1, write_call, 12, 1500, 3000, 80), tool_result]
        lines.append(result("error_max_turns", True, 3, 0.0081, (12, 1500, 3000, 80), errors=[]))
        code = 1
    elif mode == "rate_limit":  # anthropics/claude-code#79500: "success", is_error, exit 0
        lines.append(result("success", True, 1, 0, (0, 0, 0, 0),
                            result="API Error: Rate limit reached", stop_reason="stop_sequence"))
        code = 0
    elif mode == "auth":
        lines.append(result("success", True, 1, 0, (0, 0, 0, 0),
                            result="Invalid API key · Please run /login"))
        code = 1
    elif mode == "overloaded":
        lines.append(result("error_during_execution", True, 1, 0, (0, 0, 0, 0),
                            errors=["API Error: Repeated 529 Overloaded errors"]))
        code = 1
    elif mode == "malformed":
        print("Segmentation fault (core dumped)", file=sys.stderr)
        lines.append('{"type":"result","subtype":"success","is_error":false,"num_turns":2,'
                     '"total_cost_usd":0.0123,"usage":{"input_tok')
        code = 139
    elif mode == "hang":
        emit(*lines, assistant(1, write_call, 12, 1500, 3000, 80))
        return hang()
    else:
        return usage_error("claude", f"fake: unknown mode {mode}", 2)
    if fmt == "json":
        lines = lines[-1:]
    emit(*lines)
    return code


# --- codex -------------------------------------------------------------------------------------


def codex(args: list[str]) -> int:
    if not args or args[0] != "exec":
        return usage_error("codex", "fake codex only runs `codex exec`", 2)
    if "--skip-git-repo-check" not in args and not Path(".git").exists():
        print("Not inside a trusted directory and --skip-git-repo-check was not specified.",
              file=sys.stderr)
        return 1
    if "--json" not in args:
        return usage_error("codex", "fake codex prints --json only", 2)
    if "--dangerously-bypass-approvals-and-sandbox" not in args and "--full-auto" not in args:
        return usage_error("codex", "fake codex needs unattended edits allowed", 2)
    if not after_double_dash(args):
        return usage_error("codex", "no prompt given", 2)
    start = [{"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
             {"type": "turn.started"}]
    command = {"id": "item_1", "type": "command_execution",
               "command": "bash -lc \"printf '42\\n' > answer.txt\"", "aggregated_output": "",
               "exit_code": 0, "status": "completed"}
    change = {"type": "item.completed", "item": {"id": "item_2", "type": "file_change", "changes": [
        {"path": "answer.txt", "kind": "add"}], "status": "completed"}}
    if MODE == "success":
        edit_workspace()
        emit(*start,
             {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning",
                                                 "text": "**Writing the answer**"}},
             {"type": "item.started", "item": {**command, "exit_code": None,
                                               "status": "in_progress"}},
             {"type": "item.completed", "item": command}, change,
             {"type": "item.completed", "item": {"id": "item_3", "type": "agent_message",
                                                 "text": "Wrote 42 to answer.txt."}},
             {"type": "turn.completed", "usage": {"input_tokens": 24763,
                                                  "cached_input_tokens": 24448,
                                                  "output_tokens": 122}})
        return 0
    if MODE == "max_turns":  # codex has no turn limit: the context window is its end
        edit_workspace()
        message = ("Your input exceeds the context window of this model. "
                   "Please adjust your input and try again.")
        emit(*start, {"type": "item.completed", "item": command}, change,
             {"type": "error", "message": message},
             {"type": "turn.failed", "error": {"message": message}})
        return 1
    if MODE in ("rate_limit", "auth"):
        message = ("exceeded retry limit, last status: 429 Too Many Requests, request id: "
                   "9c84b52ce87fbe62-SJC") if MODE == "rate_limit" else (
            'unexpected status 401 Unauthorized: {"error":{"message":"Incorrect API key provided: '
            'sk-proj-****. You can find your API key at https://platform.openai.com/account/'
            'api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}')
        emit(*start, {"type": "error", "message": message},
             {"type": "turn.failed", "error": {"message": message}})
        return 1
    if MODE == "malformed":
        emit(start[0], '{"type":"turn.completed","usage":{"input_tokens":247')
        return 0
    if MODE == "hang":
        emit(*start)
        return hang()
    return usage_error("codex", f"fake: unknown mode {MODE}", 2)


# --- gemini ------------------------------------------------------------------------------------


def gemini(args: list[str]) -> int:
    prompt = value_after(args, "--prompt", "-p")
    if not prompt:
        return usage_error("gemini", "fake gemini only runs headless (--prompt)", 42)
    if value_after(args, "--output-format", "-o") != "json":
        return usage_error("gemini", "fake gemini prints --output-format json only", 42)
    allowed = "--yolo" in args or "-y" in args
    model = value_after(args, "--model", "-m") or "gemini-2.5-pro"
    print("Loaded cached credentials.", file=sys.stderr, flush=True)

    def stats(main_tokens: dict) -> dict:
        return {"models": {
            model: {"api": {"totalRequests": 3, "totalErrors": 0, "totalLatencyMs": 5053},
                    "tokens": main_tokens},
            "gemini-2.5-flash": {"api": {"totalRequests": 1, "totalErrors": 0,
                                         "totalLatencyMs": 1879},
                                 "tokens": {"input": 8965, "prompt": 8965, "candidates": 10,
                                            "total": 9033, "cached": 0, "thoughts": 30,
                                            "tool": 28}}},
            "tools": {"totalCalls": 1, "totalSuccess": 1, "totalFail": 0, "totalDurationMs": 40,
                      "totalDecisions": {"accept": 0, "reject": 0, "modify": 0,
                                         "auto_accept": 1}},
            "files": {"totalLinesAdded": 1, "totalLinesRemoved": 0}}

    main_tokens = {"input": 3676, "prompt": 24939, "candidates": 120, "total": 25213,
                   "cached": 21263, "thoughts": 154, "tool": 0}
    if MODE == "success":
        if allowed:
            edit_workspace()
        doc = {"session_id": SESSION, "response": "I wrote 42 to answer.txt." if allowed else
               "I was not allowed to write files.", "stats": stats(main_tokens)}
        code = 0
    elif MODE == "max_turns":
        edit_workspace()
        doc = {"session_id": SESSION, "response": "", "stats": stats(main_tokens),
               "error": {"type": "FatalTurnLimitedError", "code": 53, "message":
                         "Reached max session turns for this session. Increase the number of "
                         "turns by specifying maxSessionTurns in settings.json."}}
        code = 53
    elif MODE == "rate_limit":
        doc = {"session_id": SESSION, "error": {"type": "Error", "code": 1, "message":
               "[API Error: Quota exceeded for quota metric 'Generate Content API requests per "
               "minute'. status: 429 RESOURCE_EXHAUSTED]"}}
        code = 1
    elif MODE == "auth":
        doc = {"session_id": SESSION, "error": {"type": "Error", "code": 41, "message":
               "Please set an Auth method in your /root/.gemini/settings.json or specify one of "
               "the following environment variables before running: GEMINI_API_KEY, "
               "GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA"}}
        code = 41
    elif MODE == "malformed":
        print(json.dumps({"session_id": SESSION, "response": "x", "stats": stats(main_tokens)},
                         indent=2)[:180], flush=True)
        return 0
    elif MODE == "hang":
        return hang()
    else:
        return usage_error("gemini", f"fake: unknown mode {MODE}", 42)
    print(json.dumps(doc, indent=2), flush=True)
    return code


# --- aider -------------------------------------------------------------------------------------


def aider(args: list[str]) -> int:
    message_file = value_after(args, "--message-file", "-f")
    if message_file is None and value_after(args, "--message", "-m") is None:
        return usage_error("aider", "fake aider runs scripted only (--message-file)", 2)
    if message_file is not None and not Path(message_file).is_file():
        print(f"Unable to read --message-file {message_file}", flush=True)
        return 1
    if "--yes-always" not in args:
        return usage_error("aider", "fake aider needs --yes-always to run unattended", 2)
    history = value_after(args, "--chat-history-file")
    if history:
        Path(history).write_text("# aider chat started\n")
    model = value_after(args, "--model") or "anthropic/claude-sonnet-4-20250514"
    print(f"Aider v0.86.1\nMain model: {model} with diff edit format, infinite output\n"
          "Weak model: anthropic/claude-3-5-haiku-20241022\nGit repo: none\n"
          "Repo-map: disabled\n", flush=True)
    edit = ("I'll write the answer.\n\nanswer.txt\n```\n<<<<<<< SEARCH\n=======\n42\n"
            ">>>>>>> REPLACE\n```\n")
    if MODE in ("success", "max_turns"):
        edit_workspace()
        print(edit)
        print("Tokens: 2.3k sent, 1.2k cache write, 85 received. Cost: $0.01 message, $0.01 session.")
        print("Applied edit to answer.txt")
        print("Tokens: 3.5k sent, 1.1k cache write, 2.3k cache hit, 40 received.")
        print("Cost: $0.0089 message, $0.02 session.")
        if MODE == "max_turns":
            print("Only 3 reflections allowed, stopping.")
        return 0
    if MODE in ("rate_limit", "auth"):
        if MODE == "rate_limit":
            error = ('litellm.RateLimitError: AnthropicException - {"type":"error","error":'
                     '{"type":"rate_limit_error","message":"Number of request tokens has exceeded '
                     'your per-minute rate limit"}}')
            description = "The API provider has rate limited you. Try again later or check your quotas."
            for delay in ("0.2", "0.5", "1.0"):
                print(f"{error}\n{description}\nRetrying in {delay} seconds...")
            print(f"{error}\n{description}")
        else:
            print('litellm.AuthenticationError: AnthropicException - {"type":"error","error":'
                  '{"type":"authentication_error","message":"invalid x-api-key"}}')
            print("The API provider is not able to authenticate you. Check your API key.")
        return 0
    if MODE == "malformed":
        print("Tokens: lots sent, ??? received.\n\x00\x01\x02 garbled")
        return 0
    if MODE == "hang":
        return hang()
    return usage_error("aider", f"fake: unknown mode {MODE}", 2)


# --- goose -------------------------------------------------------------------------------------


def goose(args: list[str]) -> int:
    if not args or args[0] != "run":
        return usage_error("goose", "fake goose only runs `goose run`", 2)
    instructions = value_after(args, "--instructions", "-i")
    if instructions is None or not Path(instructions).is_file():
        return usage_error("goose", "fake goose reads --instructions FILE", 2)
    if value_after(args, "--output-format") != "stream-json":
        return usage_error("goose", "fake goose prints --output-format stream-json only", 2)

    def message(n: int, role: str, content: list) -> dict:
        return {"type": "message", "message": {"id": f"msg_{n}", "role": role,
                                               "created": 1760000000 + n, "content": content}}

    write = message(2, "assistant", [{"type": "toolRequest", "id": "call_1", "toolCall": {
        "status": "success", "value": {"name": "developer__text_editor", "arguments": {
            "command": "write", "path": "answer.txt", "file_text": "42\n"}}}}])
    wrote = message(3, "user", [{"type": "toolResponse", "id": "call_1", "toolResult": {
        "status": "success", "value": {"content": [{"type": "text",
                                                    "text": "Successfully wrote to answer.txt"}]}}}])
    hello = message(1, "assistant", [{"type": "text", "text": "I'll write the answer."}])
    if MODE == "success":
        edit_workspace()
        emit(hello, write, wrote, message(4, "assistant", [{"type": "text", "text": "Done."}]),
             {"type": "complete", "total_tokens": 15840, "input_tokens": 15320,
              "output_tokens": 520, "cache_read_input_tokens": 9000,
              "cache_write_input_tokens": 2000, "cost_usd": 0.0214})
        return 0
    if MODE == "max_turns":
        edit_workspace()
        emit(hello, write, wrote, message(4, "assistant", [{"type": "text", "text":
             "I've reached the maximum number of actions I can do without user input. "
             "Would you like me to continue?"}]),
             {"type": "complete", "total_tokens": 9000})  # goose < 1.37: a total only
        return 0
    if MODE == "rate_limit":
        emit(hello, {"type": "error", "error": 'Rate limit exceeded: 429 Too Many Requests: '
                     '{"type":"error","error":{"type":"rate_limit_error"}}'},
             {"type": "complete", "total_tokens": 1200, "input_tokens": 1100, "output_tokens": 100})
        return 1
    if MODE == "auth":
        emit({"type": "error", "error": "Authentication error: invalid x-api-key"},
             {"type": "complete", "total_tokens": None})
        return 1
    if MODE == "malformed":
        emit('{"type":"message","message":{"id":')
        print("thread 'main' panicked at crates/goose-cli/src/session/mod.rs:1289:5", file=sys.stderr)
        return 101
    if MODE == "hang":
        emit(hello)
        return hang()
    return usage_error("goose", f"fake: unknown mode {MODE}", 2)


# --- mini-swe-agent ----------------------------------------------------------------------------


def mini_swe_agent(args: list[str]) -> int:
    task = value_after(args, "--task", "-t")
    output = value_after(args, "--output", "-o")
    if not task or not output:
        return usage_error("mini", "fake mini needs --task and --output", 2)
    if "--yolo" not in args and "-y" not in args:
        return usage_error("mini", "fake mini would ask to confirm each command (no --yolo)", 2)
    model = value_after(args, "--model", "-m") or "anthropic/claude-sonnet-4-5-20250929"

    def step(n: int, prompt: int, completion: int, cached: int, written: int) -> list[dict]:
        usage = {"prompt_tokens": prompt, "completion_tokens": completion,
                 "total_tokens": prompt + completion,
                 "prompt_tokens_details": {"cached_tokens": cached},
                 "cache_creation_input_tokens": written, "cache_read_input_tokens": cached}
        return [{"role": "assistant", "content": f"THOUGHT: step {n}\n```bash\nprintf '42\\n' > "
                 "answer.txt\n```", "extra": {"response": {"id": f"chatcmpl-{n}", "model": model,
                                                           "usage": usage}}},
                {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"}]

    def trajectory(status: str, submission: str, cost: float, calls: int, steps: list) -> dict:
        return {"info": {"model_stats": {"instance_cost": cost, "api_calls": calls},
                         "config": {"agent": {"step_limit": 0, "cost_limit": 3.0},
                                    "model": {"model_name": model, "model_kwargs": {}},
                                    "environment": {"cwd": ""}},
                         "mini_version": "1.17.3", "exit_status": status,
                         "submission": submission},
                "messages": [{"role": "system", "content": "You are a helpful assistant."},
                             {"role": "user", "content": task}] + steps,
                "trajectory_format": "mini-swe-agent-1"}

    print("👋 This is mini-swe-agent version 1.17.3.\nmini-swe-agent (step 1, $0.00):")
    if MODE == "success":
        edit_workspace()
        doc = trajectory("Submitted", "", 0.0312, 3,
                         step(1, 1500, 80, 0, 1400) + step(2, 1700, 60, 1400, 0)
                         + step(3, 1800, 40, 1600, 0))
        code = 0
    elif MODE == "max_turns":
        edit_workspace()
        doc = trajectory("LimitsExceeded", "", 0.0201, 2,
                         step(1, 1500, 80, 0, 1400) + step(2, 1700, 60, 1400, 0))
        code = 0
    elif MODE in ("rate_limit", "auth"):
        if MODE == "rate_limit":
            name, text = "RateLimitError", ('litellm.RateLimitError: AnthropicException - {"type":'
                                            '"error","error":{"type":"rate_limit_error",'
                                            '"message":"rate limited"}}')
        else:
            name, text = "AuthenticationError", ('litellm.AuthenticationError: AnthropicException'
                                                 ' - {"type":"error","error":{"type":'
                                                 '"authentication_error","message":'
                                                 '"invalid x-api-key"}}')
        print(f"{name}: {text}")
        doc = trajectory(name, text, 0.0, 0, [])
        code = 1
    elif MODE == "malformed":
        Path(output).write_text('{"info": {"model_stats": {"instance_cost": 0.5')
        return 0
    elif MODE == "hang":
        return hang()
    else:
        return usage_error("mini", f"fake: unknown mode {MODE}", 2)
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_text(json.dumps(doc, indent=2))
    return code


# --- cline ------------------------------------------------------------------------------------


def cline(args: list[str]) -> int:
    """Cline CLI 3.x `--json`: JSONL agent_event lines, then one run_result line (its
    finishReason enum: completed, max_iterations, aborted, mistake_limit, error)."""
    if "--json" not in args:
        return usage_error("cline", "fake cline prints --json only", 1)
    prompt = after_double_dash(args)
    if not prompt:
        return usage_error("cline", "fake cline runs one prompt (after --)", 1)
    if value_after(args, "--auto-approve") != "true":
        return usage_error("cline", "fake cline runs with --auto-approve true only", 1)
    model = value_after(args, "-m", "--model") or "claude-sonnet-4-5"
    ts = "2026-12-03T12:00:00.000Z"

    def event(body: dict) -> dict:
        return {"ts": ts, "type": "agent_event", "event": body}

    def result(reason: str, usage: tuple, text: str, iterations: int) -> dict:
        inp, out, read, write, cost = usage
        figures = {"inputTokens": inp, "outputTokens": out, "cacheReadTokens": read,
                   "cacheWriteTokens": write, "totalCost": cost}
        return {"ts": ts, "type": "run_result", "finishReason": reason, "iterations": iterations,
                "usage": figures, "aggregateUsage": figures, "durationMs": 2291, "text": text,
                "model": {"id": model, "provider": "anthropic"}}

    def error(message: str, error_class: str) -> list:
        return [event({"type": "iteration_start", "iteration": 1}),
                event({"type": "error", "error": {"name": "Error", "message": message},
                       "errorClass": error_class, "recoverable": False, "iteration": 1}),
                result("error", (0, 0, 0, 0, 0), message, 1)]

    worked = (6200, 140, 4000, 1200, 0.01854)
    if MODE in ("success", "max_turns"):
        edit_workspace()
        reason = "completed" if MODE == "success" else "max_iterations"
        emit(event({"type": "iteration_start", "iteration": 1}),
             event({"type": "usage", "inputTokens": 6200, "outputTokens": 140}),
             result(reason, worked, "Done.", 2))
        return 0 if MODE == "success" else 1
    if MODE == "rate_limit":
        emit(*error("Rate limit reached for requests", "unknown"))
        return 1
    if MODE == "auth":
        emit(*error("invalid x-api-key", "auth"))
        return 1
    if MODE == "malformed":
        print(json.dumps(result("completed", worked, "Done.", 2))[:120], flush=True)
        return 0
    if MODE == "hang":
        return hang()
    return usage_error("cline", f"fake: unknown mode {MODE}", 1)


# --- copilot ----------------------------------------------------------------------------------


def copilot(args: list[str]) -> int:
    """GitHub Copilot CLI: JSONL session events on stdout, token counts only in its session log
    ~/.copilot/session-state/ID/events.jsonl (session.usage_record per model call)."""
    prompt = value_after(args, "--prompt", "-p")
    if not prompt:
        return usage_error("copilot", "fake copilot only runs headless (--prompt)", 2)
    if "--allow-all-tools" not in args:
        return usage_error("copilot", "non-interactive mode requires --allow-all-tools", 2)
    if value_after(args, "--output-format") != "json":
        return usage_error("copilot", "fake copilot prints --output-format json only", 2)
    session = value_after(args, "--session-id") or SESSION
    model = value_after(args, "--model") or "claude-sonnet-4.5"
    log = Path(os.environ["HOME"]) / ".copilot" / "session-state" / session / "events.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)

    def event(kind: str, data: dict) -> dict:
        return {"type": kind, "data": data, "id": SESSION, "timestamp": "2026-12-03T12:00:00Z"}

    def result(code: int, premium: int) -> dict:
        return {"type": "result", "sessionId": session, "exitCode": code,
                "usage": {"premiumRequests": premium, "totalApiDurationMs": 900}}

    def usage(inp: int, out: int, read: int) -> str:
        return json.dumps(event("session.usage_record", {"usage": {
            "model": model, "inputTokens": inp, "outputTokens": out, "cacheReadTokens": read,
            "cacheWriteTokens": 0, "cost": 1.0}}))

    if MODE in ("success", "max_turns"):
        edit_workspace()
        log.write_text(usage(5000, 90, 3500) + "\n" + usage(5700, 100, 4500) + "\n")
        code = 0 if MODE == "success" else 1
        ending = [] if MODE == "success" else [event("session.error", {
            "errorType": "query", "message": "Reached the maximum number of turns"})]
        emit(event("assistant.turn_end", {"turnId": "0"}),
             event("assistant.turn_end", {"turnId": "1"}), *ending, result(code, 1))
        return code
    if MODE in ("rate_limit", "auth"):
        kind, status, message = ("rate_limit", 429, "Failed to get response from the AI model; "
                                 "retried 5 times Last error: 429 Rate limit reached") \
            if MODE == "rate_limit" else ("authentication", 401, "Authentication failed (HTTP 401)")
        log.write_text("")
        emit(event("assistant.turn_end", {"turnId": "0"}),
             event("session.error", {"errorType": kind, "message": message, "statusCode": status}),
             result(1, 0))
        return 1
    if MODE == "malformed":
        print(json.dumps(result(0, 1))[:50], flush=True)
        return 0
    if MODE == "hang":
        return hang()
    return usage_error("copilot", f"fake: unknown mode {MODE}", 2)


TOOLS = {"claude": claude, "codex": codex, "gemini": gemini, "aider": aider, "goose": goose,
         "mini-swe-agent": mini_swe_agent, "mini": mini_swe_agent, "cline": cline,
         "copilot": copilot}

if __name__ == "__main__":
    from fake_more import TOOLS as MORE_TOOLS  # the second round of presets
    TOOLS.update(MORE_TOOLS)

if __name__ == "__main__":
    sys.exit(main())
