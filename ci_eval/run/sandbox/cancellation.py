"""Cancelling a run (Ctrl-C, SIGTERM): a process-wide flag and the process groups to kill.

`ci-eval run` turns SIGINT and SIGTERM into `request(signum)`: the handler only sets the flag
(a signal may arrive while the main thread holds a lock or writes a results line). The run loop
sees the flag, stops scheduling runs and calls `kill_running()`, which SIGKILLs the process group
of every command in flight. A run whose command was killed that way is not a result: workers check
`cancelled()` after each step and raise `Cancelled` instead of returning a record.

Which groups are in flight: the ones `process.run_process` (which starts every agent and every
checks run) registers with `register(pgid)` / `unregister(pgid)`; a group registered after
cancellation is killed at once. Short helper commands (git, setup.sh) run in ci-eval's own
process group and get the terminal's signal themselves.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

_lock = threading.Lock()
_groups: set[int] = set()
_flag = threading.Event()
_signum: int | None = None


class Cancelled(Exception):
    """A run stopped because the whole invocation is being cancelled; never recorded."""


def cancelled() -> bool:
    return _flag.is_set()


def signal_number() -> int | None:
    """The signal that cancelled the run (None when cancelled otherwise, or not cancelled)."""
    return _signum


def request(signum: int | None = None) -> None:
    """Ask for cancellation. Safe in a signal handler: takes no lock, kills nothing."""
    global _signum
    if not _flag.is_set():
        _signum = signum
        _flag.set()


def raise_if_cancelled() -> None:
    if _flag.is_set():
        raise Cancelled()


def reset() -> None:
    """Back to not cancelled (a new invocation in the same process, tests)."""
    global _signum
    _flag.clear()
    _signum = None


def register(pgid: int) -> None:
    """A command's process group is in flight; killed at once when cancellation came first."""
    with _lock:
        _groups.add(pgid)
    if _flag.is_set():
        _kill_group(pgid)


def unregister(pgid: int) -> None:
    with _lock:
        _groups.discard(pgid)


def kill_running() -> None:
    """SIGKILL every registered group."""
    with _lock:
        groups = set(_groups)
    for pgid in groups:
        _kill_group(pgid)


def _kill_group(pgid: int) -> None:
    if pgid <= 1 or pgid == os.getpgrp():
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@contextlib.contextmanager
def on_signals(signums=(signal.SIGINT, signal.SIGTERM)):
    """While active, the signals request cancellation instead of interrupting the main thread.
    Outside the main thread signal handlers cannot be set; nothing changes then."""
    reset()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for signum in signums:
        previous[signum] = signal.signal(signum, lambda number, _frame: request(number))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def sleep(seconds: float) -> bool:
    """Wait `seconds`, or less when the invocation is cancelled meanwhile; True if cancelled."""
    return _flag.wait(max(0.0, seconds))
