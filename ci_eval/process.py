"""Run a command in its own session with a timeout that kills the whole process group."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

LOG_CAP_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int | None  # None when killed for the timeout
    timed_out: bool
    seconds: float
    output_tail: str  # last part of stdout+stderr, for reasons


def _copy_capped(stream, log_path: Path | None, cap: int, tail: list[bytes]) -> None:
    """Drain `stream` to the log (first `cap` bytes) and keep the last 4 KiB in memory."""
    written = 0
    handle = open(log_path, "wb") if log_path else None  # noqa: SIM115 - closed below
    try:
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                break
            if handle and written < cap:
                handle.write(chunk[: cap - written])
                written += len(chunk[: cap - written])
                if written >= cap:
                    handle.write(b"\n[ci-eval: log truncated]\n")
            tail.append(chunk)
            joined = b"".join(tail)[-4096:]
            tail[:] = [joined]
    finally:
        if handle:
            handle.close()


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_process(
    argv: list[str],
    *,
    cwd: Path,
    env: dict,
    timeout: float,
    log_path: Path | None = None,
    log_cap: int = LOG_CAP_BYTES,
) -> ProcessResult:
    """Run argv in a new session; on timeout SIGKILL its whole group. Leftover children of a
    command that exited on its own are killed too, so nothing outlives a run."""
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    tail: list[bytes] = []
    reader = threading.Thread(
        target=_copy_capped, args=(proc.stdout, log_path, log_cap, tail), daemon=True
    )
    reader.start()
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
        proc.wait()
    timed_out = expired.is_set()
    # Children that left the group may still hold the pipe; do not wait on them forever.
    reader.join(timeout=2)
    seconds = time.monotonic() - start
    output = b"".join(tail).decode(errors="replace")
    return ProcessResult(
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        seconds=seconds,
        output_tail=output,
    )
