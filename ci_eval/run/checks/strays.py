"""Ending what a check step left running, before the next step starts.

Agent code run by one step of the checks (a pytest session imports it, a hook executes it) can
leave a process behind: `setsid` + a double fork, its descriptors closed. Inside the checks'
sandbox it cannot reach anything of the harness, but it can change the workspace while a later
step runs: rewrite a test right after that step's `restore=` put it back, and a fail_to_pass test
passes without a fix. So ci_eval.checks takes note of the processes that exist before a step and
ends every new one when the step is over:

    before = descendants()
    subprocess.run(...)          # runs agent code
    end_strays(before)

run_step does all of it for one command, and keeps only the end of what it printed (code under
test can print gigabytes, and subprocess.run would hold them all in the checks' memory):

    step = run_step(["bash", "-c", cmd], timeout=10)   # step.code is None after a timeout

Orphans come back to the checks process (the init of the checks' PID namespace, and a child
subreaper, set by checks_program.py, where there is no namespace), so every process a step started
is found among its descendants. Each round stops every stray before killing it, so a process
that forks as fast as it can is caught in the next round.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections import deque
from dataclasses import dataclass

ROUNDS = 50
TAIL_BYTES = 64 * 1024  # of each stream, kept for reasons


@dataclass(frozen=True)
class Step:
    code: int | None  # None: killed for the timeout
    stdout: str  # the last TAIL_BYTES of each
    stderr: str


def run_step(argv: list[str], *, timeout: float, env: dict | None = None,
             cwd=None) -> Step:
    """Run argv (in cwd); on timeout kill it; then end whatever it left running. Its output is
    read as it comes and only its end kept."""
    before = descendants()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=cwd)
    tails = (deque(), deque())
    readers = [threading.Thread(target=_keep_tail, args=(stream, tail), daemon=True)
               for stream, tail in zip((proc.stdout, proc.stderr), tails)]
    for reader in readers:
        reader.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None
    finally:
        end_strays(before)  # also closes the pipes its leftovers held
    for reader in readers:
        reader.join(timeout=5)
    return Step(code, *(b"".join(tail).decode(errors="replace") for tail in tails))


def _keep_tail(stream, tail: deque) -> None:
    size = 0
    with stream:
        while chunk := stream.read1(65536):
            tail.append(chunk)
            size += len(chunk)
            while size - len(tail[0]) >= TAIL_BYTES:
                size -= len(tail.popleft())


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
            _signal(pid, signal.SIGSTOP)
        for pid in alive:
            _signal(pid, signal.SIGKILL)
        ended += len(alive)
        for pid in strays:
            try:
                os.waitpid(pid, 0)  # ours (an orphan came back to us): reap it
            except ChildProcessError:
                pass  # another stray's child: it comes back to us once its parent is gone
        if not alive:
            break
    return ended


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
