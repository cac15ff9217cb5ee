"""Issue #31, item 10: the api-only proxy (ci_eval/run/agent/api_proxy.py) under a hostile
agent, on its real unix socket: a 64 KiB head with no blank line once left a traceback per
connection on the harness's stderr, and 1,520 idle connections made 1,506 threads. Heads,
connections at once and idle time are bounded; an allowed request still goes through, and
the slots of closed connections come back."""

from __future__ import annotations

import http.server
import socket
import threading
import time

import pytest

from tests.test_network_api_only import Model

from ci_eval.run.agent import api_proxy
from ci_eval.run.agent.api_proxy import SOCKET_NAME, ApiProxy


@pytest.fixture
def model():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture
def proxy(tmp_path, model):
    made = ApiProxy(tmp_path, frozenset({f"127.0.0.1:{model}"}))
    made.path = str(tmp_path / SOCKET_NAME)
    made.model = model
    yield made
    made.close()


def _connect(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(10)
    sock.connect(path)
    return sock


def _answer(sock: socket.socket) -> bytes:
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except OSError:
        pass
    return data


def _ask_model(proxy) -> bytes:
    sock = _connect(proxy.path)
    sock.sendall(f"GET http://127.0.0.1:{proxy.model}/v1 HTTP/1.0\r\n\r\n".encode())
    return _answer(sock)


def test_an_allowed_request_goes_through(proxy):
    assert _ask_model(proxy).endswith(b"hi from the model")


def test_a_head_without_a_blank_line_is_431_not_a_traceback(proxy, capfd):
    for _ in range(20):
        sock = _connect(proxy.path)
        try:
            sock.sendall(b"GET http://x/ HTTP/1.1\r\nX: " + b"a" * (70 * 1024))
        except OSError:
            pass  # the proxy may answer and close before all of it is sent
        assert _answer(sock).startswith(b"HTTP/1.1 431 ")
        sock.close()
    assert _ask_model(proxy).endswith(b"hi from the model")
    assert "Traceback" not in capfd.readouterr().err


def test_garbage_heads_get_403_and_no_traceback(proxy, capfd):
    for head in (b"\xff\xfe\r\n\r\n", b"CONNECT nohost HTTP/1.1\r\n\r\n", b"GET\r\n\r\n",
                 b"GET http://127.0.0.1:99999999/ HTTP/1.1\r\n\r\n", b"\r\n\r\n"):
        sock = _connect(proxy.path)
        sock.sendall(head)
        assert _answer(sock).startswith(b"HTTP/1.1 403 "), head
    assert "Traceback" not in capfd.readouterr().err


def test_idle_connections_are_bounded_and_their_slots_come_back(proxy, monkeypatch):
    before = threading.active_count()
    idle = [_connect(proxy.path) for _ in range(api_proxy.MAX_CONNECTIONS)]
    time.sleep(0.5)
    for _ in range(300):  # one after another: a unix socket's backlog refuses a burst itself
        sock = _connect(proxy.path)
        assert _answer(sock).startswith(b"HTTP/1.1 503 ")
        sock.close()
    assert threading.active_count() - before <= api_proxy.MAX_CONNECTIONS + 2
    for sock in idle:
        sock.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and threading.active_count() - before > 2:
        time.sleep(0.05)
    assert _ask_model(proxy).endswith(b"hi from the model")


def test_a_silent_head_is_dropped_after_the_head_timeout(tmp_path, model, monkeypatch):
    monkeypatch.setattr(api_proxy, "HEAD_TIMEOUT", 0.5)
    made = ApiProxy(tmp_path, frozenset({f"127.0.0.1:{model}"}))
    try:
        sock = _connect(str(tmp_path / SOCKET_NAME))
        started = time.monotonic()
        assert _answer(sock) == b""
        assert time.monotonic() - started < 5
    finally:
        made.close()


def test_a_tunnel_idle_both_ways_is_closed(tmp_path, monkeypatch):
    monkeypatch.setattr(api_proxy, "IDLE_TIMEOUT", 0.5)
    monkeypatch.setattr(api_proxy, "IDLE_CHECK", 0.1)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    made = ApiProxy(tmp_path, frozenset({f"127.0.0.1:{port}"}))
    try:
        sock = _connect(str(tmp_path / SOCKET_NAME))
        sock.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        upstream, _ = listener.accept()
        started = time.monotonic()
        assert _answer(sock) == b"HTTP/1.1 200 Connection established\r\n\r\n"
        assert time.monotonic() - started < 5
        upstream.close()
    finally:
        made.close()
        listener.close()
