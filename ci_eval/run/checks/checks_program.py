"""Runs a task's checks.py so that its verdict is told apart from a crash, a kill or a forgery.

It is started as `python -I -S -B -c BOOT VERDICT_FD[:GATE_FD] CHECKS_PY SYS_PATH...`
(`command`): by the harness where there is no sandbox, by the sandbox launcher's fork
(launcher_program.py) inside the checks' sandbox. BOOT imports this module from the folder the
harness's own ci_eval is in, so its cached bytecode is used: run as a script, its source was
compiled again by every checks run (4 ms of CPU here, on the run's critical path). GATE_FD (prepared checks, whose sandbox is built
while the agent runs): the interpreter starts then, and waits for the harness's go ("g") on that
pipe before anything else (checks.py is not read before it); EOF instead of a go (the run needed
no checks) ends it with GATE_CLOSED and no verdict. So the start, about half of what a checks run
with a short checks.py costs, is off the run's critical path, and every run still has an
interpreter, and a string-hash seed, of its own. SYS_PATH is what `python -I` would have, given by the harness: no
site-packages scan, no .pth file run at start. Either way cwd = workspace and the
workspace (and this file's folder) is off sys.path, so files the agent wrote cannot shadow
ci_eval or the checks' imports; the checks' own folder is put first, as `python checks.py` would.

The verdict goes to VERDICT_FD (a pipe of the harness's) as one word once checks.py is done:
  pass    checks.py exited 0: main(...) of ci_eval.checks, sys.exit(0), exit(), raise SystemExit
  fail    exit 1, or an uncaught AssertionError (as pytest treats a bare assert)
  crash   any other uncaught exception, or another exit code, after code the task does not ship
          could have run (a subprocess was started, or workspace code ran in this process)
  broken  the same, before any such code could have run: checks.py's own bug (a SyntaxError,
          an import of a module that is not there)
  none    checks.py ran to its end without exiting: it never said pass or fail (an empty file,
          a forgotten main(...), a file that only prints). Never a pass.
then (for the local harness) a line of JSON naming the test reports ci_eval.checks accepted
(file name -> sha256), and the exit code says the same (0, 1, 3, 5, 4). A process that ends
without writing it (os._exit from code under test, a kill) has no verdict, whatever its exit
code. Who is to blame for broken and none is docs/isolation.md's "Whose fault is a broken run"
(AgentCodeWatch below). Reasons go to stderr as
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
NO_VERDICT_EXIT = 4
BROKEN_EXIT = 5
WORDS = {0: b"pass", 1: b"fail", NO_VERDICT_EXIT: b"none", BROKEN_EXIT: b"broken"}
SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn",
                          "os.spawn", "os.fork", "os.forkpty", "pty.spawn", "os.startfile"})
READ_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})


class AgentCodeWatch:
    """Whether what the agent wrote could have steered checks.py yet: its code run, in this
    process or a child, or its files read.

    Trusted code lives under the harness's sys.path (the standard library, site-packages,
    ci_eval) or in the task folder, and never in the workspace (cwd). An audit hook marks the
    first subprocess, the first code object from elsewhere run by exec (every module import
    execs its code), a library loaded from elsewhere, code compiled from a string anywhere
    but trusted library code (checks.py's `exec(text)` may be running workspace text), and the
    first open or listing of anything in the workspace (a crash on the agent's malformed
    output is the agent's). At the end, a sys.path entry or a loaded module from elsewhere
    marks it too. Every doubt counts as "could have": a crash is then the run's fail."""

    def __init__(self, checks: str, sys_path: list[str]):
        self.workspace = _prefixes([os.getcwd()])
        self.library = _prefixes([p for p in sys_path if p and os.path.isabs(p)])
        self.trusted_roots = self.library + _prefixes([os.path.dirname(checks)])
        self.given_path = list(sys_path)
        self.known: dict[str, bool] = {}  # path -> trusted: an import's events name it often
        self.exposed = ""

    def start(self) -> None:
        sys.addaudithook(self._event)

    def in_workspace(self, path: str) -> bool:
        """By the path's text, made absolute against cwd (no system call: this runs on every
        open while nothing is exposed)."""
        full = os.path.abspath(path) + os.sep
        return full.startswith(self.workspace)

    def _under(self, path: str, roots: tuple[str, ...]) -> bool:
        if not isinstance(path, str) or not os.path.isabs(path) or self.in_workspace(path):
            return False
        return (os.path.abspath(path) + os.sep).startswith(roots)

    def trusted(self, path: str) -> bool:
        found = self.known.get(path)
        if found is None:
            found = self.known[path] = self._under(path, self.trusted_roots)
        return found

    def _event(self, event: str, args: tuple) -> None:
        if self.exposed:
            return
        if event in SPAWN_EVENTS:
            self.exposed = f"{event} ran"
        elif event == "exec":
            name = getattr(args[0], "co_filename", "")
            if name.startswith("<frozen "):
                return
            if name.startswith("<"):  # compiled from a string: trusted only from the library
                caller = sys._getframe(1).f_code.co_filename
                if not (caller.startswith("<frozen ") or self._under(caller, self.library)):
                    self.exposed = f"code compiled from a string ran ({caller})"
            elif not self.trusted(name):
                self.exposed = f"{name} ran"
        elif event == "ctypes.dlopen" and args and args[0] and not self.trusted(str(args[0])):
            self.exposed = f"{args[0]} was loaded"
        elif event in READ_EVENTS:
            path = args[0] if args and args[0] is not None else "."
            if isinstance(path, int):
                return
            if self.in_workspace(os.fsdecode(path)):
                self.exposed = f"the workspace was read ({os.fsdecode(path)})"

    def code_could_have_run(self) -> str:
        """Why code the task does not ship could have run ("" when it could not)."""
        if self.exposed:
            return self.exposed
        for entry in sys.path:
            if entry not in self.given_path and not self.trusted(entry):
                return f"sys.path holds {entry!r}"
        for name, module in list(sys.modules.items()):
            origin = getattr(getattr(module, "__spec__", None), "origin", None)
            if isinstance(origin, str) and os.path.isabs(origin) and not self.trusted(origin):
                return f"module {name} came from {origin}"
        return ""


def _prefixes(paths: list[str]) -> tuple[str, ...]:
    """Each folder as given and resolved, ending in a separator: what a path under it starts
    with (a folder reached through a link is matched either way)."""
    found = []
    for path in paths:
        for form in (os.path.abspath(path), os.path.realpath(path)):
            found.append(form.rstrip(os.sep) + os.sep)
    return tuple(dict.fromkeys(found))
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


def run(checks: str, watch: AgentCodeWatch | None = None) -> int:
    """checks.py's exit status (a *_EXIT for a crash, a broken checks.py, no verdict)."""
    status = _run(checks)
    if status == CRASH_EXIT and watch is not None and not watch.code_could_have_run():
        return BROKEN_EXIT
    return status


def _run(checks: str) -> int:
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
    print("NO VERDICT: checks.py ran to its end without a verdict: end it with "
          "ci_eval.checks.main(...) or sys.exit(0 or 1)", file=sys.stderr)
    return NO_VERDICT_EXIT


PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def _guard_process() -> None:
    prctl = _prctl()
    for option, value in ((PR_SET_DUMPABLE, 0), (PR_SET_CHILD_SUBREAPER, 1)):
        if prctl(option, value, 0, 0, 0) != 0:
            raise OSError(f"prctl({option}, {value}) failed: the checks cannot be guarded")


def _prctl():
    """libc's prctl through _ctypes alone: `import ctypes` costs 3-5 ms of CPU, paid by every
    scored run, for the two calls above (the same objects ctypes.CDLL(None).prctl builds)."""
    import _ctypes

    class Int(_ctypes._SimpleCData):
        _type_ = "i"

    class Function(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL
        _restype_ = Int

    class Libc:
        _handle = _ctypes.dlopen(None)

    return Function(("prctl", Libc()))


def command(verdict_fd: int, checks: str, sys_path: list[str] | tuple[str, ...],
            gate_fd: int | None = None) -> list[str]:
    """How this program is started, by the harness or by the sandbox launcher's fork: the path
    `python -I` would have (given, since -S), and -B: no bytecode written beside checks.py's
    own modules. gate_fd: wait for the go there first (it must be inherited)."""
    fds = str(verdict_fd) if gate_fd is None else f"{verdict_fd}:{gate_fd}"
    return [sys.executable, "-I", "-S", "-B", "-c", _boot(), fds, checks, *sys_path]


def _boot() -> str:
    """The start: this module imported from the harness's ci_eval (not from another ci_eval that
    the checks' sys.path may list first), then main() with the checks' sys.path."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    return (f"import sys\nsys.path[:0] = [{root!r}]\n"
            "from ci_eval.run.checks import checks_program\n"
            "sys.exit(checks_program.main())\n")


def main() -> int:
    if len(sys.argv) > 3:  # started with -S: the path `python -I` would have (the harness's)
        sys.path[:] = sys.argv[3:]
    verdict_fd, _, gate_fd = sys.argv[1].partition(":")
    return judge(int(verdict_fd), sys.argv[2], int(gate_fd) if gate_fd else None,
                 name_reports=True)


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


def judge(verdict_fd: int, checks: str, gate_fd: int | None = None, *,
          name_reports: bool = False) -> int:
    """Run checks.py (after the go on gate_fd, when given), write the verdict to verdict_fd
    (and, name_reports: the reports ci_eval.checks accepted, for the local harness; the docker
    runner's container reads the word alone); the exit status."""
    _guard_process()
    os.set_inheritable(verdict_fd, False)  # the checks' own subprocesses never get it
    if gate_fd is not None and not wait_for_gate(gate_fd):  # closes it: never the checks'
        os._exit(GATE_CLOSED)  # nothing run, no verdict
    checks = os.path.abspath(checks)
    watch = AgentCodeWatch(checks, list(sys.path))  # after the go: the workspace is final
    watch.start()
    status = run(checks, watch)
    sys.stdout.flush()
    sys.stderr.flush()
    word = WORDS.get(status, b"crash")
    os.write(verdict_fd, word + (b"\n" + _accepted_reports() if name_reports else b""))
    os.close(verdict_fd)
    return status


MAX_ACCEPTED = 100  # reports named on the pipe: well within a pipe's buffer


def _accepted_reports() -> bytes:
    """The reports ci_eval.checks accepted (pytest_report.ACCEPTED), as JSON: the harness reads
    only these. From this process's memory, which code under test cannot reach."""
    module = sys.modules.get("ci_eval.run.checks.pytest_report")
    accepted = dict(list(getattr(module, "ACCEPTED", {}).items())[:MAX_ACCEPTED])
    if not accepted:
        return b"{}"  # no import for a checks.py that ran no tests (one per scored run)
    import json

    return json.dumps(accepted).encode()

