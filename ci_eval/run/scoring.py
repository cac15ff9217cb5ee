"""Scoring a workspace: the task's pristine checks.py, in the checks' sandbox, with cwd = workspace.

The outcome has a kind that code branches on (reasons are for people):
  PASS        the checks' verdict is pass
  FAIL        the checks' verdict is fail (an AssertionError included)
  CRASH       checks.py raised, or exited other than 0/1
  NO_VERDICT  the checks process ended without a verdict: killed, or os._exit from code it ran
  TIMEOUT     the checks ran out of time
  INFRA       the harness could not run the checks at all (its sandbox failed to start, a
              requirement is missing): nothing of the agent's ran
What happens while agent code is being judged is the agent's result: CRASH, NO_VERDICT and
TIMEOUT are a fail of the run (`status`), never an infrastructure error to be retried and
left out of the pass rate. `ci-eval verify` (trusted outputs) reports them as broken checks.

The verdict comes on a pipe only the checks wrapper (_run_checks.py) holds, the sandbox's own
failure on another; test outcomes from the structured reports pytest wrote to checks_dir/reports
(ci_eval/run/pytest_report.py). Nothing is read from text the checked code could print.
"""

from __future__ import annotations

import enum
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.run import isolation as isolation_mod
from ci_eval.run import launcher
from ci_eval.run.environment import CHECKS_TZ, allowed_env, clean_path, python_bin_dir
from ci_eval.run.preflight import missing_requirements
from ci_eval.run.process import Pipe, run_process
from ci_eval.run.pytest_report import ReportError, read_report
from ci_eval.tasks.model import Task

REASON_CAP = 1000
RUN_CHECKS = Path(__file__).with_name("_run_checks.py")
REPORTS = "reports"
MAX_REPORTS = 100


class CheckKind(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    CRASH = "crash"
    NO_VERDICT = "no-verdict"
    TIMEOUT = "timeout"
    INFRA = "infra"


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
        return "error" if self.kind is CheckKind.INFRA else "fail"

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


def run_checks(task: Task, workspace: Path, isolation: isolation_mod.Isolation,
               extra_env: tuple[str, ...] = (), *, checks_dir: Path, runs_base: Path,
               hide: tuple[Path, ...] = ()) -> CheckOutcome:
    """Score `workspace` (inside runs_base). `checks_dir` (reports, overlays) must not exist: it
    is made here, outside anything the agent could write."""
    workspace = Path(workspace)
    checks_dir = Path(checks_dir)
    checks_dir.mkdir()
    reports = checks_dir / REPORTS
    reports.mkdir()
    env = checks_env(task, workspace, reports, extra_env)
    missing = missing_requirements(task, env["PATH"])
    if missing:  # preflight stops `run` before this; verify and tests get here
        return CheckOutcome(CheckKind.INFRA,
                            f"requires not met: command not found: {', '.join(missing)}", 0.0)
    with Pipe(cap=16) as verdict, Pipe() as status:
        request = isolation_mod.checks_request(
            isolation, task.checks_path, task_dir=task.path, workspace=workspace,
            checks_dir=checks_dir, repo_root=task.path.resolve().parents[1], runs_base=runs_base,
            hide=hide, home=env.get("HOME"))
        argv = isolation_mod.unsandboxed_checks_argv(isolation, [
            sys.executable, "-I", "-S", str(RUN_CHECKS), str(verdict.write_fd),
            str(task.checks_path.resolve()), *isolation_mod.checks_sys_path()])
        try:
            if request is None:
                result = run_process(argv, cwd=workspace, env=env, timeout=task.checks_timeout,
                                     pipes=(verdict,))
            else:  # status first, then verdict: the order the launcher hands them on
                result = run_process([], cwd=workspace, env=env, timeout=task.checks_timeout,
                                     pipes=(status, verdict),
                                     launch=(launcher.CHECKS, request))
        finally:
            isolation_mod.release_scratch(checks_dir)
        said, sandbox_failure = verdict.read(), status.read() or result.launch_error
    if sandbox_failure:
        return CheckOutcome(CheckKind.INFRA, f"checks sandbox: {sandbox_failure}", result.seconds,
                            retryable=True)
    tests, report_note = _test_outcomes(reports)
    reason = _reason(result.output_tail)
    if report_note:
        reason = f"{reason}; {report_note}" if reason else report_note

    def outcome(kind: CheckKind, text: str) -> CheckOutcome:
        return CheckOutcome(kind, text, result.seconds, test_outcomes=tests)

    if result.timed_out:
        return outcome(CheckKind.TIMEOUT, f"checks timed out after {task.checks_timeout:g}s"
                       + (f": {reason}" if reason else ""))
    expected = {0: "pass", 1: "fail"}.get(result.exit_code, "crash")
    if said != expected:
        how = (f"killed by signal {-result.exit_code}" if result.exit_code is not None
               and result.exit_code < 0 else f"exit {result.exit_code}")
        return outcome(CheckKind.NO_VERDICT, f"checks ended without a verdict ({how}"
                       + (f", said {said!r}" if said else "") + ")" + (f": {reason}" if reason else ""))
    if said == "pass":
        return outcome(CheckKind.PASS, reason or "checks passed")
    if said == "fail":
        return outcome(CheckKind.FAIL, reason or "checks failed (no reason given)")
    return outcome(CheckKind.CRASH, f"checks crashed: {reason}" if reason else "checks crashed")


def _test_outcomes(reports: Path) -> tuple[dict[str, str], str]:
    """Every test outcome the checks' pytest sessions reported (a later session's outcome of
    the same test wins), and a note on reports that could not be read."""
    outcomes: dict[str, str] = {}
    notes = []
    try:
        names = sorted(os.listdir(reports))[:MAX_REPORTS]
    except OSError:
        return {}, ""
    for name in names:
        try:
            found = read_report(reports / name)
        except ReportError as exc:
            notes.append(f"{name}: {exc}")
            continue
        if found:
            outcomes.update(found[1])
    return outcomes, "; ".join(notes)
