"""Scoring a workspace: the task's pristine checks.py, in the checks' sandbox, with cwd = workspace.

The outcome has a kind that code branches on (reasons are for people):
  PASS        the checks' verdict is pass
  FAIL        the checks' verdict is fail (an AssertionError included)
  CRASH       checks.py raised, or exited other than 0/1
  NO_VERDICT  the checks process ended without a verdict: killed, or os._exit from code it ran
  TIMEOUT     the checks ran out of time
  INFRA       the harness could not run the checks at all (its sandbox failed to start, a
              requirement is missing): nothing of the agent's ran
  TASK_ERROR  the task's checks.py is broken: it ran to its end without a verdict, or crashed
              before any code the task does not ship could have run (checks_program.py)
What happens while agent code is being judged is the agent's result: CRASH, NO_VERDICT and
TIMEOUT are a fail of the run (`status`), never an infrastructure error to be retried and
left out of the pass rate. A TASK_ERROR is the task's bug, never the agent's: an error of the
run, not retried (it would break again). `ci-eval verify` (trusted outputs) reports all of
them as broken checks.

The verdict comes on a pipe only the checks wrapper (checks_program.py) holds, the sandbox's own
failure on another; test outcomes from the structured reports pytest wrote to checks_dir/reports
(ci_eval/run/checks/pytest_report.py). Nothing is read from text the checked code could print.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval import strict_json
from ci_eval.run.checks import checks_program
from ci_eval.run.checks.pytest_report import (
    MAX_REPORT_BYTES,
    ReportError,
    accepted_report,
    read_report,
)
from ci_eval.run.checks.report_file import read_report_file
from ci_eval.run.checks.requirements import missing_requirements
from ci_eval.run.sandbox import launcher
from ci_eval.run.sandbox.environment import CHECKS_TZ, allowed_env, clean_path, python_bin_dir
from ci_eval.run.sandbox.home import OWN_HOME, own_home
from ci_eval.run.sandbox.isolation import Isolation, unsandboxed_checks_argv
from ci_eval.run.sandbox.process import Pipe, ProcessResult, Running, start_process
from ci_eval.run.sandbox.requests import (
    ChecksReach,
    checks_request,
    checks_sys_path,
    checks_view,
)
from ci_eval.run.sandbox.sandbox_program import read_failure
from ci_eval.run.sandbox.views import release_scratch
from ci_eval.tasks.model import Task

REASON_CAP = 1000
WORDS = {code: word.decode() for code, word in checks_program.WORDS.items()}
REPORTS = "reports"
MAX_REPORTS = 100
VERDICT_CAP = 64 * 1024  # the word and the accepted reports (checks_program.MAX_ACCEPTED)


class CheckKind(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    CRASH = "crash"
    NO_VERDICT = "no-verdict"
    TIMEOUT = "timeout"
    INFRA = "infra"
    TASK_ERROR = "task-error"


@dataclass(frozen=True)
class CheckOutcome:
    kind: CheckKind
    reason: str
    seconds: float
    retryable: bool = False  # INFRA only: trying the checks again may help
    test_outcomes: dict[str, str] = field(default_factory=dict)  # node id -> outcome, all sessions

    @property
    def status(self) -> str:
        """The run's status: pass, fail (whatever went wrong while judging agent code), or
        error (infrastructure)."""
        if self.kind is CheckKind.PASS:
            return "pass"
        return "error" if self.judged_nothing else "fail"

    @property
    def judged_nothing(self) -> bool:
        """The checks said nothing about the agent's work: the harness or the task broke."""
        return self.kind in (CheckKind.INFRA, CheckKind.TASK_ERROR)

    @property
    def verdict(self) -> str | None:
        """"pass" / "fail" when the checks gave a verdict, None when they broke (for verify)."""
        return {CheckKind.PASS: "pass", CheckKind.FAIL: "fail"}.get(self.kind)


def checks_env(task: Task, workspace: Path, reports: Path,
               extra_names: tuple[str, ...] = ()) -> dict:
    env = allowed_env(extra_names)
    env["PATH"] = clean_path(os.pathsep.join([python_bin_dir(), env.get("PATH", os.defpath)]))
    env["CI_EVAL_TASK_DIR"] = str(task.path.resolve())
    env["CI_EVAL_WORKSPACE"] = str(workspace)
    env["CI_EVAL_REPORT_DIR"] = str(reports)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keep __pycache__ out of the task folder
    env.setdefault("TZ", CHECKS_TZ)  # pinned, unless checks.env lets the host's through
    return env


def _reason(output: str) -> str:
    """The checks' own FAIL/CRASH lines (start kept), else the last lines of output (end kept)."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    marked = [line for line in lines if line.startswith(("FAIL:", "CRASH:"))]
    if marked:
        text = " | ".join(marked)
        return text if len(text) <= REASON_CAP else text[:REASON_CAP] + "…"
    text = " | ".join(lines[-5:])
    return text if len(text) <= REASON_CAP else "…" + text[-REASON_CAP:]


def run_checks(task: Task, workspace: Path, isolation: Isolation,
               extra_env: tuple[str, ...] = (), *, checks_dir: Path, runs_base: Path,
               hide: tuple[Path, ...] = (), host_home: bool = False) -> CheckOutcome:
    """Score `workspace` (inside runs_base). `checks_dir` (reports, overlays, their own HOME)
    must not exist: it is made here, outside anything the agent could write. host_home: the
    checks get the host's HOME (checks.home: host) instead of checks_dir/home."""
    return ChecksRun(task, workspace, isolation, extra_env, checks_dir=checks_dir,
                     runs_base=runs_base, hide=hide, host_home=host_home).start().outcome()


@dataclass(frozen=True)
class NotStarted:
    """start() has not been called."""


@dataclass(frozen=True)
class Decided:
    """The outcome is known without running anything (a requirement is not met)."""

    outcome: CheckOutcome


@dataclass(frozen=True)
class Launched:
    """The checks process runs, or (gate: the write end of its gate pipe) waits to be let go."""

    process: Running
    verdict: Pipe
    status: Pipe
    gate: int | None


@dataclass(frozen=True)
class NotLaunched:
    """The launcher could not start the checks process: `result` says why."""

    result: ProcessResult
    verdict: Pipe
    status: Pipe


@dataclass(frozen=True)
class Ended:
    """outcome() or abort() ran: the pipes are closed and the scratch folders released."""


ChecksState = NotStarted | Decided | Launched | NotLaunched | Ended


class ChecksRun:
    """run_checks in steps, so that the checks' sandbox can be built while the agent runs:

        prepared = ChecksRun(..., held=fd).start()  # fd: O_PATH of the workspace
        ... the agent runs ...
        prepared.outcome()  # go: checks.py runs now, its timeout from now
        prepared.abort()    # or: it ends with nothing run (safe to call twice)

    The constructor only stores; start() makes checks_dir and starts the process (or decides
    the outcome when a requirement is missing); `state` is one of ChecksState's types.

    held: start() builds the sandbox at once and it waits on a gate for outcome(); it binds the
    workspace only if the path is still the folder of that descriptor (the agent, running
    meanwhile, could swap it for a link or another folder and back), else it fails as a
    sandbox failure. Without it, checks.py starts right away, as run_checks does. Prepared
    checks need both sandboxes: the launcher's view, and an agent in its own PID namespace that
    cannot see or signal the waiting process (held is ignored without a checks sandbox)."""

    def __init__(self, task: Task, workspace: Path, isolation: Isolation,
                 extra_env: tuple[str, ...] = (), *, checks_dir: Path, runs_base: Path,
                 hide: tuple[Path, ...] = (), held: int | None = None, host_home: bool = False):
        self.task, self.workspace, self.isolation = task, Path(workspace), isolation
        self.extra_env, self.runs_base, self.hide = extra_env, runs_base, hide
        self.held, self.host_home = held, host_home
        self.checks_dir = Path(checks_dir)
        self.reports = self.checks_dir / REPORTS
        self.state: ChecksState = NotStarted()

    def start(self) -> ChecksRun:
        """Make checks_dir, refuse unmet requirements, start the checks process (waiting on its
        gate when held)."""
        if not isinstance(self.state, NotStarted):
            raise RuntimeError("checks already started")
        task = self.task
        self.checks_dir.mkdir()
        self.reports.mkdir()
        env = checks_env(task, self.workspace, self.reports, self.extra_env)
        if not self.host_home:
            env.update(own_home(self.checks_dir / OWN_HOME))
        view = checks_view(self.isolation, task.path.resolve().parents[1], self.runs_base,
                           hide=self.hide, home=env.get("HOME") if self.host_home else None)
        missing = missing_requirements(task, env["PATH"], ChecksReach.of(view))
        if missing:  # preflight stops `run` before this; verify and tests get here
            self.state = Decided(CheckOutcome(
                CheckKind.INFRA, "requires not met: command not found: "
                f"{', '.join(map(str, missing))}", 0.0))
            return self
        verdict, status = Pipe(cap=VERDICT_CAP), Pipe()
        cwd = self.workspace.resolve()
        gate = None
        if view is None:
            argv = unsandboxed_checks_argv(self.isolation, checks_program.command(
                verdict.write_fd, str(task.checks_path.resolve()), checks_sys_path()))
            started = start_process(argv, cwd=cwd, env=env, pipes=(verdict,))
        else:
            gated = self.held is not None
            request = checks_request(self.isolation, view, task.checks_path, task_dir=task.path,
                                     workspace=self.workspace, checks_dir=self.checks_dir,
                                     held=gated)
            extra_fds: tuple[int, ...] = ()
            if self.held is not None:
                gate_read, gate = os.pipe()
                extra_fds = (gate_read, os.dup(self.held))
            # status first, then verdict: the order the launcher hands them on
            started = start_process([], cwd=cwd, env=env, pipes=(status, verdict),
                                    launch=(launcher.CHECKS, request), extra_fds=extra_fds,
                                    deferred=gated)
        self.state = NotLaunched(started, verdict, status) if isinstance(
            started, ProcessResult) else Launched(started, verdict, status, gate)
        return self

    def outcome(self) -> CheckOutcome:
        """Let the checks go (their timeout counts from now) and judge how they ended."""
        state = self.state
        if isinstance(state, Decided):
            return state.outcome
        if not isinstance(state, Launched | NotLaunched):
            raise RuntimeError(f"no checks to judge ({type(state).__name__})")
        try:
            if isinstance(state, NotLaunched):
                result = state.result
            else:
                if state.gate is not None:
                    _open(state.gate)
                state.process.time_from_now()  # timed from the go, not the build
                result = state.process.follow(self.task.checks_timeout)
            verdict = state.verdict.read()
            failure = read_failure(state.status.read(), result.launch_error)
        finally:
            self._end(state)
        return checks_outcome(self.task, self.reports, result, verdict,
                              failure.message if failure else "")

    def abort(self) -> None:
        """End the waiting sandbox with nothing run: the run needs no checks."""
        state = self.state
        if not isinstance(state, Launched | NotLaunched):
            return
        try:
            if isinstance(state, Launched):
                if state.gate is not None:
                    os.close(state.gate)  # EOF: the waiting process exits
                state.process.follow(10)
        finally:
            self._end(state)

    def _end(self, state: Launched | NotLaunched) -> None:
        self.state = Ended()
        state.verdict.close()
        state.status.close()
        release_scratch(self.checks_dir)


def _open(gate: int) -> None:
    try:
        os.write(gate, b"g")
    except OSError:
        pass  # the waiting process is gone: follow() tells how it ended
    finally:
        os.close(gate)


def checks_outcome(task: Task, reports: Path, result: ProcessResult, verdict: str,
                   sandbox_failure: str) -> CheckOutcome:
    """The outcome of a checks process that ended as `result`, having written `verdict`."""
    if sandbox_failure:
        return CheckOutcome(CheckKind.INFRA, f"checks sandbox: {sandbox_failure}", result.seconds,
                            retryable=True)
    verdict, accepted = _verdict_and_reports(verdict)
    tests, report_note = _test_outcomes(reports, accepted)
    reason = _reason(result.output_tail)
    if report_note:
        reason = f"{reason}; {report_note}" if reason else report_note

    def outcome(kind: CheckKind, text: str) -> CheckOutcome:
        return CheckOutcome(kind, text, result.seconds, test_outcomes=tests)

    if result.timed_out:
        return outcome(CheckKind.TIMEOUT, f"checks timed out after {task.checks_timeout:g}s"
                       + (f": {reason}" if reason else ""))
    expected = WORDS.get(result.exit_code, "crash") if result.exit_code is not None else "crash"
    if verdict != expected:
        how = (f"killed by signal {-result.exit_code}" if result.exit_code is not None
               and result.exit_code < 0 else f"exit {result.exit_code}")
        return outcome(CheckKind.NO_VERDICT, f"checks ended without a verdict ({how}"
                       + (f", said {verdict!r}" if verdict else "") + ")" + (f": {reason}" if reason else ""))
    if verdict == "pass":
        return outcome(CheckKind.PASS, reason or "checks passed")
    if verdict == "fail":
        return outcome(CheckKind.FAIL, reason or "checks failed (no reason given)")
    if verdict == "none":
        return outcome(CheckKind.TASK_ERROR, "task error: checks.py ran to its end without a "
                       "verdict (end it with ci_eval.checks.main(...) or sys.exit(0 or 1))")
    if verdict == "broken":
        return outcome(CheckKind.TASK_ERROR, "task error: checks.py crashed before any code "
                       "the task does not ship ran" + (f": {reason}" if reason else ""))
    return outcome(CheckKind.CRASH, f"checks crashed: {reason}" if reason else "checks crashed")


def _verdict_and_reports(message: str) -> tuple[str, dict[str, str] | None]:
    """The verdict word and the reports ci_eval.checks accepted, from what checks_program
    wrote on the verdict pipe (None: no list came, as from the docker runner's container;
    a list that is not one accepts nothing)."""
    word, newline, listed = message.partition("\n")
    if not newline:
        return word, None
    try:
        accepted = strict_json.loads(listed)
    except ValueError:
        return word, {}
    if not isinstance(accepted, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in accepted.items()):
        return word, {}
    return word, accepted


def _test_outcomes(reports: Path, accepted: dict[str, str] | None = None
                   ) -> tuple[dict[str, str], str]:
    """Every test outcome the checks' pytest sessions reported (a later session's outcome of
    the same test wins) in the reports ci_eval.checks accepted, and a note on reports that
    could not be read or were not accepted."""
    outcomes: dict[str, str] = {}
    notes = []
    try:
        # dot-files: a runner's own report on its way to a JSON one (run/checks/junit_run.py)
        names = sorted(n for n in os.listdir(reports) if not n.startswith("."))[:MAX_REPORTS]
    except OSError:
        return {}, ""
    for name in names:
        try:
            data = read_report_file(reports / name, MAX_REPORT_BYTES, ReportError,
                                    "test report")
            refused = accepted_report(name, data or b"", accepted)
            if refused:
                notes.append(f"{name}: {refused}")
                continue
            found = read_report(reports / name)
        except ReportError as exc:
            notes.append(f"{name}: {exc}")
            continue
        if found:
            outcomes.update(found[1])
    return outcomes, "; ".join(notes)
