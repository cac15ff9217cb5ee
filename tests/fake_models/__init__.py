"""Loopback fakes of the model APIs the agent CLIs talk to, for tests that run the real CLIs.

One server answers all four wire formats, routed by path:

- Anthropic Messages: POST /v1/messages (with or without ?beta=true), streamed (SSE) or whole;
  /v1/messages/count_tokens;
- OpenAI Responses: POST /v1/responses (SSE), and the WebSocket transport codex tries first
  (GET /v1/responses with Upgrade: websocket, then `response.create` messages);
- OpenAI chat completions: POST /v1/chat/completions (whole or SSE);
- Gemini: POST /v1beta/models/MODEL:generateContent | :streamGenerateContent (?alt=sse) |
  :countTokens.

Every answer follows one script (fake_models.script): while the conversation holds no tool
result, a call of the shell tool the request offers (Claude Code's Bash, codex's exec_command,
gemini-cli's run_shell_command, mini-swe-agent's bash) that writes the edit into the workspace;
then a final message (mini-swe-agent: its submit command). A request without tools (aider) gets
the edit as a SEARCH/REPLACE block. Usage is fixed per answer (fake_models.wire.USAGE: input 1000
of which 200 cached and 100 cache writes, output 50), in each API's own fields.

    import fake_models    # tests/ is on sys.path in the test suite

    with fake_models.FakeModelServer("solve") as server:      # 127.0.0.1, a free port
        server.url                           # http://127.0.0.1:PORT (base URL, no /v1)
        ... point the CLI at it: ANTHROPIC_BASE_URL=server.url,
            codex -c openai_base_url=server.url + "/v1", GOOGLE_GEMINI_BASE_URL=server.url,
            OPENAI_API_BASE=server.url + "/v1" for litellm, ANTHROPIC_API_BASE=server.url ...
        server.requests                      # [Received(method, path, headers, body, family,
                                             #           websocket, answer)], in order
        server.model_requests()              # those that asked for an answer
        server.served_total()                # Usage summed over the answers served whole

Modes (the first argument; `MODES` lists them):

    solve       the scripted edit (answer.txt <- "42\\n"; Edit(path, content) via edit=)
    wrong       the same script with the wrong content (wrong_edit=, default "41\\n")
    401 404 429 5xx   every model request answers that status with the API's own error body
                (429 with retry-after: retry_after=, default 1 s; 5xx is 500)
    cut         every answer is cut: a stream after its first event, a whole body halfway,
                then the connection is reset
    cut_stream  streamed answers are cut until the client asks for a whole answer; from then
                on streams go through too (Claude Code falls back to a request without
                streaming after a cut stream, and recovers)
    transient   the first failing_requests= model requests (default 1) answer 429, then solve
    hang        the first answered_before_hang= requests (default 1) are answered, the rest
                never (until the server stops), so the tool's timeout is what ends the run

marker="TEXT" (with solve): the right edit only when TEXT is in the request's body (a rule of the
repo's CLAUDE.md or AGENTS.md reached the model), else the wrong one: a test that the agent's
harness arrived. wrong_edits={N, ...} (with solve): the Nth request that decides a run's edit
(counted over the server's life, `fake.edit_requests` so far) gets the wrong one anyway: a run
that is unlucky once. websocket="refuse" answers 503 to the WebSocket upgrade (a gateway without WebSockets; codex
falls back to HTTP POST). Nothing here reaches the network: the server binds 127.0.0.1 only.
"""

from fake_models.script import Edit
from fake_models.server import MODES, FakeModelServer, Received
from fake_models.wire import USAGE, Usage

__all__ = ["MODES", "USAGE", "Edit", "FakeModelServer", "Received", "Usage"]
