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

descendants and end_strays live in process_tree.py (the standard library's os and signal only:
ci_eval.checks.main needs them in every checks run, this module's subprocess and threading only
the steps that start a command).
"""

from __future__ import annotations

import subprocess
import threading
from collections import deque
from dataclasses import dataclass

from ci_eval.run.checks.process_tree import descendants, end_strays

TAIL_BYTES = 64 * 1024  # of each stream, kept for reasons


@dataclass(frozen=True)
class StepResult:
    code: int | None  # None: killed for the timeout
    stdout: str  # the last TAIL_BYTES of each
    stderr: str


def run_step(argv: list[str], *, timeout: float, env: dict | None = None,
             cwd=None) -> StepResult:
    """Run argv (in cwd); on timeout kill it; then end whatever it left running. Its output is
    read as it comes and only its end kept."""
    before = descendants()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=cwd)
    tails: tuple[deque, deque] = (deque(), deque())
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
    return StepResult(code, *(b"".join(tail).decode(errors="replace") for tail in tails))


def _keep_tail(stream, tail: deque) -> None:
    size = 0
    with stream:
        while chunk := stream.read1(65536):
            tail.append(chunk)
            size += len(chunk)
            while size - len(tail[0]) >= TAIL_BYTES:
                size -= len(tail.popleft())
