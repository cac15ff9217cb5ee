"""The JUnit side: run_junit_tests, a task's own test command (any runner) judged from the JUnit
XML report it writes outside the workspace (ci_eval/run/checks/junit_run.py runs it)."""

from __future__ import annotations

from collections.abc import Iterable

from ci_eval.checks.result import CheckResult, tests_result
from ci_eval.checks.task_folder import report_dir, restore_pristine
from ci_eval.grading.testids import judge_tests
from ci_eval.run.checks.junit_run import run_junit


def run_junit_tests(
    argv: Iterable[str],
    fail_to_pass: Iterable[str] = (),
    pass_to_pass: Iterable[str] = (),
    *,
    report_env: str | None = None,
    restore: Iterable[str] = (),
    classname: bool = False,
    env: dict | None = None,
    timeout: float = 120,
) -> CheckResult:
    """Run a task's own test command (any runner) and read each test's outcome from the JUnit
    XML report it writes to a path ci-eval chose outside the workspace: "{report}" in argv, or
    the variable named by report_env, e.g.
    run_junit_tests(["node", "--test", "--test-reporter=junit",
    "--test-reporter-destination={report}"], fail_to_pass=["parse > reads units"]).
    Test ids and the report's limits: ci_eval/run/checks/junit_report.py. The rules of run_tests hold:
    skipped, errored and missing fail; no report is "no evidence the tests ran"; an exit code
    that disagrees with the report fails. restore: paths put back from repo-state/ first."""
    fail_to_pass, pass_to_pass = list(fail_to_pass), list(pass_to_pass)
    if not fail_to_pass + pass_to_pass:
        raise ValueError("run_junit_tests needs at least one test id")
    restore_pristine(restore)
    run = run_junit(argv, report_dir(), report_env=report_env, env=env, classname=classname,
                    timeout=timeout)
    verdict = judge_tests(fail_to_pass, pass_to_pass, run.outcomes, problem=run.problem)
    return tests_result(verdict, run.output)
