"""Runs a task's checks.py so that its verdict is told apart from a crash, a kill or a forgery.

It is started as `python -I -S -B path/to/checks_program.py VERDICT_FD[:GATE_FD] CHECKS_PY
SYS_PATH...` (`command`): by the harness where there is no sandbox, by the sandbox launcher's fork
(launcher_program.py) inside the checks' sandbox. GATE_FD (prepared checks, whose sandbox is built
while the agent runs): the interpreter starts then, and waits for the harness's go ("g") on that
pipe before anything else (checks.py is not read before it); EOF instead of a go (the run needed
no checks) ends it with GATE_CLOSED and no verdict. So the start, about half of what a checks run
with a short checks.py costs, is off the run's critical path, and every run still has an
interpreter, and a string-hash seed, of its own. SYS_PATH is what `python -I` would have, given by the harness: no
site-packages scan, no .pth file run at start. Either way cwd = workspace and the
workspace (and this file's folder) is off sys.path, so files the agent wrote cannot shadow
ci_eval or the checks' imports; the checks' own folder is put first, as `python checks.py` would.

The verdict goes to VERDICT_FD (a pipe of the harness's) as one word once checks.py is done:
  pass   checks.py ended with exit 0 (or sys.exit(0), or ran to its end)
  fail   exit 1, or an uncaught AssertionError (as pytest treats a bare assert)
  crash  any other uncaught exception, or another exit code
and the exit code says the same (0, 1, 3). A process that ends without writing it (os._exit from
code under test, a kill) has no verdict, whatever its exit code. Reasons go to stderr as
`FAIL: ...` / `CRASH: Type: message (checks.py:LINE)`, without this wrapper's frames.
Imports are kept to the bare minimum: this runs once per scored run.

The process makes itself non-dumpable first. The code under test runs in its children (pytest)
with the same uid and, in the sandbox, the same (empty) capabilities: while this process is
dumpable, a child could open /proc/<this pid>/fd/VERDICT_FD and write "pass" into the pipe, then
ptrace this process into exit_group(0), and the run would pass. A non-dumpable process can be
neither traced nor opened through /proc by processes without CAP_SYS_PTRACE. It is also a child
subreaper: orphans of the checks' subprocesses come back to it (as they would to the init of the
checks' PID namespace), so ci_eval.checks can end what a step left running.
"""

import os
import sys
import types

CRASH_EXIT = 3
GATE_CLOSED = 0  # the gate closed without a go: the run did not need these checks


def _where(exc: BaseException, checks: str) -> str:
    """The checks.py line the exception passed through (else its innermost frame)."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)[1:]  # [0] is this wrapper's exec
    mine = [f for f in frames if os.path.abspath(f.filename) == checks]
    frame = mine[-1] if mine else (frames[-1] if frames else None)
    if frame is None:
        return ""
    return f" ({os.path.basename(frame.filename)}:{frame.lineno})"


def _message(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _site_builtins() -> None:
    """exit() and quit(), which the site module adds and -S (the launcher, the unsandboxed
    start) leaves out: a checks.py may call them as under `python checks.py`."""
    import builtins

    if not hasattr(builtins, "exit"):
        import _sitebuiltins

        for name in ("exit", "quit"):
            setattr(builtins, name, _sitebuiltins.Quitter(name, "Ctrl-D (i.e. EOF)"))


def run(checks: str) -> int:
    _site_builtins()
    sys.argv = [checks]
    sys.path.insert(0, os.path.dirname(checks))
    main_module = types.ModuleType("__main__")  # what `python checks.py` would make
    main_module.__file__ = checks
    sys.modules["__main__"] = main_module
    try:
        with open(checks, "rb") as handle:
            code = compile(handle.read(), checks, "exec")
        exec(code, main_module.__dict__)  # noqa: S102 - running checks.py is the point
    except SystemExit as exc:
        status = exc.code
        if status is None:
            return 0
        if isinstance(status, int) and not isinstance(status, bool):
            if status not in (0, 1):
                print(f"CRASH: checks.py exited {status}", file=sys.stderr)
                return CRASH_EXIT
            return status
        print(status, file=sys.stderr)
        return 1
    except AssertionError as exc:
        print(f"FAIL: {_message(exc)}{_where(exc, checks)}", file=sys.stderr)
        return 1
    except BaseException as exc:  # noqa: BLE001 - any other crash of checks.py
        print(f"CRASH: {_message(exc)}{_where(exc, checks)}", file=sys.stderr)
        return CRASH_EXIT
    return 0


PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def _guard_process() -> None:
    import ctypes

    libc = ctypes.CDLL(None)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def command(verdict_fd: int, checks: str, sys_path: list[str],
            gate_fd: int | None = None) -> list[str]:
    """How this program is started, by the harness or by the sandbox launcher's fork: the path
    `python -I` would have (given, since -S), and -B: no bytecode written beside checks.py's
    own modules. gate_fd: wait for the go there first (it must be inherited)."""
    fds = str(verdict_fd) if gate_fd is None else f"{verdict_fd}:{gate_fd}"
    return [sys.executable, "-I", "-S", "-B", os.path.abspath(__file__), fds, checks, *sys_path]


def main() -> int:
    if len(sys.argv) > 3:  # started with -S: the path `python -I` would have (the harness's)
        sys.path[:] = sys.argv[3:]
    verdict_fd, _, gate_fd = sys.argv[1].partition(":")
    return judge(int(verdict_fd), sys.argv[2], int(gate_fd) if gate_fd else None)


def wait_for_gate(gate_fd: int) -> bool:
    """Wait for the harness: "g" is go; EOF (the harness closed the gate) is not."""
    while True:
        try:
            answer = os.read(gate_fd, 1)
            break
        except InterruptedError:
            continue
    os.close(gate_fd)
    return answer == b"g"


def judge(verdict_fd: int, checks: str, gate_fd: int | None = None) -> int:
    """Run checks.py (after the go on gate_fd, when given), write the verdict to verdict_fd;
    the exit status."""
    _guard_process()
    os.set_inheritable(verdict_fd, False)  # the checks' own subprocesses never get it
    if gate_fd is not None and not wait_for_gate(gate_fd):  # closes it: never the checks'
        os._exit(GATE_CLOSED)  # nothing run, no verdict
    status = run(os.path.abspath(checks))
    sys.stdout.flush()
    sys.stderr.flush()
    word = {0: b"pass", 1: b"fail"}.get(status, b"crash")
    os.write(verdict_fd, word)
    os.close(verdict_fd)
    return status


if __name__ == "__main__":
    sys.exit(main())
