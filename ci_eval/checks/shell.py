"""shell_exit_zero: a command run in the workspace exits 0 in time (and leaves nothing running)."""

from __future__ import annotations

import shlex

from ci_eval.checks.result import CheckResult, failed, passed, tail
from ci_eval.checks.task_folder import step
from ci_eval.run.checks.strays import run_step


def shell_exit_zero(cmd: str | list[str], timeout: float = 10, *, env: dict | None = None,
                    shell: str = "bash") -> CheckResult:
    """`cmd` run by `shell` (bash; "sh" for the POSIX shell) in the workspace exits 0 within
    `timeout` seconds; a list is an argv run as it is, without a shell (the fixture-task format's
    `argv`). Whatever it left running is ended when it is done."""
    argv = list(cmd) if isinstance(cmd, (list, tuple)) else [shell, "-c", cmd]
    if isinstance(cmd, (list, tuple)):
        cmd = shlex.join(cmd)
    try:
        with step() as guard:
            ran = run_step(argv, timeout=timeout, env=env)
    except (FileNotFoundError, PermissionError) as exc:
        return failed(f"`{cmd}` could not be started: {exc.strerror or exc}")
    if ran.code is None:
        return failed(f"`{cmd}` did not finish within {timeout:g}s")
    if guard.problem:
        return failed(f"`{cmd}`: {guard.problem}")
    if ran.code == 0:
        return passed(f"`{cmd}` exited 0")
    output = tail(ran.stderr or ran.stdout, 400)
    return failed(f"`{cmd}` exited {ran.code}: {output}")
