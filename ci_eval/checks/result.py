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
is that run's fail, with the reason.

Everything in the workspace was written by the agent: these helpers never follow a symlink there
and cap what they read. Test outcomes come from a structured report that pytest writes outside
the workspace (ci_eval/run/checks/pytest_report.py), never from the text the code under test can print.
Nothing that agent code started outlives the step that ran it: run_pytest, shell_exit_zero and
main (between checks) end every process left behind (ci_eval/run/checks/strays.py), so a daemon cannot
rewrite a test after a later step restored it.
"""

from __future__ import annotations

import sys

# collections.abc's Callable itself, without the collections package (os has loaded this one)
from _collections_abc import Callable

from ci_eval.run.checks.process_tree import descendants, end_strays


class CheckResult:
    """A check's verdict: ok, and the reason. Immutable, compared and hashed by value, as a
    frozen dataclass would be; written out because every checks run imports this module first
    (dataclasses would cost the checks' start more than all the rest of it, docs/perf-round3.md)."""

    __slots__ = ("ok", "reason")
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
    What a check left running (agent code it ran through its own subprocess calls) is ended
    before the next one starts (ci_eval/run/checks/strays.py)."""
    failures = []
    before = descendants()
    for check in checks:
        try:
            result = check() if callable(check) else check
        finally:
            end_strays(before)
        if not isinstance(result, CheckResult):
            raise TypeError(f"a check returned {type(result).__name__}, expected CheckResult")
        if not result.ok:
            failures.append(result.reason)
    for reason in failures:
        print(f"FAIL: {reason}", file=sys.stderr)
    if failures:
        sys.exit(1)
    sys.exit(0)
