"""The JUnit side: run_junit_tests, a task's own test command (any runner) judged from the JUnit
XML report it writes outside the workspace (ci_eval/run/checks/junit_run.py runs it)."""

from __future__ import annotations

from collections.abc import Iterable

from ci_eval.checks.result import CheckResult, failed, tests_result
from ci_eval.checks.task_folder import report_dir, restore_pristine, step
from ci_eval.grading.testids import judge_tests
from ci_eval.run.checks.junit_report import JEST_ENV, JEST_IDS
from ci_eval.run.checks.junit_run import run_junit


def run_junit_tests(
    argv: Iterable[str],
    fail_to_pass: Iterable[str] = (),
    pass_to_pass: Iterable[str] = (),
    *,
    report_env: str | None = None,
    restore: Iterable[str] = (),
    classname: bool | str = False,
    env: dict | None = None,
    timeout: float = 120,
) -> CheckResult:
    """Run a task's own test command (any runner) and read each test's outcome from the JUnit
    XML report it writes to a path ci-eval chose outside the workspace: "{report}" in argv, or
    the variable named by report_env, e.g.
    run_junit_tests(["node", "--test", "--test-reporter=junit",
    "--test-reporter-destination={report}"], fail_to_pass=["parse > reads units"]).
    Test ids and the report's limits: ci_eval/run/checks/junit_report.py; jest + jest-junit:
    classname="jest" sets jest-junit's naming (JEST_ENV) so that an id is the test file and
    what jest prints ("test/a.test.js > parseDuration › hours › reads hours"). The rules of
    run_tests hold:
    skipped, errored and missing fail; no report is "no evidence the tests ran"; an exit code
    that disagrees with the report, or with the named tests' outcomes (exit 1 while every
    named test passed: some other test failed, or the report is not the runner's), fails.
    restore: paths put back from repo-state/ first. env: variables added to the checks' own
    environment (PATH and the rest are kept; a None value takes one out)."""
    argv, fail_to_pass, pass_to_pass = list(argv), list(fail_to_pass), list(pass_to_pass)
    if not fail_to_pass + pass_to_pass:
        raise ValueError("run_junit_tests needs at least one test id")
    restore_pristine(restore)
    if classname == JEST_IDS:
        env = {**JEST_ENV, **(env or {})}
    with step() as guard:  # hidden tests laid in; nothing it started or changed outlives it
        run = run_junit(argv, report_dir(), report_env=report_env, env=env,
                        classname=classname, timeout=timeout)
    if guard.problem:
        return failed(guard.problem)
    runner = str(argv[0]).rsplit("/", 1)[-1] if argv else "the test command"
    verdict = judge_tests(fail_to_pass, pass_to_pass, run.outcomes, exit_code=run.exit_code,
                          problem=run.problem, runner=runner)
    return tests_result(verdict, run.output)
