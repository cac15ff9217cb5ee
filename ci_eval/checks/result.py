"""A check's verdict (CheckResult, passed, failed) and main, which evaluates a checks.py's checks.

A typical checks.py:

    from ci_eval.checks import file_equals, regex_match, run_tests, main

    main(
        regex_match("setup.cfg", r"max-line-length\\s*=\\s*100"),
        lambda: run_tests(fail_to_pass=["tests/test_x.py::test_new"], restore=["tests/"]),
    )

checks.py runs with cwd = the agent's workspace and the task folder available as
CI_EVAL_TASK_DIR, in a sandbox (docs/isolation.md). Exit 0 = pass, exit 1 = fail (an
AssertionError is a fail with its message); a crash, a kill or a timeout after the agent's code ran
is that run's fail, with the reason; a checks.py that runs to its end without exiting, or crashes
before the agent's work could steer it, is the task's error (docs/isolation.md, "Whose fault is a
broken run").

Everything in the workspace was written by the agent: these helpers never follow a symlink there
and cap what they read. Test outcomes come from a structured report that pytest writes outside
the workspace (ci_eval/run/checks/pytest_report.py), never from the text the code under test can print.
Nothing that agent code started or changed outlives the step that ran it: run_pytest,
run_junit_tests, shell_exit_zero and main (each callable check) end every process left behind and put
back what the step changed in the workspace (ci_eval/run/checks/step_guard.py), so neither a
daemon nor an earlier step can rewrite a test, or the code, that a later step judges.
"""

from __future__ import annotations

import importlib
import sys

# collections.abc's Callable itself, without the collections package (os has loaded this one)
from _collections_abc import Callable


class CheckResult:
    """A check's verdict: ok, and the reason. Immutable, compared and hashed by value, as a
    frozen dataclass would be; written out because every checks run imports this module first
    (dataclasses would cost the checks' start more than all the rest of it, docs/perf-round3.md)."""

    __slots__ = ("ok", "reason")
    ok: bool
    reason: str
    __match_args__ = ("ok", "reason")

    def __init__(self, ok: bool, reason: str) -> None:
        object.__setattr__(self, "ok", ok)
        object.__setattr__(self, "reason", reason)

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        return f"CheckResult(ok={self.ok!r}, reason={self.reason!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.ok, self.reason) == (other.ok, other.reason)

    def __hash__(self) -> int:
        return hash((self.ok, self.reason))

    def __bool__(self) -> bool:
        return self.ok


def passed(reason: str = "ok") -> CheckResult:
    return CheckResult(True, reason)


def failed(reason: str) -> CheckResult:
    return CheckResult(False, reason)


def tail(text: str, limit: int = 800) -> str:
    """The end of what a process printed, for a reason."""
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def tests_result(verdict, output: str) -> CheckResult:
    """The CheckResult of a judged test run (run_tests, run_junit_tests; verdict: the
    grading.testids.TestsVerdict, not imported here: main's checks need none of it): a failure's
    reason ends with the tail of what the tests printed."""
    if verdict.passed:
        return passed(verdict.reason)
    return failed(f"{verdict.reason}: {output}" if output else verdict.reason)


Check = CheckResult | Callable[[], CheckResult]


def main(*checks: Check) -> None:
    """Evaluate checks in order (callables lazily); exit 1 with reasons on stderr if any failed.
    A callable check runs as a step of its own: what it left running (agent code it ran through
    its own subprocess calls) is ended, and what it changed in the workspace put back, before the
    next one starts (ci_eval/run/checks/step_guard.py). A check given as a value ran before main
    was called (the helpers run their own steps)."""
    failures = []
    for check in checks:
        problem = ""
        if callable(check):
            with _guarded_step() as guard:
                result = check()
            problem = guard.problem
        else:
            result = check
        if not isinstance(result, CheckResult):
            raise TypeError(f"a check returned {type(result).__name__}, expected CheckResult")
        if not result.ok:
            failures.append(result.reason)
        elif problem:
            failures.append(problem)
    for reason in failures:
        print(f"FAIL: {reason}", file=sys.stderr)
    if failures:
        sys.exit(1)
    sys.exit(0)


def _guarded_step():
    """step_guard's guarded_step, loaded when a callable check first needs it: a checks.py
    whose checks are values does not pay for the guard's imports (dataclasses, shutil, the
    workspace snapshot) at every checks start (docs/perf-round3.md)."""
    return importlib.import_module("ci_eval.run.checks.step_guard").guarded_step()
