"""`network: api-only` for an agent: its sandbox gets a network namespace of its own (nothing but
its own loopback), where a relay listens on 127.0.0.1:RELAY_PORT and passes every connection to
this proxy over a unix socket in the run folder. The proxy, on the host, allows only CONNECT
(HTTPS) and absolute-URI HTTP requests to the hosts allowed: the preset's model API, the
agent's base_url and the entry's allow_hosts. Everything else, a git clone of the task's
upstream or a package index included, gets 403 or no route at all (docs/agents.md).

The agent learns the proxy from HTTPS_PROXY / HTTP_PROXY / ALL_PROXY (and their lower-case
forms); a tool that ignores them has no network.
"""

from __future__ import annotations

import os
import select
import socket
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

RELAY_PORT = 3128
SOCKET_NAME = "api-proxy.sock"
MAX_HEAD_BYTES = 64 * 1024
CONNECT_TIMEOUT = 15
HEAD_TIMEOUT = 30  # seconds to send a request head
IDLE_TIMEOUT = 900  # seconds a tunnel may carry nothing either way (a long model answer)
IDLE_CHECK = 10  # how often a waiting tunnel looks at the time
MAX_CONNECTIONS = 64  # at once, per agent run: each holds two threads
_TOO_MANY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
             b"Connection: close\r\n\r\n")
_FORBIDDEN = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
_HEAD_TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n"
                   b"Connection: close\r\n\r\n")
PRESET_API_HOSTS = {
    "claude-code": ("api.anthropic.com",),
    "codex": ("api.openai.com", "chatgpt.com"),
    "gemini": ("generativelanguage.googleapis.com", "oauth2.googleapis.com"),
    "aider": ("api.anthropic.com", "api.openai.com"),
    "goose": ("api.anthropic.com", "api.openai.com"),
    "mini-swe-agent": ("api.anthropic.com", "api.openai.com"),
    "openhands": ("api.anthropic.com", "api.openai.com"),
}

# Runs inside the agent's sandbox with the sandbox's interpreter (no ci_eval import: the package
# may sit under the hidden repo root): the relay, then the agent's command (the launcher
# brought the namespace's loopback up).
RELAY = r"""
import os, socket, subprocess, sys, threading
folder, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
dirfd = os.open(folder, os.O_PATH)
listener = socket.socket()
listener.bind(("127.0.0.1", port))
listener.listen(64)
def pump(src, dst):
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
def serve():
    while True:
        conn, _ = listener.accept()
        up = socket.socket(socket.AF_UNIX)
        try:
            up.connect(f"/proc/self/fd/{dirfd}/""" + SOCKET_NAME + r"""")
        except OSError:
            conn.close()
            continue
        for a, b in ((conn, up), (up, conn)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()
threading.Thread(target=serve, daemon=True).start()
sys.exit(subprocess.call(argv))
"""


def allowed_hosts(preset: str | None, base_url: str | None, listed) -> frozenset[str]:
    """host or host:port entries the proxy lets through (lower-case)."""
    hosts = list(PRESET_API_HOSTS.get(preset or "", ()))
    if base_url:
        parts = urlsplit(base_url)
        if parts.hostname:
            hosts.append(f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname)
    hosts += list(listed)
    return frozenset(h.lower() for h in hosts)


def host_allowed(allowed: frozenset[str], host: str, port: int) -> bool:
    host = host.lower().strip("[]")
    return host in allowed or f"{host}:{port}" in allowed


def relay_argv(run_dir: Path, command: list[str]) -> list[str]:
    return [sys.executable, "-I", "-S", "-c", RELAY, str(run_dir), str(RELAY_PORT), *command]


def proxy_env() -> dict[str, str]:
    url = f"http://127.0.0.1:{RELAY_PORT}"
    names = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
    return {**{n: url for n in names}, **{n.lower(): url for n in names},
            "NO_PROXY": "", "no_proxy": ""}


class ApiProxy:
    """The host side: a unix socket in `folder`, served by daemon threads until close(). At
    most MAX_CONNECTIONS at once (more get 503), a head within HEAD_TIMEOUT and MAX_HEAD_BYTES
    (else 431 or closed), a tunnel closed after IDLE_TIMEOUT without a byte: whatever the agent
    sends, the harness's threads and memory stay bounded, and nothing it sends is a traceback."""

    def __init__(self, folder: Path, allowed: frozenset[str]):
        self.allowed = allowed
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._dirfd = os.open(folder, os.O_PATH)
        self._server = socket.socket(socket.AF_UNIX)
        self._server.bind(f"/proc/self/fd/{self._dirfd}/{SOCKET_NAME}")  # any length of path
        self._server.listen(64)
        self._closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self._closed = True
        try:
            self._server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._server.close()
        os.close(self._dirfd)

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                _refuse(conn, _TOO_MANY)
                continue
            try:
                threading.Thread(target=self._connection, args=(conn,), daemon=True).start()
            except RuntimeError:  # no thread to be had: refused like any other excess
                self._slots.release()
                _refuse(conn, _TOO_MANY)

    def _connection(self, conn: socket.socket) -> None:
        try:
            upstream = self._open(conn)
            if upstream is not None:
                active = [time.monotonic()]  # the last byte either way
                other = threading.Thread(target=_pump, args=(upstream, conn, active),
                                         daemon=True)
                other.start()
                _pump(conn, upstream, active)
                other.join()
        except Exception:  # noqa: BLE001, S110 - nothing an agent sends is a traceback of ours
            pass
        finally:
            conn.close()
            self._slots.release()

    def _open(self, conn: socket.socket) -> socket.socket | None:
        """The upstream connection for the request whose head `conn` sends, with that request
        passed on; None when it is refused (the answer already sent)."""
        conn.settimeout(HEAD_TIMEOUT)
        try:
            head = _read_head(conn)
        except OSError:
            return None
        if head is None:
            _refuse(conn, _HEAD_TOO_LARGE)
            return None
        target = _target(head)
        if target is None or not host_allowed(self.allowed, *target):
            _refuse(conn, _FORBIDDEN)
            return None
        try:
            upstream = socket.create_connection(target, timeout=CONNECT_TIMEOUT)
        except OSError:
            return None
        upstream.settimeout(None)
        conn.settimeout(None)
        try:
            if head.split(b" ", 1)[0].upper() == b"CONNECT":
                rest = head.split(b"\r\n\r\n", 1)[1]
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:
                upstream.sendall(_origin_form(head))
        except OSError:
            upstream.close()
            return None
        return upstream


def _refuse(conn: socket.socket, answer: bytes) -> None:
    try:
        conn.settimeout(1)
        conn.sendall(answer)
    except OSError:
        pass
    finally:
        conn.close()


def _read_head(conn: socket.socket) -> bytes | None:
    """The request head (through its blank line, and whatever came after it in the same
    reads); None when MAX_HEAD_BYTES came without a blank line. b"" when the peer closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) >= MAX_HEAD_BYTES:
            return None
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        data += chunk
    return data


def _target(head: bytes) -> tuple[str, int] | None:
    """(host, port) of a proxy request's first line: CONNECT host:port, or an absolute URI."""
    if b"\r\n\r\n" not in head:
        return None
    try:
        method, uri, _ = head.split(b"\r\n", 1)[0].decode("ascii").split(" ", 2)
    except (UnicodeDecodeError, ValueError):
        return None
    if method.upper() == "CONNECT":
        host, _, port = uri.rpartition(":")
        return (host, int(port)) if host and port.isdigit() else None
    parts = urlsplit(uri)
    if parts.scheme != "http" or not parts.hostname:
        return None
    try:
        return parts.hostname, parts.port or 80
    except ValueError:
        return None


def _origin_form(head: bytes) -> bytes:
    """The request with its absolute URI made a path (what an origin server expects)."""
    line, rest = head.split(b"\r\n", 1)
    method, uri, version = line.split(b" ", 2)
    parts = urlsplit(uri.decode("ascii"))
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return b" ".join([method, path.encode("ascii"), version]) + b"\r\n" + rest


def _pump(src: socket.socket, dst: socket.socket, active: list[float] | None = None) -> None:
    """src's bytes to dst until either end closes or, with `active` (when a byte last went
    either way), nothing went either way for IDLE_TIMEOUT; then both are shut down."""
    waiting = select.poll()
    waiting.register(src, select.POLLIN)
    try:
        while True:
            if active is not None and not waiting.poll(IDLE_CHECK * 1000):
                if time.monotonic() - active[0] < IDLE_TIMEOUT:
                    continue
                break
            data = src.recv(65536)
            if not data:
                break
            if active is not None:
                active[0] = time.monotonic()
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
