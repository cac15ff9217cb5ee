"""Scoring (pure): a Rubric, the test outcomes and the diff -> per-criterion results, score,
verdict, tripped auto-fail gates and the manual criteria left for review.

- Each automated criterion passes or fails as a whole and earns its weight when it passes.
- score = 100 * (weight of the automated criteria that passed) / (weight of all automated
  criteria), rounded to one decimal, halves up (14/19 = 73.68… -> 73.7; 12/19 -> 63.2).
- verdict = PASS when no auto_fail criterion failed and the score (as shown, one decimal) is at
  least pass_threshold; FAIL otherwise, with the reasons.
- manual criteria are outside the score: listed as outstanding review, never counted.

Criteria:
  tests              every named test passes (ci_eval.grading.testids: SWE-bench semantics)
  forbidden_paths    no changed path (added, deleted, modified, mode) matches the globs
  forbidden_pattern  no added line (in files matching `paths`, if given) matches the regex
  required_pattern   some added line (in `paths`, if given) matches the regex
  max_files_changed  changed files (matching `paths`, if given) <= max
  max_lines_changed  added + removed lines (of files matching `paths`, if given) <= max
Patterns match each added line as written and NFKC-normalised (as Python reads identifiers).
Unproven is fail: a criterion that could not see all it judges fails, and the reason says what
was not seen. forbidden_paths and max_files_changed judge the path list: a path in scope that may
have changed but was not compared (`unverified`), or a path list that is incomplete (`unlisted`),
fails them. The line criteria (both patterns, max_lines_changed) also fail on a file in scope whose
lines were not read (binary, not decodable, too large, a budget; for the patterns not a deleted
file) or, for the patterns, whose diff text was cut; a required pattern that is found passes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from ci_eval.grading.diffview import (
    Diff,
    added_lines,
    code_forms,
    files_in,
    matches,
    unread_in,
    unverified_in,
)
from ci_eval.grading.rubric import Criterion, Rubric
from ci_eval.grading.testids import TestIds, judge_tests

SHOWN_PATHS = 5
LINE_SHOWN = 80
NOT_COMPARED = "the diff's budget ran out before they were compared"


@dataclass(frozen=True)
class CriterionResult:
    id: str
    kind: str
    title: str
    weight: Fraction
    passed: bool | None  # None: a manual criterion, outstanding review
    reason: str
    auto_fail: bool = False

    @property
    def points(self) -> Fraction:
        return self.weight if self.passed else Fraction(0)

    def to_json(self) -> dict:
        return {"id": self.id, "kind": self.kind, "description": self.title,
                "weight": _plain(self.weight), "passed": self.passed,
                "points": None if self.passed is None else _plain(self.points),
                "reason": self.reason,
                "auto_fail": self.auto_fail}


@dataclass(frozen=True)
class RubricResult:
    criteria: tuple[CriterionResult, ...]
    exact_score: Fraction  # 0..100
    pass_threshold: Fraction
    auto_fail_tripped: tuple[str, ...]
    tests_passed: int
    tests_total: int

    @property
    def score(self) -> float:
        return float(round_score(self.exact_score))

    @property
    def verdict(self) -> str:
        ok = not self.auto_fail_tripped and round_score(self.exact_score) >= self.pass_threshold
        return "PASS" if ok else "FAIL"

    @property
    def passed(self) -> bool:
        return self.verdict == "PASS"

    @property
    def tripped(self) -> tuple[str, ...]:
        """The automated criteria that failed."""
        return tuple(c.id for c in self.criteria if c.passed is False)

    @property
    def outstanding(self) -> tuple[str, ...]:
        """The manual criteria, left for a person to score."""
        return tuple(c.id for c in self.criteria if c.passed is None)

    @property
    def reasons(self) -> list[str]:
        """Why the verdict is FAIL ([] for PASS)."""
        found = []
        if self.auto_fail_tripped:
            found.append(f"auto-fail criteria tripped: {', '.join(self.auto_fail_tripped)}")
        if round_score(self.exact_score) < self.pass_threshold:
            found.append(f"score {self.score:.1f} is below the pass threshold "
                         f"{_plain(self.pass_threshold)}")
        return found

    @property
    def summary(self) -> str:
        """One line: "rubric FAIL 89.5/100 (...)"."""
        text = f"rubric {self.verdict} {self.score:.1f}/100"
        details = self.reasons + [f"{c.id}: {c.reason}" for c in self.criteria
                                  if c.passed is False and c.auto_fail]
        return f"{text} ({'; '.join(details)})" if details else text

    def to_json(self) -> dict:
        return {"score": self.score, "verdict": self.verdict,
                "pass_threshold": _plain(self.pass_threshold),
                "tests_passed": self.tests_passed, "tests_total": self.tests_total,
                "criteria": [c.to_json() for c in self.criteria],
                "auto_fail_tripped": list(self.auto_fail_tripped),
                "tripped": list(self.tripped), "outstanding_review": list(self.outstanding),
                "reasons": self.reasons}


def round_score(score: Fraction) -> Decimal:
    """One decimal, halves rounded up (the score as shown and judged)."""
    exact = Decimal(score.numerator) / Decimal(score.denominator)
    return exact.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def score(rubric: Rubric, test_outcomes: Mapping[str, str] | None, diff: Diff, *,
          exit_code: int | None = None) -> RubricResult:
    """Grade one result. test_outcomes: node id -> outcome from the structured test reports
    (None or {}: no evidence the tests ran); exit_code: the test command's, when known."""
    results = tuple(judge(c, rubric, test_outcomes, diff, exit_code) for c in rubric.criteria)
    total = rubric.total_weight
    earned = sum((r.points for r in results if r.passed is not None), Fraction(0))
    exact = Fraction(100) * earned / total if total else Fraction(0)
    tripped = tuple(r.id for r in results if r.auto_fail and r.passed is False)
    passed, total_tests = test_counts(rubric.tests, test_outcomes, exit_code)
    return RubricResult(results, exact, rubric.pass_threshold, tripped, passed, total_tests)


def test_counts(tests: TestIds | None, outcomes: Mapping[str, str] | None,
                exit_code: int | None = None) -> tuple[int, int]:
    """(declared tests that passed, declared tests); (0, 0) when the task declares none."""
    if tests is None:
        return 0, 0
    verdict = judge_tests(tests.fail_to_pass, tests.pass_to_pass, outcomes, exit_code=exit_code)
    return verdict.count_passed, len(tests.all)


def judge(criterion: Criterion, rubric: Rubric, outcomes: Mapping[str, str] | None, diff: Diff,
          exit_code: int | None = None) -> CriterionResult:
    passed, reason = _CHECKS[criterion.kind](criterion, rubric, outcomes, diff, exit_code)
    return CriterionResult(criterion.id, criterion.kind, criterion.title, criterion.weight,
                           passed, reason, criterion.id in rubric.auto_fail)


def _tests(c: Criterion, rubric: Rubric, outcomes, diff: Diff, exit_code) -> tuple[bool, str]:
    tests = rubric.tests or TestIds(c.tests)
    fail_to_pass = [t for t in c.tests if tests.group_of(t) != "pass_to_pass"]
    pass_to_pass = [t for t in c.tests if tests.group_of(t) == "pass_to_pass"]
    verdict = judge_tests(fail_to_pass, pass_to_pass, outcomes, exit_code=exit_code,
                          evidence=tests.all)
    if verdict.passed:
        return True, f"{len(c.tests)}/{len(c.tests)} tests passed"
    return False, f"{verdict.count_passed}/{len(c.tests)} tests passed: {verdict.reason}"


def _forbidden_paths(c: Criterion, rubric, outcomes, diff: Diff, exit_code) -> tuple[bool, str]:
    touched = [f.path for f in files_in(diff, c.paths)]
    if touched:
        return False, f"patch modifies protected path(s): {_listed(touched)}"
    maybe = unverified_in(diff, c.paths)
    if maybe:
        return False, (f"protected path(s) may have changed and were not compared "
                       f"({NOT_COMPARED}): {_listed(maybe)}")
    if diff.unlisted:
        return False, (f"the list of changed paths is incomplete ({diff.unlisted}): a change "
                       "to a protected path cannot be ruled out")
    return True, "no protected path changed"


def _pattern(c: Criterion, diff: Diff) -> tuple[list[tuple[str, str]], list[str]]:
    """(added lines in scope that match, as written or NFKC-normalised; what in scope was not
    seen: files not read, not compared, not recorded in full because the text was cut, or the
    path list itself incomplete)."""
    regex = re.compile(c.pattern)
    lines = [(p, t) for p, t in added_lines(diff.text) if not c.paths or matches(p, c.paths)]
    hits = [(p, t) for p, t in lines if any(regex.search(form) for form in code_forms(t))]
    return hits, _blind(c, diff, added_only=True) + _unseen(c, diff)


def _blind(c: Criterion, diff: Diff, *, added_only: bool) -> list[str]:
    """What in scope a criterion on lines could not read, each with why."""
    found = unread_in(diff, c.paths, added_only=added_only)
    maybe = unverified_in(diff, c.paths)
    if maybe:
        found.append(f"{_listed(maybe)} (may have changed: {NOT_COMPARED})")
    if diff.unlisted:
        found.append(f"paths not listed ({diff.unlisted})")
    return found


def _unseen(c: Criterion, diff: Diff) -> list[str]:
    cut = set(diff.text_cut)
    return [f"{f.path} (its diff text was cut)" for f in files_in(diff, c.paths)
            if f.added and not f.unread and f.path in cut]


def _forbidden_pattern(c: Criterion, rubric, outcomes, diff: Diff, exit_code) -> tuple[bool, str]:
    hits, unseen = _pattern(c, diff)
    if hits:
        path, text = hits[0]
        more = f" (and {len(hits) - 1} more line(s))" if len(hits) > 1 else ""
        return False, f"added line matches /{c.pattern}/: {path}: {_line(text)}{more}"
    if unseen:
        return False, (f"not all added lines could be read, so the absence of /{c.pattern}/ "
                       f"cannot be shown: {_listed(unseen)}")
    return True, f"no added line matches /{c.pattern}/"


def _required_pattern(c: Criterion, rubric, outcomes, diff: Diff, exit_code) -> tuple[bool, str]:
    hits, unseen = _pattern(c, diff)
    if hits:
        path, text = hits[0]
        return True, f"{path}: {_line(text)}"
    where = f" in {_listed(c.paths)}" if c.paths else ""
    if unseen:
        return False, (f"no added line{where} matches /{c.pattern}/ in what could be read "
                       f"(not read: {_listed(unseen)})")
    return False, f"no added line{where} matches /{c.pattern}/"


def _max_files(c: Criterion, rubric, outcomes, diff: Diff, exit_code) -> tuple[bool, str]:
    changed = files_in(diff, c.paths)
    most = c.max or 0  # the loader requires max for this kind
    text = f"{len(changed)} file(s) changed (at most {c.max})"
    if len(changed) > most:
        return False, f"{text}: {_listed([f.path for f in changed])}"
    maybe = unverified_in(diff, c.paths)
    if len(changed) + len(maybe) > most:
        return False, (f"{text}, and {len(maybe)} more may have changed "
                       f"({NOT_COMPARED}): {_listed(maybe)}")
    if diff.unlisted:
        return False, f"{text}, but the list of changed paths is incomplete ({diff.unlisted})"
    return True, text


def _max_lines(c: Criterion, rubric, outcomes, diff: Diff, exit_code) -> tuple[bool, str]:
    changed = files_in(diff, c.paths)
    lines = sum(f.added + f.removed for f in changed)
    text = f"{lines} line(s) changed (at most {c.max})"
    if lines > c.max:
        return False, text
    blind = _blind(c, diff, added_only=False)
    if blind:
        return False, f"{text} in what could be read; lines not counted: {_listed(blind)}"
    return True, text


def _manual(c: Criterion, rubric, outcomes, diff: Diff, exit_code) -> tuple[None, str]:
    return None, "outstanding: scored by a person, outside the automated score"


_CHECKS = {
    "tests": _tests,
    "forbidden_paths": _forbidden_paths,
    "forbidden_pattern": _forbidden_pattern,
    "required_pattern": _required_pattern,
    "max_files_changed": _max_files,
    "max_lines_changed": _max_lines,
    "manual": _manual,
}


def _listed(paths: list[str] | tuple[str, ...]) -> str:
    shown = ", ".join(paths[:SHOWN_PATHS])
    return shown + (f" and {len(paths) - SHOWN_PATHS} more" if len(paths) > SHOWN_PATHS else "")


def _line(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= LINE_SHOWN else text[:LINE_SHOWN - 1] + "…")


def _plain(value: Fraction) -> int | float:
    """A weight or threshold as JSON shows it: 2 rather than 2.0, 0.5 for halves."""
    return value.numerator if value.denominator == 1 else float(value)
