"""One run of a task's own test command whose outcomes come from a JUnit XML report
(ci_eval/run/checks/junit_report.py) that the runner writes to a path the harness chose, outside the
workspace. ci_eval.checks.run_junit_tests is the task author's entry point.

The path goes to the runner as "{report}" in its argv (node --test
--test-reporter-destination={report}) and/or in an environment variable (jest-junit's
JEST_JUNIT_OUTPUT_FILE). A junit file the code under test writes anywhere else is never read.
The outcomes read are written on as the harness's JSON report (run/checks/pytest_report.py's format),
so verify's table, rubric `tests` criteria and the run's outcomes see them as they see pytest's.
"""

from __future__ import annotations

import itertools
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ci_eval.grading.testids import BROKEN
from ci_eval.run.checks.junit_report import JUnitError, read_junit
from ci_eval.run.checks.pytest_report import accept_report, write_report
from ci_eval.run.checks.strays import run_step

REPORT_PLACEHOLDER = "{report}"
_numbers = itertools.count(1)


@dataclass(frozen=True)
class TestRun:
    """One test command: its exit code (None when it timed out), each test's outcome (None when
    there is no evidence the tests ran, `problem` saying why) and the tail of what it printed
    (for reasons only: never parsed for outcomes)."""

    exit_code: int | None
    outcomes: dict[str, str] | None
    output: str
    problem: str = ""


def report_argv(argv: Iterable[str], report: Path, report_env: str | None) -> list[str]:
    """argv with the report's path in place of every "{report}"; ValueError when the runner
    would not learn the path at all."""
    argv = [str(arg) for arg in argv]
    if not argv:
        raise ValueError("run_junit_tests needs a test command")
    if not report_env and not any(REPORT_PLACEHOLDER in arg for arg in argv):
        raise ValueError('run_junit_tests: put "{report}" in the command or name report_env, '
                         "so that the runner writes its JUnit report where ci-eval reads it")
    return [arg.replace(REPORT_PLACEHOLDER, str(report)) for arg in argv]


def run_environment(env: Mapping[str, str | None] | None) -> dict[str, str]:
    """The test command's environment: the checks' own, extended by `env` (a None value takes
    a variable out), without the harness's report folder."""
    environment = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    environment.pop("CI_EVAL_REPORT_DIR", None)
    return environment


def run_junit(argv: Iterable[str], report_dir: Path, *, report_env: str | None = None,
              env: Mapping[str, str | None] | None = None, classname: bool | str = False,
              timeout: float = 120, cwd: str | os.PathLike | None = None) -> TestRun:
    """Run the test command and read its JUnit report. The XML file has a random name in a
    fresh folder of report_dir (a dot-folder: the harness reads only its JSON reports), is
    checked to be the one file there, a plain file with one link, and is gone when this
    returns."""
    number = next(_numbers)
    folder = Path(tempfile.mkdtemp(prefix=".junit-", dir=report_dir))
    xml = folder / f"{secrets.token_hex(16)}.xml"
    try:
        command = report_argv(argv, xml, report_env)
        environment = run_environment(env)
        if report_env:
            environment[report_env] = str(xml)
        name = Path(command[0]).name
        try:
            step = run_step(command, timeout=timeout, env=environment, cwd=cwd)
        except (FileNotFoundError, PermissionError) as exc:
            raise RuntimeError(f"the test command {command[0]!r} could not be started: "
                               f"{exc.strerror or exc}") from None
        if step.code is None:
            return TestRun(None, None, "", f"tests did not finish within {timeout:g}s")
        output = (step.stdout + step.stderr).strip()[-400:]
        try:
            foreign = report_folder_problem(folder, xml)
            if foreign:
                return TestRun(step.code, None, output, f"{foreign} ({name} exit {step.code})")
            outcomes = read_junit(xml, classname=classname)
        except JUnitError as exc:
            return TestRun(step.code, None, output, f"{exc} ({name} exit {step.code})")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if outcomes is None:
        return TestRun(step.code, None, output,
                       f"no evidence the tests ran ({name} exit {step.code}, no JUnit report)")
    problem = exit_disagreement(name, step.code, outcomes)
    if problem:
        return TestRun(step.code, None, output, problem)
    written = report_dir / f"junit-{os.getpid()}-{number}.json"
    write_report(written, step.code, outcomes)
    accept_report(written)
    return TestRun(step.code, outcomes, output)


def report_folder_problem(folder: Path, xml: Path) -> str:
    """Why the report folder is not as the runner alone leaves it ("" when it is): anything
    but the report in it, or a report that is not a plain file with one link."""
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        return f"the JUnit report's folder cannot be read ({exc.strerror})"
    others = [entry for entry in names if entry != xml.name]
    if others:
        return (f"the JUnit report's folder holds {others[0]!r} besides the report: written by "
                "something other than the runner")
    if not names:
        return ""
    info = os.lstat(xml)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        return "the JUnit report is not a plain file with one link: not the runner's"
    return ""


def exit_disagreement(runner: str, exit_code: int, outcomes: Mapping[str, str]) -> str:
    """Why the runner's exit code and its whole report disagree ("" when they agree): a run
    that exits 0 fails no test; one that exits non-zero fails one (or reported nothing)."""
    broken = [test for test, outcome in outcomes.items() if outcome in BROKEN]
    if exit_code == 0 and broken:
        return f"{runner} exited 0 but its JUnit report has {outcomes[broken[0]]} {broken[0]}"
    if exit_code != 0 and outcomes and not broken:
        return f"{runner} exited {exit_code} but its JUnit report shows no failing test"
    return ""
