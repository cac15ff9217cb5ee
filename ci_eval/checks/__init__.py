"""The helpers a task's checks.py imports (`from ci_eval.checks import ...`) -> CheckResults."""

import importlib

# Each name loads its module when it is first used (module __getattr__): every checks run starts
# a fresh interpreter, and a checks.py that compares one file should not pay for the pytest and
# JUnit readers, the rubric or the JSON strictness it never calls (docs/perf-round3.md).

_MODULE_OF = {
    "Check": "result", "CheckResult": "result", "failed": "result", "main": "result",
    "passed": "result",
    "file_equals": "files", "first_difference": "files", "regex_match": "files",
    "run_junit_tests": "junit_tests",
    "PytestRun": "pytest_tests", "run_declared_tests": "pytest_tests", "run_pytest": "pytest_tests",
    "run_tests": "pytest_tests",
    "shell_exit_zero": "shell",
    "declared_tests": "declared",
    "add_hidden_tests": "task_folder", "restore_from": "task_folder",
    "restore_pristine": "task_folder", "step": "task_folder", "task_dir": "task_folder",
}

__all__ = [
    "Check", "CheckResult", "PytestRun", "add_hidden_tests", "declared_tests", "failed",
    "file_equals", "first_difference", "main", "passed", "regex_match", "restore_from",
    "restore_pristine", "run_declared_tests", "run_junit_tests", "run_pytest", "run_tests",
    "shell_exit_zero", "step", "task_dir",
]


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
