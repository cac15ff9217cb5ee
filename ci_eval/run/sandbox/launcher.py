"""Sandboxed commands without a program start each: the harness side of the sandbox launcher.

A sandbox needs a few mount(2) calls that no shell tool makes, so each sandboxed command used to
start `setpriv` + `unshare` + a Python for the mounts (+ a second Python for the checks
wrapper): 25-45 ms of CPU per command, the largest part of the harness's cost per run. Instead,
one launcher interpreter per harness process and kind (launcher_program.py) forks each command into its
namespaces and execs it there: an agent, or a fresh `python -I -S -B -c BOOT` (checks_program) for checks.py.
What the command sees is the same view (`sandbox_program.isolate`); see launcher_program.py for
how it is made.

Two launchers, so that the checks' one never holds an agent's environment: AGENTS (agents and
probes), CHECKS.

    launched = AGENTS.start(Request(...), env=env, cwd=cwd, fds=[output_w, status_w])
    launched.pid      # its process group: kill_group(pid) kills the command; None: not started
    launched.wait()   # the exit code as subprocess gives it (-9 when killed), None on failure
    launched.error    # why the launcher could not start or follow it ("" when it did)
"""

from __future__ import annotations

import json
import os
import select
import site
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import ci_eval
from ci_eval.run.sandbox import launcher_boot_program
from ci_eval.run.sandbox.launcher_program import ResultKind, read_result
from ci_eval.run.sandbox.program_text import program_text
from ci_eval.run.sandbox.sandbox_program import View

LIVENESS_SECONDS = 1.0  # how often a start that takes long checks the launcher lives
SOCKET_BUFFER = 4 * 1024 * 1024  # a request (argv, environment) is one message
TITLE = "ci-eval-sandbox-launcher"  # its last argument: what ps shows it as


@dataclass(frozen=True)
class Request:
    """What to start: `argv` (mode exec) or `checks` (mode checks: that checks.py, run by a
    fresh `python -I -S -B -c BOOT` of checks_program with `sys_path`), in `view` (what the sandbox shows), in new
    mount + PID namespaces, a user namespace (`user`) and a network namespace (`net`)."""

    argv: tuple[str, ...]
    view: View
    user: bool
    net: bool
    mode: str = "exec"
    checks: str = ""
    sys_path: tuple[str, ...] = ()
    gated: bool = False  # a gate pipe's read end follows: build the view, then wait for "g"
    held: tuple[str, ...] = ()  # `--writable` paths bound from descriptors passed last, in order
    loopback: bool = False  # net: its loopback brought up (network: api-only's relay listens)


class LaunchedProcess:
    """A command the launcher started (Popen's pid, wait() and returncode), followed through its
    result pipe, which only the launcher holds (see launcher_program.py)."""

    def __init__(self, result_fd: int, launcher: "Launcher") -> None:
        self.pid: int | None = None
        self.returncode: int | None = None
        self.error = ""
        self._fd = result_fd
        self._buffer = b""
        self._launcher = launcher
        self._done = False
        self._lock = threading.Lock()

    def _message(self, timeout: float | None) -> tuple[ResultKind, int | str] | None:
        """The next message; None at EOF (or a line that is not one); TimeoutError when
        `timeout` passed first."""
        while b"\n" not in self._buffer:
            if timeout is not None and not select.select([self._fd], [], [], timeout)[0]:
                raise TimeoutError
            chunk = os.read(self._fd, 4096)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return read_result(line.decode(errors="replace"))

    def started(self) -> None:
        """Wait until the launcher said the command's pid (or the start failed: no pid, `error`)."""
        if self.pid is not None or self._done:
            return
        while True:
            try:
                message = self._message(LIVENESS_SECONDS)
                break
            except TimeoutError:
                if not self._launcher.alive():
                    message = None
                    break
        match message:
            case (ResultKind.PID, int(pid)):
                self.pid = pid
            case (ResultKind.ERROR, str(error)):
                self._finish(error=error)
            case _:
                self._finish(error="the sandbox launcher ended")

    def wait(self) -> int | None:
        with self._lock:
            if not self._done:
                message = self._message(None)
                if message is not None and message[0] is ResultKind.EXIT:
                    self._finish(returncode=int(message[1]))
                else:  # the launcher tells every end, a kill's too: EOF is its own end
                    self._finish(error="the sandbox launcher ended")
        return self.returncode

    def _finish(self, *, returncode: int | None = None, error: str = "") -> None:
        self.returncode = returncode
        self.error = f"sandbox launcher: {error}" if error else ""
        self._done = True
        os.close(self._fd)


@dataclass
class Launcher:
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _sock: socket.socket | None = None
    _process: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        """The launcher's pid while it runs (benchmarks read its CPU time)."""
        process = self._process
        return process.pid if process is not None and self.alive() else None

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, request: Request, *, env: dict, cwd: Path, fds: list[int],
              wait: bool = True) -> LaunchedProcess:
        """Start `request` with stdout+stderr to fds[0] and fds[1:] passed along (status pipe,
        then the verdict pipe for checks, the gate's read end when gated, and one descriptor
        per `held` path). The caller closes its copies of fds afterwards. When the
        launcher cannot start it, the LaunchedProcess has no pid and says why in `error`. wait=False:
        return before the launcher said its pid; LaunchedProcess.started() waits for it."""
        message = json.dumps({
            "mode": request.mode, "argv": list(request.argv), "env": env, "cwd": str(cwd),
            "sandbox": request.view.to_json(), "user": request.user, "net": request.net,
            "loopback": request.loopback,
            "checks": request.checks, "sys_path": list(request.sys_path),
            "gated": request.gated, "held": list(request.held),
        }).encode()
        read_fd, write_fd = os.pipe()
        launched = LaunchedProcess(read_fd, self)
        try:
            with self._lock:
                for attempt in (1, 2):  # once more with a fresh launcher if this one died
                    try:
                        socket.send_fds(self._running(), [message], [write_fd, *fds])
                        break
                    except OSError as exc:
                        self._stop()
                        if attempt == 2:
                            launched._finish(error=str(exc))
                            return launched
        finally:
            os.close(write_fd)
        if wait:
            launched.started()
        return launched

    def _running(self) -> socket.socket:
        if self._sock is not None and self.alive():
            return self._sock
        self._stop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            for sock in (ours, theirs):
                try:
                    sock.setsockopt(socket.SOL_SOCKET, option, SOCKET_BUFFER)
                except OSError:
                    pass
        config = {"path": [str(Path(ci_eval.__file__).resolve().parents[1])]}
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", program_text(launcher_boot_program),
                 str(theirs.fileno()), json.dumps(config), TITLE],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, start_new_session=True, env={"PATH": os.defpath})
        finally:
            theirs.close()
        self._sock = ours
        return ours

    def _stop(self) -> None:
        """Close the socket of a launcher that is gone or broken (it exits on EOF)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._process is not None:
            self._process.poll()


AGENTS = Launcher()
CHECKS = Launcher()


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
