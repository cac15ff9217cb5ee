"""The helpers a task's checks.py imports (`from ci_eval.checks import ...`) -> CheckResults."""

from ci_eval.checks.files import file_equals, first_difference, regex_match
from ci_eval.checks.junit_tests import run_junit_tests
from ci_eval.checks.pytest_tests import PytestRun, run_declared_tests, run_pytest, run_tests
from ci_eval.checks.result import Check, CheckResult, failed, main, passed
from ci_eval.checks.shell import shell_exit_zero
from ci_eval.checks.task_folder import (
    add_hidden_tests,
    declared_tests,
    restore_from,
    restore_pristine,
    step,
    task_dir,
)

__all__ = [
    "Check", "CheckResult", "PytestRun", "add_hidden_tests", "declared_tests", "failed",
    "file_equals", "first_difference", "main", "passed", "regex_match", "restore_from",
    "restore_pristine", "run_declared_tests", "run_junit_tests", "run_pytest", "run_tests",
    "shell_exit_zero", "step", "task_dir",
]
