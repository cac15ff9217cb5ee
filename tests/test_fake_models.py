"""tests/fake_models on its own (no agent CLI): each wire format answers the script (a shell-tool
call that edits, then a final message) with fixed usage, and each mode fails the way it says."""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import struct
import time

import fake_models
import pytest
from fake_models import USAGE, FakeModelServer
from fake_models.script import FINAL_TEXT, MINI_SUBMIT, Turn, plan, shell_tool

BASH = {"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}


def post(server, path, body, timeout=10):
    host, port = server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    try:
        data = response.read()
    except (http.client.IncompleteRead, ConnectionResetError) as exc:
        return response.status, dict(response.getheaders()), None, type(exc).__name__
    return response.status, dict(response.getheaders()), data.decode(), None


def sse(text):
    return [json.loads(line[6:]) for line in text.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


def test_anthropic_stream_is_a_tool_call_then_a_final_message():
    with FakeModelServer() as server:
        first = {"model": "m", "stream": True, "tools": [BASH],
                 "messages": [{"role": "user", "content": "do it"}]}
        status, headers, text, _ = post(server, "/v1/messages?beta=true", first)
        assert status == 200 and headers["Content-Type"] == "text/event-stream"
        events = sse(text)
        assert [e["type"] for e in events][0] == "message_start" and events[-1]["type"] == "message_stop"
        delta = next(e for e in events if e["type"] == "content_block_delta")["delta"]
        command = json.loads(delta["partial_json"])["command"]
        assert command == "printf %s '42\n' > answer.txt"
        assert events[0]["message"]["usage"]["output_tokens"] == 1  # message_start's placeholder
        assert events[-2]["usage"] == {"input_tokens": 700, "cache_creation_input_tokens": 100,
                                       "cache_read_input_tokens": 200, "output_tokens": 50}
        second = {**first, "stream": False, "messages": first["messages"] + [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": ""}]}]}
        status, _, text, _ = post(server, "/v1/messages", second)
        assert json.loads(text)["content"][0]["type"] == "text"
        assert server.served_total() == fake_models.Usage(2000, 400, 200, 100)
        assert [r.answer for r in server.model_requests()] == ["tool", "text"]


def test_wrong_edits_counts_only_the_requests_that_decide_an_edit():
    first = {"model": "m", "stream": False, "tools": [BASH],
             "messages": [{"role": "user", "content": "do it"}]}
    follow_up = {**first, "messages": first["messages"] + [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": ""}]}]}
    no_tools = {"model": "m", "stream": False, "messages": [{"role": "user", "content": "title?"}]}

    def edit(server):
        _, _, text, _ = post(server, "/v1/messages", first)
        return json.loads(text)["content"][0]["input"]["command"]

    with FakeModelServer(wrong_edits=frozenset({2})) as server:
        assert "'42" in edit(server)
        post(server, "/v1/messages", follow_up)  # a run's second turn: no edit decided
        post(server, "/v1/messages", no_tools)  # a side request without the shell tool
        assert server.edit_requests == 1
        assert "'41" in edit(server)  # the second edit request: the wrong edit
        assert "'42" in edit(server) and server.edit_requests == 3


def test_chat_completions_gemini_and_responses_speak_their_own_formats():
    with FakeModelServer("wrong") as server:
        bash = {"type": "function", "function": {"name": "bash", "parameters": {
            "properties": {"command": {"type": "string"}}}}}
        _, _, text, _ = post(server, "/v1/chat/completions", {"model": "m", "tools": [bash],
                                                                "messages": [{"role": "user", "content": "x"}]})
        call = json.loads(text)["choices"][0]["message"]["tool_calls"][0]["function"]
        assert json.loads(call["arguments"]) == {"command": "printf %s '41\n' > answer.txt"}
        assert json.loads(text)["usage"]["prompt_tokens_details"] == {"cached_tokens": USAGE.cached}
        shell = {"functionDeclarations": [{"name": "run_shell_command", "parameters": {
            "type": "OBJECT", "properties": {"command": {"type": "STRING"}}}}]}
        _, _, text, _ = post(server, "/v1beta/models/g:streamGenerateContent?alt=sse",
                             {"contents": [{"role": "user", "parts": [{"text": "x"}]}], "tools": [shell]})
        (chunk,) = sse(text)
        assert chunk["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == "run_shell_command"
        assert chunk["usageMetadata"]["cachedContentTokenCount"] == USAGE.cached
        exec_command = {"type": "function", "name": "exec_command", "parameters": {
            "properties": {"cmd": {"type": "string"}}}}
        _, _, text, _ = post(server, "/v1/responses", {"model": "m", "stream": True, "tools": [exec_command],
                                                        "input": [{"role": "user", "content": "x"}]})
        done = sse(text)[-1]
        assert done["type"] == "response.completed"
        assert done["response"]["usage"]["input_tokens_details"]["cache_write_tokens"] == USAGE.cache_write
        assert json.loads(done["response"]["output"][0]["arguments"]) == {"cmd": "printf %s '41\n' > answer.txt"}


def test_aider_without_tools_gets_a_search_replace_block():
    with FakeModelServer() as server:
        _, _, text, _ = post(server, "/v1/messages", {"model": "m", "messages": [
            {"role": "user", "content": "x"}, {"role": "assistant", "content": "example"}]})
        assert "answer.txt\n```\n<<<<<<< SEARCH\n=======\n42\n>>>>>>> REPLACE" in json.loads(text)["content"][0]["text"]


@pytest.mark.parametrize(("mode", "status", "needle"), [
    ("401", 401, "authentication_error"), ("404", 404, "not_found_error"),
    ("429", 429, "rate_limit_error"), ("5xx", 500, "api_error")])
def test_error_modes_answer_the_apis_error(mode, status, needle):
    with FakeModelServer(mode) as server:
        got, headers, text, _ = post(server, "/v1/messages", {"model": "m", "messages": []})
        assert got == status and needle in text
        assert (headers.get("retry-after") == "1") == (status == 429)


def test_transient_fails_first_then_answers_and_cut_resets():
    with FakeModelServer("transient") as server:
        assert post(server, "/v1/messages", {"model": "m", "messages": []})[0] == 429
        assert post(server, "/v1/messages", {"model": "m", "messages": []})[0] == 200
    with FakeModelServer("cut") as server:
        status, _, text, error = post(server, "/v1/messages", {"model": "m", "stream": True, "messages": []})
        assert status == 200 and error in ("IncompleteRead", "ConnectionResetError"), text
        assert server.served_total().input == 0


def test_hang_answers_first_then_holds():
    with FakeModelServer("hang") as server:
        assert post(server, "/v1/messages", {"model": "m", "messages": []})[0] == 200
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            post(server, "/v1/messages", {"model": "m", "messages": []}, timeout=1)
        assert time.monotonic() - started >= 1


def _ws_frame(payload: bytes) -> bytes:
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    size = len(payload)
    head = bytes([0x81, 0x80 | size]) if size < 126 else bytes([0x81, 0xFE]) + struct.pack(">H", size)
    return head + mask + masked


def _ws_messages(sock, count):
    found, data = [], b""
    while len(found) < count:
        data += sock.recv(65536)
        while len(data) >= 2:
            size, start = data[1] & 0x7F, 2
            if size == 126:
                size, start = struct.unpack(">H", data[2:4])[0], 4
            if len(data) < start + size:
                break
            found.append(json.loads(data[start:start + size]))
            data = data[start + size:]
    return found


def test_responses_over_websocket_and_a_refused_upgrade():
    with FakeModelServer() as server:
        port = int(server.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            key = base64.b64encode(os.urandom(16)).decode()
            sock.sendall((f"GET /v1/responses HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                          f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                          "Sec-WebSocket-Version: 13\r\n\r\n").encode())
            head = b""
            while b"\r\n\r\n" not in head:
                head += sock.recv(1)
            assert head.startswith(b"HTTP/1.1 101")
            sock.sendall(_ws_frame(json.dumps({"type": "response.create", "generate": False}).encode()))
            assert [m["type"] for m in _ws_messages(sock, 2)] == ["response.created", "response.completed"]
            request = {"type": "response.create", "model": "m", "input": [], "tools": [
                {"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}}]}
            sock.sendall(_ws_frame(json.dumps(request).encode()))
            events = _ws_messages(sock, 4)
            assert events[-1]["type"] == "response.completed"
        assert [r.answer for r in server.model_requests()] == ["tool"]
    with FakeModelServer(websocket="refuse") as server:
        host, port = server.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("GET", "/v1/responses", headers={"Upgrade": "websocket", "Connection": "Upgrade"})
        assert conn.getresponse().status == 503


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown mode 'nope'"):
        FakeModelServer("nope")


def test_a_lone_bash_ends_on_mini_swe_agents_submit_and_a_bash_among_tools_on_a_message():
    bash = {"name": "bash", "input_schema": {"properties": {"command": {"type": "string"}}}}
    read = {"name": "read", "input_schema": {"properties": {"filePath": {"type": "string"}}}}
    after_edit = [{"role": "user", "content": "x"},
                  {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "bash",
                                                     "input": {"command": "edit"}}]},
                  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                                "content": "done"}]}]
    with FakeModelServer("solve") as server:
        answers = []
        for tools in ([bash], [read, bash]):  # mini-swe-agent's, opencode's
            _, _, text, _ = post(server, "/v1/messages", {"model": "m", "max_tokens": 10,
                                                          "tools": tools, "messages": after_edit})
            answers.append(json.loads(text)["content"][0])
    assert answers[0]["input"] == {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}
    assert answers[1] == {"type": "text", "text": "Done: the answer is written."}


def test_cline_and_copilot_shell_tools_get_their_own_shapes():
    """Cline's run_commands takes an array of commands; Copilot CLI's bash (with description
    and shellId) ends on a final message, mini-swe-agent's bash (command only) on its submit."""
    cline = shell_tool([("run_commands", {"properties": {"commands": {"type": "array"}}})])
    assert cline.arguments("printf 42 > a") == {"commands": ["printf 42 > a"]}
    copilot = shell_tool([("bash", {"properties": {"command": {"type": "string"},
                                                   "description": {}, "shellId": {}}})])
    mini = shell_tool([("bash", {"properties": {"command": {"type": "string"}}})])
    assert plan(Turn(copilot, 1, 1), fake_models.Edit()).text == FINAL_TEXT
    assert plan(Turn(mini, 1, 1), fake_models.Edit()).command == MINI_SUBMIT


def test_a_shell_tool_s_required_choice_is_filled_with_its_first_value():
    """OpenHands' terminal tool refuses a call without its required security_risk."""
    from fake_models.script import shell_tool
    schema = {"type": "object", "required": ["command", "security_risk"], "properties": {
        "command": {"type": "string"}, "timeout": {"type": "number"},
        "security_risk": {"type": "string", "enum": ["LOW", "MEDIUM", "HIGH"]}}}
    tool = shell_tool([("terminal", schema), ("file_editor", {})])
    assert tool.name == "terminal"
    assert tool.arguments("ls") == {"command": "ls", "security_risk": "LOW"}
    assert shell_tool([("Bash", {"properties": {"command": {"type": "string"}}})]).arguments(
        "ls") == {"command": "ls"}
