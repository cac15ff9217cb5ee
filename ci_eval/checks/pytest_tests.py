"""The pytest side: run_pytest (a sandboxed pytest session whose outcomes come from its
structured report, with sentinel tests against a forged one), run_tests and run_declared_tests
(the declared tests must all pass)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import ci_eval
from ci_eval.checks.declared import declared_tests
from ci_eval.checks.result import CheckResult, tail, tests_result
from ci_eval.checks.task_folder import (
    hidden_files,
    report_dir,
    restore_from,
    restore_pristine,
    step,
    task_dir,
)
from ci_eval.grading.testids import judge_tests
from ci_eval.run.checks import pytest_launcher_program
from ci_eval.run.checks.pytest_report import (
    ReportError,
    accept_report,
    read_report,
    sentinel_ids,
    sentinel_problem,
    write_report,
)
from ci_eval.run.checks.restore import conftests_on_the_way, pristine_ini
from ci_eval.run.checks.strays import run_step
from ci_eval.run.sandbox.program_text import program_text

# The pytest process: run/checks/pytest_launcher_program.py says how it starts and why.
_CI_EVAL_FOLDER = str(Path(ci_eval.__file__).resolve().parents[1])
_COLLECT_ONLY = ("--collect-only", "--co")


@dataclass(frozen=True)
class PytestRun:
    """One pytest session: its exit code (None when it timed out), the outcome of each test from
    the structured report (None when there is no evidence the tests ran, with `problem` saying
    why), and the tail of what it printed (for reasons only: never parsed for outcomes)."""

    exit_code: int | None
    outcomes: dict[str, str] | None
    output: str
    problem: str = ""


_report_numbers = itertools.count(1)


def run_pytest(args: Iterable[str] = (), *, plugins: Iterable[str] = (),
               project_config: bool | str = False, workspace_config: bool = False,
               timeout: float = 120, cwd: str | os.PathLike | None = None) -> PytestRun:
    """Run pytest in the workspace with `args` and read each test's outcome from its structured
    report. Installed plugins are not auto-loaded (name the ones the tests need in `plugins`,
    e.g. "asyncio"). By default the workspace's conftest.py and ini files are ignored, so an
    agent cannot rewrite outcomes with a hook. project_config=True uses the project's pytest
    configuration as repo-state/ has it (the pristine ini file, via -c) and the conftest.py files
    on the way to the named tests as repo-state/ has them (an agent's conftest.py is removed, an
    edited one put back). workspace_config=True runs pytest as plain `python -m pytest` would,
    with whatever configuration the folder holds: for tasks whose deliverable IS that
    configuration (the outcomes still come from the report, never from the printed text).
    project_config="FOLDER": the same, from the task folder's FOLDER instead of repo-state/ (a
    task pinned to an upstream commit keeps its pristine conftest.py and ini files there).
    Nothing of the agent's loads in the harness's stead (ci_eval/run/checks/pytest_session.py: no
    bytecode cache, no entry point, no user site-packages), and two sentinel tests with ids drawn
    for this session, one that must fail, tell a forged report apart ("test outcomes were
    tampered with"); they are left out of `outcomes`. cwd: where pytest runs (default: here)."""
    args = list(args)
    report = report_dir() / f"pytest-{os.getpid()}-{next(_report_numbers)}.json"
    if workspace_config:
        config_args = []
    elif project_config:
        # a task pinned to an upstream commit has no repo-state/: it names the folder of its
        # pristine project files instead (project_config="test-files", as swe-bench imports do)
        pristine = project_config if isinstance(project_config, str) else "repo-state"
        if not (task_dir() / pristine).is_dir():
            return PytestRun(None, None, "", f"project_config: the task has no {pristine}/ to "
                             "take the pristine pytest configuration from (a task pinned to an "
                             "upstream commit names its folder: project_config=\"FOLDER\")")
        restore_from(pristine, conftests_on_the_way(args))
        # confcutdir: no conftest.py from above the workspace (/tmp, HOME: earlier steps write)
        config_args = ["-c", pristine_ini(task_dir() / pristine), "--rootdir", ".",
                       "--confcutdir", "."]
    else:
        config_args = ["--noconftest", "-c", os.devnull, "--rootdir", "."]
    plugin_args = [arg for name in plugins for arg in ("-p", name)]
    sentinels = () if any(arg in _COLLECT_ONLY for arg in args) else sentinel_ids(str(report.parent))
    sentinel_args = (["--ci-eval-must-fail", sentinels[0], "--ci-eval-must-pass", sentinels[1]]
                     if sentinels else [])
    cmd = [sys.executable, "-s", "-c", program_text(pytest_launcher_program), _CI_EVAL_FOLDER,
           "--ci-eval-report", str(report), *sentinel_args, "-rA", "-p", "no:cacheprovider",
           "-q", *config_args, *plugin_args, *args]
    hidden = {os.path.abspath(target): str(source) for source, target in hidden_files()}
    if hidden:  # hidden test modules compiled from these bytes, whatever is on disk then
        cmd[5:5] = ["--ci-eval-pristine", json.dumps(hidden)]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    with step() as guard:  # hidden tests laid in; nothing it started or changed outlives it
        ran = run_step(cmd, timeout=timeout, env=env, cwd=cwd)
    if ran.code is None:
        return PytestRun(None, None, "", f"tests did not finish within {timeout:g}s")
    output = tail(ran.stdout + ran.stderr, 400)
    if guard.problem:
        report.unlink(missing_ok=True)
        return PytestRun(ran.code, None, output, guard.problem)
    step_code = ran.code
    try:
        found = read_report(report)
    except ReportError as exc:
        return PytestRun(step_code, None, output, f"{exc} (pytest exit {step_code})")
    if found is None:
        return PytestRun(step_code, None, output,
                         f"no evidence the tests ran (pytest exit {step_code}, no report)")
    status, outcomes = found
    problem = sentinel_problem(status, outcomes, *sentinels) if sentinels else ""
    if not problem and status != step_code:
        problem = f"pytest exited {step_code} but its report says {status}"
    if problem:
        report.unlink(missing_ok=True)  # withdrawn: the harness reads the reports left
        return PytestRun(step_code, None, output, problem)
    if sentinels:
        outcomes = {test: outcome for test, outcome in outcomes.items() if test not in sentinels}
        write_report(report, status, outcomes)  # the harness reads the tests' outcomes only
    accept_report(report)
    return PytestRun(step_code, outcomes, output)


def run_tests(
    fail_to_pass: Iterable[str] = (),
    pass_to_pass: Iterable[str] = (),
    *,
    restore: Iterable[str] = (),
    args: Iterable[str] = (),
    plugins: Iterable[str] = (),
    project_config: bool | str = False,
    timeout: float = 120,
) -> CheckResult:
    """Run pytest on the named tests; every one must PASS (skipped, xfail or missing fails).

    fail_to_pass: tests the fix must make pass; pass_to_pass: tests that must keep passing.
    restore: paths put back from repo-state/ first (tests, fixtures; files that setup.sh or a
    repo-state patch made cannot be restored). plugins, project_config, timeout: see
    run_pytest. Outcomes come from the structured report; a test id it does not list is NOT RUN;
    no report at all is "no evidence the tests ran"; pytest's exit code is cross-checked with
    the report and with the outcomes.
    """
    fail_to_pass, pass_to_pass = list(fail_to_pass), list(pass_to_pass)
    wanted = fail_to_pass + pass_to_pass
    if not wanted:
        raise ValueError("run_tests needs at least one test id")
    if importlib.util.find_spec("pytest") is None:
        # A missing tool is an infrastructure problem of the machine, never a failed check.
        raise RuntimeError("pytest is not installed for the interpreter running the checks")
    restore_pristine(restore)
    run = run_pytest([*args, *wanted], plugins=plugins, project_config=project_config,
                     timeout=timeout)
    verdict = judge_tests(fail_to_pass, pass_to_pass, run.outcomes, exit_code=run.exit_code,
                          problem=run.problem)
    return tests_result(verdict, run.output)


def run_declared_tests(**options) -> CheckResult:
    """run_tests over the tests the task declares (declared_tests()), with run_tests' options."""
    fail_to_pass, pass_to_pass = declared_tests()
    return run_tests(fail_to_pass, pass_to_pass, **options)
