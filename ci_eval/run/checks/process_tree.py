"""The processes below this one, and ending the ones a check step left (strays.py says why).

Orphans come back to the checks process (the init of the checks' PID namespace, and a child
subreaper, set by checks_program.py, where there is no namespace), so every process a step started
is found among its descendants. Each round stops every stray before killing it, so a process
that forks as fast as it can is caught in the next round. It imports os and the interpreter's
own _signal only: ci_eval.checks.main imports it in every checks run.
"""

from __future__ import annotations

import os

# the signal numbers from the interpreter's own _signal: `signal` would add enum to the start
from _signal import SIGKILL, SIGSTOP

ROUNDS = 50


def _processes() -> tuple[dict[int, list[int]], set[int]]:
    """(parent pid -> children, zombies) of every process this one can see."""
    children: dict[int, list[int]] = {}
    zombies = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        pid = int(name)
        children.setdefault(int(fields[1]), []).append(pid)
        if fields[0] in (b"Z", b"X"):
            zombies.add(pid)
    return children, zombies


def _below(children: dict[int, list[int]]) -> set[int]:
    found: set[int] = set()
    stack = [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def descendants() -> set[int]:
    """Every process descended from this one, zombies included."""
    return _below(_processes()[0])


def end_strays(before: set[int]) -> int:
    """SIGKILL every descendant that is not in `before` (stopped first, so that it cannot fork
    meanwhile) and reap those that are this process's children. Returns how many were ended."""
    ended = 0
    for _ in range(ROUNDS):
        children, zombies = _processes()
        strays = _below(children) - before
        alive = strays - zombies
        for pid in alive:
            _send(pid, SIGSTOP)
        for pid in alive:
            _send(pid, SIGKILL)
        ended += len(alive)
        for pid in strays:
            try:
                os.waitpid(pid, 0)  # ours (an orphan came back to us): reap it
            except ChildProcessError:
                pass  # another stray's child: it comes back to us once its parent is gone
        if not alive:
            break
    return ended


def _send(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
