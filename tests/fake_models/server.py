"""The loopback HTTP server behind fake_models (see the package docstring for its API).

One thread per connection (HTTP/1.1, keep-alive); streams are written chunked, so a cut stream
is a connection closed before the terminating chunk (what a client sees as "other side closed"),
not a clean end of a close-delimited body.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import socket
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

from fake_models.script import Edit, plan
from fake_models.wire import API_BY_FAMILY, USAGE, Usage

MODES = ("solve", "wrong", "401", "404", "429", "5xx", "cut", "cut_stream", "transient", "hang")
ERROR_STATUS = {"401": 401, "404": 404, "429": 429, "5xx": 500}
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
HANG_CAP_SECONDS = 300.0
MAX_BODY = 32 * 1024 * 1024


@dataclass
class Received:
    """One request as the fake received it: `family` is the API it was routed to (anthropic,
    responses, chat, gemini; None for anything else), `body` the parsed JSON (None if not
    JSON), `answer` what the fake did (a Step kind, an HTTP status, "cut", "hang", ...)."""

    method: str
    path: str
    headers: dict
    body: object
    family: str | None
    websocket: bool = False
    answer: str = ""


@dataclass
class Settings:
    mode: str = "solve"
    edit: Edit = field(default_factory=Edit)
    wrong_edit: Edit = field(default_factory=lambda: Edit(content="41\n"))
    websocket: str = "accept"  # "accept" | "refuse" (503 to the upgrade: clients fall back to HTTP)
    retry_after: int = 1  # seconds, on 429 answers
    failing_requests: int = 1  # transient: how many model requests fail before it recovers
    answered_before_hang: int = 1  # hang: model requests answered before the ones that hang
    # solve: the right edit only when this text is in the request (a rule of the repo's
    # CLAUDE.md / AGENTS.md reached the model), else the wrong one; None: always the right one
    marker: str | None = None
    # solve: the edit requests (a first turn with a shell tool: where a run's edit is decided),
    # numbered from 1 in arrival order over the server's life, that get the wrong edit anyway
    wrong_edits: frozenset[int] = frozenset()


def route(method: str, path: str) -> tuple[str | None, str]:
    """(API family, what is asked: "generate" | "count" | "models" | "") for a request."""
    if path.startswith("/v1/messages"):
        return "anthropic", "count" if path.startswith("/v1/messages/count_tokens") else "generate"
    if path.startswith("/v1/responses"):
        return "responses", "generate"
    if path.startswith(("/v1/chat/completions", "/chat/completions")):
        return "chat", "generate"
    if "/models/" in path and ":" in path.rsplit("/", 1)[-1]:
        action = path.rsplit(":", 1)[-1]
        return "gemini", "count" if action == "countTokens" else "generate"
    if method == "GET" and path.rstrip("/").endswith("/models"):
        return None, "models"
    return None, ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        self._serve()

    def do_POST(self):
        self._serve()

    # --- dispatch ---------------------------------------------------------------------------

    def _serve(self):
        path = urlsplit(self.path).path
        family, asked = route(self.command, path)
        upgrade = self.headers.get("Upgrade", "").lower() == "websocket"
        body = self._body()
        received = self.server.fake.record(Received(self.command, self.path, dict(self.headers),
                                                     body, family, upgrade))
        if upgrade and family == "responses":
            return self._websocket(received)
        if asked == "models":
            received.answer = "models"
            return self._json(200, {"object": "list", "data": [], "models": []})
        if family is None:
            received.answer = "404"
            return self._json(404, {"error": {"message": f"no route for {path}"}})
        if asked == "count":
            received.answer = "count"
            return self._json(200, {"input_tokens": 100, "totalTokens": 100})
        body = body if isinstance(body, dict) else {}
        model = body.get("model") or unquote(path.rsplit("/", 1)[-1].split(":")[0])
        streamed = body.get("stream") is True or "streamGenerateContent" in path
        self._generate(received, family, body, model, streamed)

    def _generate(self, received, family, body, model, streamed):
        fake, api = self.server.fake, API_BY_FAMILY[family]
        decision = fake.decide(streamed)
        received.answer = decision
        if decision.isdigit():
            return self._error(api, int(decision), model)
        if decision == "hang":
            return fake.hang()
        turn = api.turn(body)
        step = plan(turn, fake.edit_for(body, turn))
        ident = fake.ident()
        if not streamed:
            data = json.dumps(api.message(step, turn, model, ident)).encode()
            if decision == "cut":
                return self._cut_body(data)
            fake.served_usage(received, step.kind)
            return self._json(200, data)
        events = api.events(step, turn, model, ident)
        if decision == "cut":
            return self._sse(events[:1], family, cut=True)
        # Counted before the stream's terminator: a client that has read to the end then finds it counted.
        self._sse(events, family, cut=False, whole=lambda: fake.served_usage(received, step.kind))

    # --- HTTP pieces ------------------------------------------------------------------------

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        else:
            length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
            data = self.rfile.read(length) if length else b""
        try:
            return json.loads(data) if data else None
        except ValueError:
            return None

    def _json(self, status: int, payload, headers: dict | None = None):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, api, status: int, model: str):
        headers = {"retry-after": str(self.server.fake.settings.retry_after)} if status == 429 else {}
        self._json(status, api.error(status, model), headers)

    def _cut_body(self, data: bytes):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self._drop()

    def _sse(self, events, family: str, *, cut: bool, whole=None):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for name, event in events:
            text = (f"event: {name}\n" if name else "") + f"data: {json.dumps(event)}\n\n"
            self._chunk(text.encode())
        if cut:
            return self._drop()
        if whole:
            whole()
        if family == "chat":
            self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _drop(self):
        """End the connection abruptly (RST rather than a clean close)."""
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    # --- WebSocket (codex's Responses transport) ----------------------------------------------

    def _websocket(self, received: Received):
        fake = self.server.fake
        if fake.settings.websocket == "refuse":
            received.answer = "503"
            return self._json(503, {"error": {"message": "websockets are not supported here"}})
        if fake.settings.mode in ERROR_STATUS or fake.settings.mode == "transient":
            # An upgrade has no body: error modes (and a transient failure) answer it in HTTP.
            decision = fake.decide(True)
            if decision.isdigit():
                received.answer = decision
                return self._error(API_BY_FAMILY["responses"], int(decision), "the requested model")
        accept = base64.b64encode(hashlib.sha1(
            (self.headers.get("Sec-WebSocket-Key", "") + WS_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        received.answer = "101"
        self.close_connection = True
        while (message := self._ws_read()) is not None:
            try:
                request = json.loads(message)
            except ValueError:
                continue
            if not isinstance(request, dict) or request.get("type") != "response.create":
                continue
            body = request.get("response") if isinstance(request.get("response"), dict) else request
            if not self._ws_generate(body):
                return

    def _ws_generate(self, body: dict) -> bool:
        fake, api = self.server.fake, API_BY_FAMILY["responses"]
        received = fake.record(Received("WS", self.path, {}, body, "responses", True))
        if body.get("generate") is False:  # codex's prewarm: a response without output
            received.answer = "prewarm"
            done = {"id": f"resp_{fake.ident()}", "object": "response", "status": "completed",
                    "model": body.get("model") or "", "output": [], "usage": None}
            self._ws_send({"type": "response.created", "response": done})
            self._ws_send({"type": "response.completed", "response": done})
            return True
        decision = fake.decide(True)
        received.answer = decision
        model = body.get("model") or ""
        if decision.isdigit():
            error = api.error(int(decision), model)["error"]
            self._ws_send({"type": "error", "status": int(decision), "error": error})
            return True
        if decision == "hang":
            fake.hang()
            return False
        turn = api.turn(body)
        step = plan(turn, fake.edit_for(body, turn))
        events = api.events(step, turn, model, fake.ident())
        if decision == "cut":
            self._ws_send(events[0][1])
            self._drop()
            return False
        for _name, event in events[:-1]:
            self._ws_send(event)
        fake.served_usage(received, step.kind)  # before the last event, as _sse counts before its end
        self._ws_send(events[-1][1])
        return True

    def _ws_read(self) -> str | None:
        """The next text message (fragments joined; pings answered), None when closed."""
        parts = []
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return None
            fin, opcode = head[0] & 0x80, head[0] & 0x0F
            length = head[1] & 0x7F
            if length == 126:
                length = struct.unpack(">H", self.rfile.read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            if opcode == 8:
                return None
            if opcode == 9:
                self._ws_frame(0xA, payload)
                continue
            if opcode in (0, 1, 2):
                parts.append(payload)
                if fin:
                    return b"".join(parts).decode("utf-8", errors="replace")

    def _ws_send(self, event: dict):
        self._ws_frame(0x1, json.dumps(event).encode())

    def _ws_frame(self, opcode: int, payload: bytes):
        size = len(payload)
        if size < 126:
            head = bytes([0x80 | opcode, size])
        elif size < 65536:
            head = bytes([0x80 | opcode, 126]) + struct.pack(">H", size)
        else:
            head = bytes([0x80 | opcode, 127]) + struct.pack(">Q", size)
        self.wfile.write(head + payload)
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeModelServer

    def handle_error(self, request, client_address):
        """A client that went away (killed at its timeout, or after a cut) is no error here."""


class FakeModelServer:
    """A fake model API on 127.0.0.1 (see the package docstring)."""

    def __init__(self, mode: str = "solve", **settings):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
        self.settings = Settings(mode=mode, **settings)
        self.requests: list[Received] = []
        self.served: list[Usage] = []
        self._lock = threading.Lock()
        self._model_requests = 0
        self.edit_requests = 0  # how many requests decided a run's edit so far (wrong_edits)
        self._fell_back = False  # cut_stream: a whole (not streamed) request was seen
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- life ---------------------------------------------------------------------------------

    def start(self) -> FakeModelServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        name="fake-model")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    # --- what it received and served ----------------------------------------------------------

    def model_requests(self) -> list[Received]:
        """The requests that asked for a model answer (not token counts, model lists, ...)."""
        with self._lock:
            return [r for r in self.requests if r.family and r.answer not in ("count", "101", "prewarm")]

    def served_total(self) -> Usage:
        """The usage of every answer served whole, summed."""
        with self._lock:
            return Usage(*(sum(getattr(u, name) for u in self.served)
                           for name in ("input", "cached", "cache_write", "output")))

    # --- used by the handler ------------------------------------------------------------------

    def record(self, received: Received) -> Received:
        with self._lock:
            self.requests.append(received)
        return received

    def served_usage(self, received: Received, kind: str) -> None:
        with self._lock:
            self.served.append(USAGE)
        received.answer = kind

    def ident(self) -> str:
        return f"fake{next(self._ids):04d}"

    def edit_for(self, body, turn) -> Edit:
        """The edit the script makes for this request (see Settings.marker, .wrong_edits)."""
        settings = self.settings
        if turn.shell is not None and turn.tool_results == 0:
            with self._lock:
                self.edit_requests += 1
                if self.edit_requests in settings.wrong_edits:
                    return settings.wrong_edit
        if settings.mode == "wrong":
            return settings.wrong_edit
        if settings.marker is not None and settings.marker not in json.dumps(body):
            return settings.wrong_edit
        return settings.edit

    def decide(self, streamed: bool) -> str:
        """What to do with the next model request: "ok", "cut", "hang" or an HTTP status."""
        settings = self.settings
        with self._lock:
            self._model_requests += 1
            number = self._model_requests
        if settings.mode in ERROR_STATUS:
            return str(ERROR_STATUS[settings.mode])
        if settings.mode == "transient" and number <= settings.failing_requests:
            return "429"
        if settings.mode == "hang" and number > settings.answered_before_hang:
            return "hang"
        if settings.mode == "cut_stream" and not streamed:
            self._fell_back = True
        if settings.mode == "cut" or (settings.mode == "cut_stream" and streamed
                                      and not self._fell_back):
            return "cut"
        return "ok"

    def hang(self) -> None:
        self._stopping.wait(HANG_CAP_SECONDS)
