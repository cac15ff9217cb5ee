"""Sandboxed commands without a program start each: the harness side of the sandbox launcher.

A sandbox needs a few mount(2) calls that no shell tool makes, so each sandboxed command used to
start `setpriv` + `unshare` + a Python for the mounts (+ a second Python for the checks
wrapper): 25-45 ms of CPU per command, the largest part of the harness's cost per run. Instead,
one launcher interpreter per harness process and kind (_launcher.py) forks each command into its
namespaces: an agent is exec'd there, checks.py runs in the forked process itself. What the
command sees is the same view (`_sandbox.isolate`); see _launcher.py for how it is made.

Two launchers, so that the checks' one (whose forks run checks.py in-process and so carry its
memory) never holds an agent's environment: AGENTS (agents and probes), CHECKS (ci_eval.checks
imported up front, shared by every forked checks run).

    launched = AGENTS.start(Request(...), env=env, cwd=cwd, fds=[output_w, status_w])
    launched.pid      # its process group: kill_group(pid) kills the command
    launched.wait()   # the exit code as subprocess gives it, None when the launcher failed
    launched.error    # why the launcher could not start or follow it ("" when it did)
"""

from __future__ import annotations

import itertools
import json
import os
import site
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import ci_eval

BOOT = ("import json, sys\n"
        "config = json.loads(sys.argv[2])\n"
        "sys.path[:0] = config['path']\n"
        "from ci_eval.run import _launcher\n"
        "_launcher.serve(int(sys.argv[1]), config)\n")
START_TIMEOUT = 60.0  # for the launcher to answer that a command started
SOCKET_BUFFER = 4 * 1024 * 1024  # a request (argv, environment) is one message
# The launcher's last argument: room in its argument area for what a forked checks run shows as
# its command line (`ci-eval-checks /path/to/checks.py`, see _launcher._set_command_line).
TITLE_ROOM = "ci-eval-sandbox-launcher" + " " * 1000


@dataclass(frozen=True)
class Request:
    """What to start: `argv` (mode exec) or `checks` (mode checks: that checks.py run in the
    forked process, with `sys_path`), in the view the _sandbox.py `options` describe, in new
    mount + PID namespaces, a user namespace (`user`) and a network namespace (`net`)."""

    argv: tuple[str, ...]
    options: tuple[str, ...]
    user: bool
    net: bool
    mode: str = "exec"
    checks: str = ""
    sys_path: tuple[str, ...] = ()


class Launched:
    """A command the launcher started (Popen's pid, wait() and returncode)."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.returncode: int | None = None
        self.error = ""
        self._started = threading.Event()
        self._done = threading.Event()

    def wait(self) -> int | None:
        self._done.wait()
        return self.returncode

    def _fail(self, message: str) -> None:
        self.error = self.error or message
        self._started.set()
        self._done.set()


@dataclass
class Launcher:
    preload: tuple[str, ...] = ()
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _sock: socket.socket | None = None
    _process: subprocess.Popen | None = None
    _pending: dict = field(default_factory=dict)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def start(self, request: Request, *, env: dict, cwd: Path, fds: list[int]) -> Launched:
        """Start `request` with stdout+stderr to fds[0] and fds[1:] passed along (status pipe,
        then the verdict pipe). The caller closes its copies of fds afterwards."""
        launched = Launched()
        message = json.dumps({
            "mode": request.mode, "argv": list(request.argv), "env": env, "cwd": str(cwd),
            "sandbox": list(request.options), "user": request.user, "net": request.net,
            "checks": request.checks, "sys_path": list(request.sys_path),
        })
        with self._lock:
            try:
                sock = self._running()
                request_id = next(self._ids)
                self._pending[request_id] = launched
                data = message[:-1] + f', "id": {request_id}}}'
                socket.send_fds(sock, [data.encode()], fds)
            except OSError as exc:
                launched._fail(f"sandbox launcher: {exc}")
                return launched
        if not launched._started.wait(START_TIMEOUT):
            launched._fail("sandbox launcher: no answer")
        return launched

    def _running(self) -> socket.socket:
        if self._sock is not None:
            return self._sock
        if self._process is not None:
            self._process.poll()  # reap one that died
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for sock in (ours, theirs):
            for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
                try:
                    sock.setsockopt(socket.SOL_SOCKET, option, SOCKET_BUFFER)
                except OSError:
                    pass
        config = {"path": [str(Path(ci_eval.__file__).resolve().parents[1])],
                  "preload": list(self.preload)}
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", BOOT, str(theirs.fileno()), json.dumps(config),
                 TITLE_ROOM],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, start_new_session=True, env={"PATH": os.defpath})
        finally:
            theirs.close()
        self._sock = ours
        threading.Thread(target=self._read, args=(ours,), daemon=True,
                         name="sandbox-launcher").start()
        return ours

    def _read(self, sock: socket.socket) -> None:
        while True:
            try:
                data = sock.recv(65536)
                reply = json.loads(data) if data else None
            except (OSError, ValueError):
                reply = None
            if reply is None:
                break
            launched = self._pending.get(reply.get("id"))
            if launched is None:
                continue
            if "error" in reply:
                self._pending.pop(reply["id"], None)
                launched._fail(f"sandbox launcher: {reply['error']}")
            elif "pid" in reply:
                launched.pid = reply["pid"]
                launched._started.set()
            elif "exit" in reply:
                self._pending.pop(reply["id"], None)
                launched.returncode = reply["exit"]
                launched._started.set()
                launched._done.set()
        with self._lock:  # the launcher is gone: what it ran is gone with it
            if self._sock is sock:
                self._sock = None
            pending, self._pending = self._pending, {}
        sock.close()
        for launched in pending.values():
            launched._fail("the sandbox launcher ended")


AGENTS = Launcher()
CHECKS = Launcher(preload=("ci_eval.checks", "traceback"))


def checks_sys_path() -> tuple[str, ...]:
    """sys.path as `python -I` starts with it, without running any site-packages code: the
    standard library, the site-packages folders and the plain folder lines of their .pth files
    (their `import` lines, such as an editable install's finder, are skipped), and the folder
    holding ci_eval itself (which an editable install reaches only through such a finder)."""
    # sys.path[0] is the harness's own script folder (or ''), unless it runs with -I or -P
    entries = sys.path if sys.flags.isolated or getattr(sys.flags, "safe_path", False) \
        else sys.path[1:]
    found = [p for p in entries if p and _is_stdlib(p)]
    for folder in site.getsitepackages():
        if not os.path.isdir(folder):
            continue
        found.append(folder)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".pth"):
                found += _pth_folders(os.path.join(folder, name), folder)
    ours = str(Path(ci_eval.__file__).resolve().parents[1])
    found.append(ours)
    return tuple(dict.fromkeys(found))


def _is_stdlib(path: str) -> bool:
    stdlib = {Path(sys.base_prefix).resolve(), Path(sys.base_exec_prefix).resolve()}
    resolved = Path(path).resolve()
    return (any(resolved.is_relative_to(prefix) for prefix in stdlib)
            and not {"site-packages", "dist-packages"} & set(resolved.parts))


def _pth_folders(pth: str, folder: str) -> list[str]:
    found = []
    try:
        with open(pth, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                line = line.rstrip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                path = os.path.join(folder, line)
                if os.path.isdir(path):
                    found.append(os.path.abspath(path))
    except OSError:
        pass
    return found
