"""Run a command in its own session with a timeout that kills the whole process group.

Every command is started under a parent-death signal (`setpriv --pdeathsig KILL`), so it dies
with the harness even when the harness is killed with SIGKILL and cannot clean up. The signal
fires when the *thread* that started the command ends; run_process waits on that same thread.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ci_eval.run.sandbox import cancellation, pdeathsig_program
from ci_eval.run.sandbox.launcher import Launcher, Request
from ci_eval.run.sandbox.program_text import program_text

TAIL_CAP_BYTES = 4096  # enough for reasons; agents ask for more (their output is parsed)


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int | None  # None when killed for the timeout
    timed_out: bool
    seconds: float
    output_tail: str  # last part of stdout+stderr, for reasons
    launch_error: str = ""  # the sandbox launcher could not start or follow the command


def _keep_tail(stream, tail: bytearray, cap: int) -> None:
    """Drain `stream`, keeping its last `cap` bytes (memory stays bounded whatever it prints)."""
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            break
        tail += chunk
        if len(tail) > 2 * cap:
            del tail[: len(tail) - cap]


# After setpriv armed the signal: a harness that died between the fork and that (its child now
# belongs to a reaper) would never send it, so the command is not run. $0 is the harness's pid.
_PARENT_STILL_THERE = '[ "$PPID" = "$0" ] || exit 137; exec "$@"'


@functools.lru_cache(maxsize=1)
def death_signal_prefix() -> tuple[str, ...]:
    """The argv prefix that makes a command die with this process: the signal armed, then a
    check that this process was still its parent once it was (else exit 137, nothing run)."""
    setpriv, shell = shutil.which("setpriv"), shutil.which("sh")
    if setpriv and shell:
        prefix = (setpriv, "--pdeathsig", "KILL", shell, "-c", _PARENT_STILL_THERE,
                  str(os.getpid()))
        try:
            probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10, check=False)
            if probe.returncode == 0:
                return prefix
        except (OSError, subprocess.TimeoutExpired):
            pass
    return (sys.executable, "-I", "-S", "-c", program_text(pdeathsig_program), str(os.getpid()))


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_marked(entry: str, rounds: int = 3) -> int:
    """SIGKILL every process whose environment holds `entry` ("NAME=value"): descendants that
    left the process group and session (`setsid cmd &`, daemons) still carry the environment
    they were started with. Returns how many were killed."""
    needle = entry.encode() + b"\0"
    own = os.getpid()
    killed = 0
    for _ in range(rounds):  # again, for what was forked meanwhile
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == own:
                continue
            try:
                with open(f"/proc/{name}/environ", "rb") as handle:
                    environ = handle.read()
            except OSError:
                continue
            if environ.startswith(needle) or b"\0" + needle in environ:
                found.append(int(name))
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
    return killed


def run_process(
    argv: list[str],
    *,
    cwd: Path,
    env: dict,
    timeout: float,
    tail_cap: int = TAIL_CAP_BYTES,
    sweep_env: str | None = None,
    pipes: tuple["Pipe", ...] = (),
    launch: tuple[Launcher, Request] | None = None,
) -> ProcessResult:
    """Run argv in a new session; on timeout SIGKILL its whole group. Leftover children of a
    command that exited on its own are killed too, so nothing outlives a run. With `sweep_env`
    ("NAME=value", in env), so are processes that left the group (see kill_marked): for commands
    without a PID namespace to contain them. The write ends of `pipes` are handed to the
    command and closed here once it started. The last `tail_cap` bytes of stdout+stderr come
    back as output_tail. Call from the thread that will wait (it does).
    With `launch` (a launcher and its request), the sandbox launcher starts the request instead
    of argv, in its own process group, tied to the harness's life by the launcher (see
    launcher.py); a launcher failure comes back as launch_error."""
    running = start_process(argv, cwd=cwd, env=env, tail_cap=tail_cap, pipes=pipes,
                            launch=launch)
    if isinstance(running, ProcessResult):
        return running
    return running.follow(timeout, sweep_env=sweep_env)


def start_process(argv: list[str], *, cwd: Path, env: dict, tail_cap: int = TAIL_CAP_BYTES,
                  pipes: tuple["Pipe", ...] = (),
                  launch: tuple[Launcher, Request] | None = None,
                  extra_fds: tuple[int, ...] = (), deferred: bool = False) -> "Running | ProcessResult":
    """run_process's start: the command runs and its output is read; follow() waits for it.
    `extra_fds` (launch only): more descriptors passed after the pipes' write ends (a gate's read
    end, held folders), closed here once the command started. A ProcessResult: it never
    started (launch_error). deferred (launch only): return as soon as the request is sent;
    follow() waits for the launcher's answer (a sandbox built while the harness works on)."""
    start = time.monotonic()
    if launch is None:
        try:
            proc = subprocess.Popen(
                [*death_signal_prefix(), *argv],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=tuple(pipe.write_fd for pipe in pipes),
            )
        finally:
            for pipe in pipes:
                pipe.close_write()
        stream = proc.stdout
    else:
        read_fd, write_fd = os.pipe()
        try:
            proc = launch[0].start(launch[1], env=env, cwd=cwd, wait=not deferred,
                                   fds=[write_fd, *(pipe.write_fd for pipe in pipes), *extra_fds])
        finally:
            for fd in (write_fd, *extra_fds):
                os.close(fd)
            for pipe in pipes:
                pipe.close_write()
        stream = open(read_fd, "rb", buffering=0)  # noqa: SIM115 - closed by follow()
    running = Running(proc, stream, bytearray(), tail_cap, None, start, launch is not None)
    return running if deferred and launch is not None else running.begin()


@dataclass
class Running:
    """A command start_process started, its output being read (once begun)."""

    proc: object  # subprocess.Popen, or launcher.LaunchedProcess
    stream: object
    tail: bytearray
    tail_cap: int
    reader: threading.Thread | None
    started: float  # seconds are counted from here (checks prepared early: from their go)
    launched: bool

    def time_from_now(self) -> None:
        """Count the command's seconds from now on (checks prepared early: from their go)."""
        self.started = time.monotonic()

    def begin(self) -> "Running | ProcessResult":
        """The command's pid known (a ProcessResult when it never started), registered for
        Ctrl-C, its output read."""
        if self.launched:
            self.proc.started()
            if self.proc.pid is None:
                self.stream.close()
                return ProcessResult(None, False, time.monotonic() - self.started, "",
                                     self.proc.error)
        cancellation.register(self.proc.pid)  # Ctrl-C kills the group at once
        self.reader = threading.Thread(target=_keep_tail,
                                       args=(self.stream, self.tail, self.tail_cap), daemon=True)
        self.reader.start()
        return self

    def follow(self, timeout: float, *, sweep_env: str | None = None) -> ProcessResult:
        """Wait for the command, `timeout` seconds from now at most (then its group is
        killed), and for what it printed; its seconds count from `started`."""
        if self.reader is None:  # deferred: not begun yet
            begun = self.begin()
            if isinstance(begun, ProcessResult):
                return begun
        proc = self.proc
        # A timer kills the group; a blocking wait() reacts at once, where wait(timeout) polls.
        expired = threading.Event()

        def on_timeout() -> None:
            expired.set()
            kill_group(proc.pid)

        timer = threading.Timer(timeout, on_timeout)
        timer.start()
        try:
            proc.wait()
        finally:
            timer.cancel()
            kill_group(proc.pid)
            cancellation.unregister(proc.pid)
            proc.wait()
            if sweep_env:
                kill_marked(sweep_env)
        timed_out = expired.is_set()
        # Children that left the group may still hold the pipe; do not wait on them forever.
        self.reader.join(timeout=2)
        if self.launched and not self.reader.is_alive():
            self.stream.close()
        seconds = time.monotonic() - self.started
        output = bytes(self.tail[-self.tail_cap:]).decode(errors="replace")
        return ProcessResult(
            exit_code=None if timed_out else proc.returncode,
            timed_out=timed_out,
            seconds=seconds,
            output_tail=output,
            launch_error=proc.error if self.launched else "",
        )


class Pipe:
    """A one-way pipe from a command to the harness, for what the command's own output must not
    be able to forge (the sandbox's failure, the checks' verdict):

        with Pipe() as pipe:
            run_process([... "--status-fd", str(pipe.write_fd) ...], pipes=(pipe,))
            message = pipe.read()

    run_process closes the write end once the command started; read() takes what was written,
    at most `cap` bytes, without blocking."""

    def __init__(self, cap: int = 4096):
        self.cap = cap
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self._write_open = True

    def close_write(self) -> None:
        if self._write_open:
            self._write_open = False
            os.close(self.write_fd)

    def __enter__(self) -> "Pipe":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.close_write()
        os.close(self.read_fd)

    def read(self) -> str:
        chunks, size = [], 0
        while size < self.cap:
            try:
                chunk = os.read(self.read_fd, self.cap - size)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks).decode(errors="replace").strip()
