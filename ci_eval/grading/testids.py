"""Test-id semantics (after SWE-bench): when a declared test counts as passing, and the verdict of
one test run over the declared tests. Pure: outcomes in, verdict out.

Outcomes are pytest's, per node id, from the structured report (ci_eval/run/checks/pytest_report.py):
PASSED, FAILED, ERROR, SKIPPED, XFAIL, XPASS; a declared test the report does not name is
MISSING (it did not run).

- fail_to_pass: passes only when it ran and PASSED. SKIPPED, MISSING, ERROR and FAILED fail.
- pass_to_pass: must not fail. It passed at base (`ci-eval verify` refuses a task where it did
  not), so any other outcome after the change is a regression or hides one: only PASSED passes.
  SWE-bench leaves a skipped pass_to_pass test out of its rate; here a patch that adds a skip
  marker would hide a regression that way, so SKIPPED fails.
- XFAIL and XPASS fail in both groups: either outcome means an expected-failure marker sits on
  the test, so its verdict is no longer what its assertions say (an XFAIL test failed; a
  non-strict XPASS says nothing about whether the marker was added to hide a failure).
- No evidence that the tests ran (no report, or a report naming none of the declared tests) is
  a fail of every test, never a pass.
- When the test command's exit code is known, it must agree with the outcomes: every declared
  test passing while the command exited non-zero, or a declared test FAILED/ERROR while it
  exited 0, is a fail ("the exit code disagrees").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

PASSED = "PASSED"
MISSING = "MISSING"
BROKEN = ("FAILED", "ERROR")
GROUPS = ("fail_to_pass", "pass_to_pass")


@dataclass(frozen=True)
class TestIds:
    """The tests a task declares: fail_to_pass (the fix makes them pass) and pass_to_pass (they
    pass before and after). `source` is the file that declared them (for messages)."""

    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...] = ()
    source: str = ""

    @property
    def all(self) -> tuple[str, ...]:
        return self.fail_to_pass + self.pass_to_pass

    def group_of(self, test_id: str) -> str | None:
        if test_id in self.fail_to_pass:
            return "fail_to_pass"
        return "pass_to_pass" if test_id in self.pass_to_pass else None


def outcome_of(outcomes: Mapping[str, str] | None, test_id: str) -> str:
    return (outcomes or {}).get(test_id, MISSING)


def passes(outcome: str) -> bool:
    """Whether a declared test with this outcome passes (the same rule in both groups)."""
    return outcome == PASSED


def passes_at_base(group: str, outcome: str) -> bool:
    """Whether this outcome at the untouched state is what the group promises (verify): a
    fail_to_pass test must not pass yet, a pass_to_pass test must pass."""
    return not passes(outcome) if group == "fail_to_pass" else passes(outcome)


@dataclass(frozen=True)
class TestsVerdict:
    passed: bool
    outcomes: dict[str, str]  # declared test id -> outcome (MISSING filled in)
    failing: tuple[str, ...]  # "ID OUTCOME (group)" for each declared test that fails
    problem: str = ""  # no evidence that the tests ran, or the exit code disagrees

    @property
    def reason(self) -> str:
        if self.passed:
            return f"{len(self.outcomes)} tests passed"
        return "; ".join(filter(None, [self.problem, *self.failing]))

    @property
    def count_passed(self) -> int:
        return sum(1 for outcome in self.outcomes.values() if passes(outcome))


def no_evidence(outcomes: Mapping[str, str] | None, wanted: Iterable[str]) -> bool:
    """No report at all, or one that names none of the wanted tests."""
    return outcomes is None or not any(test_id in outcomes for test_id in wanted)


def judge_tests(fail_to_pass: Iterable[str], pass_to_pass: Iterable[str] = (),
                outcomes: Mapping[str, str] | None = None, *, exit_code: int | None = None,
                problem: str = "", evidence: Iterable[str] | None = None,
                runner: str = "pytest") -> TestsVerdict:
    """The verdict over the declared tests. `outcomes` None means there is no report at all
    (`problem` may say why); `exit_code` is the test command's, when known (None: not known,
    e.g. outcomes gathered from several sessions whose codes were each checked already).
    `evidence`: the tests whose presence in the report shows that the tests ran (default: the
    ones judged; a rubric criterion naming some of a task's tests passes all of them, so a
    missing one is NOT RUN rather than "no evidence")."""
    fail_to_pass, pass_to_pass = list(fail_to_pass), list(pass_to_pass)
    wanted = fail_to_pass + pass_to_pass
    if not wanted:
        raise ValueError("judge_tests needs at least one test id")
    found = {test_id: outcome_of(outcomes, test_id) for test_id in wanted}
    if no_evidence(outcomes, wanted if evidence is None else list(evidence)):
        if outcomes is None:
            why = problem or "no evidence the tests ran (no test report)"
        else:
            code = "" if exit_code is None else f"{runner} exit {exit_code}: "
            count = len(wanted) if evidence is None else len(list(evidence))
            why = (problem or f"no evidence the tests ran ({code}the test report names none "
                   f"of the {count} tests)")
        return TestsVerdict(False, found, (), why)
    failing = tuple(f"{test_id} {'NOT RUN' if outcome == MISSING else outcome} "
                    f"({'fail_to_pass' if test_id in fail_to_pass else 'pass_to_pass'})"
                    for test_id, outcome in found.items() if not passes(outcome))
    disagreement = ""
    if exit_code is not None:
        if not failing and exit_code != 0:
            disagreement = f"{runner} exited {exit_code} although the named tests passed"
        elif exit_code == 0 and any(found[t] in BROKEN for t in wanted):
            disagreement = f"{runner} exited 0 although a named test failed"
    return TestsVerdict(not failing and not disagreement, found, failing, disagreement)


@dataclass(frozen=True)
class TestRow:
    """One declared test in `ci-eval verify`'s table: its outcome on the untouched repo-state
    (base) and after solution/ (golden)."""

    test_id: str
    group: str
    base: str
    golden: str

    def to_json(self) -> dict:
        return {"id": self.test_id, "group": self.group, "base": self.base,
                "golden": self.golden}


def verification_rows(tests: TestIds, base: Mapping[str, str] | None,
                      golden: Mapping[str, str] | None) -> tuple[list[TestRow], list[str]]:
    """The table rows and what is wrong: a fail_to_pass test that passes at base (the task would
    reward doing nothing), a pass_to_pass test that does not pass at base (a run would be blamed
    for breakage it never caused), a declared test that does not pass after solution/."""
    rows, problems = [], []
    for test_id in tests.all:
        group = tests.group_of(test_id)
        if group is None:  # every id of tests.all is in a group
            continue
        row = TestRow(test_id, group, outcome_of(base, test_id), outcome_of(golden, test_id))
        rows.append(row)
        if not passes_at_base(group, row.base):
            if group == "fail_to_pass":
                problems.append(f"fail_to_pass test already passes on the untouched "
                                f"repo-state: {test_id} (the task would reward doing nothing)")
            else:
                problems.append(f"pass_to_pass test does not pass on the untouched repo-state: "
                                f"{test_id} {row.base}")
        if not passes(row.golden):
            problems.append(f"{group} test does not pass after solution/: {test_id} "
                            f"{row.golden}")
    return rows, problems


def short_outcome(outcome: str) -> str:
    """How the verify table shows an outcome: PASS, FAIL, ERROR, SKIP, XFAIL, XPASS, MISSING."""
    return {"PASSED": "PASS", "FAILED": "FAIL", "SKIPPED": "SKIP"}.get(outcome, outcome)
