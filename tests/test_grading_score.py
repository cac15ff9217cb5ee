"""Scoring units (pure): criteria over test outcomes and a diff, the score's rounding, the
verdict, auto-fail gates and manual criteria; SWE-bench test-id semantics; globs and added lines."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ci_eval.grading import testids
from ci_eval.grading.diffview import added_lines, glob_regex, matches
from ci_eval.grading.rubric import rubric_from_data
from ci_eval.grading.score import round_score, score
from ci_eval.importers.base import file_patch
from ci_eval.run.workspace.diff import FileChange, WorkspaceDiff

F2P = ["t.py::test_a", "t.py::test_b"]
P2P = ["t.py::test_c"]
ALL_PASS = {t: "PASSED" for t in F2P + P2P}


def make_diff(changes: dict, *, truncate_at: int | None = None) -> WorkspaceDiff:
    """changes: path -> (old text or None, new text): a diff shaped like run/workspace/diff.py's."""
    text, files, cut = "", [], []
    for path, (old, new) in sorted(changes.items()):
        part = file_patch({path: old.encode()} if old is not None else {}, {path: new.encode()})
        lines = part.splitlines()
        added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
        removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
        files.append(FileChange(path, "added" if old is None else "modified", added, removed))
        text += part
        if truncate_at is not None and len(text) > truncate_at:
            cut.append(path)
    truncated = bool(cut)
    return WorkspaceDiff(text[:truncate_at] if truncated else text, truncated, files,
                         text_cut=cut)


SRC_FIX = make_diff({"src/parse.py": ("def f(x):\n    return x\n",
                                      "def f(x):\n    return max(0, x)\n")})


def rubric(*criteria, threshold=80, auto_fail=()):
    return rubric_from_data({"fail_to_pass": F2P, "pass_to_pass": P2P,
                             "pass_threshold": threshold, "auto_fail": list(auto_fail),
                             "criteria": list(criteria)}, source="r.yaml")


def c(ident, kind, weight=1, **fields):
    return {"id": ident, "kind": kind, "weight": weight, "rationale": "why", **fields}


SEED_LIKE = rubric(
    c("fix-a", "tests", 4, tests=[F2P[0]]),
    c("fix-b", "tests", 5, tests=[F2P[1]]),
    c("keeps", "tests", 3, tests="pass_to_pass"),
    c("no-test-edits", "forbidden_paths", 2, paths=["tests/**"]),
    c("no-abs", "forbidden_pattern", 3, pattern=r"\babs\s*\("),
    c("few-files", "max_files_changed", 1, max=2),
    c("few-lines", "max_lines_changed", 1, max=20),
    {"id": "reads-well", "kind": "manual", "weight": 2},
    auto_fail=["no-test-edits"])


def test_all_criteria_met_scores_100_and_passes_with_the_manual_one_outstanding():
    result = score(SEED_LIKE, ALL_PASS, SRC_FIX)
    assert (result.score, result.verdict) == (100.0, "PASS")
    assert result.outstanding == ("reads-well",) and result.tripped == ()
    manual = result.criteria[-1]
    assert manual.passed is None and manual.to_json()["points"] is None
    assert (result.tests_passed, result.tests_total) == (3, 3)


@pytest.mark.parametrize("outcomes, diff, expected_score, verdict, tripped", [
    # the seed's rows: 14/19, 12/19, 17/19
    ({**ALL_PASS, F2P[1]: "FAILED"}, SRC_FIX, 73.7, "FAIL", ("fix-b",)),
    ({**ALL_PASS, F2P[0]: "FAILED"},
     make_diff({"src/parse.py": ("x = 1\n", "x = abs(1)\n")}), 63.2, "FAIL", ("fix-a", "no-abs")),
    (ALL_PASS, make_diff({"tests/test_parse.py": ("assert f(-1) == 0\n", "assert f(-1) == -1\n")}),
     89.5, "FAIL", ("no-test-edits",)),
])
def test_the_seed_shaped_scores(outcomes, diff, expected_score, verdict, tripped):
    result = score(SEED_LIKE, outcomes, diff)
    assert (result.score, result.verdict, result.tripped) == (expected_score, verdict, tripped)


def test_an_auto_fail_gate_fails_whatever_the_score_and_says_which():
    diff = make_diff({"tests/test_parse.py": ("a\n", "b\n")})
    result = score(SEED_LIKE, ALL_PASS, diff)
    assert result.score == 89.5 and result.score >= 80 and result.verdict == "FAIL"
    assert result.auto_fail_tripped == ("no-test-edits",)
    assert result.reasons == ["auto-fail criteria tripped: no-test-edits"]
    gate = next(r for r in result.criteria if r.id == "no-test-edits")
    assert gate.reason == "patch modifies protected path(s): tests/test_parse.py"
    assert "no-test-edits: patch modifies protected path(s)" in result.summary


def test_rounding_is_one_decimal_half_up_and_the_verdict_uses_the_shown_score():
    assert round_score(Fraction(100 * 14, 19)) == round_score(Fraction(7368, 100))
    assert str(round_score(Fraction(625, 100))) == "6.3"  # half up, not to even
    assert str(round_score(Fraction(125, 10))) == "12.5"
    assert str(round_score(Fraction(7995, 100))) == "80.0"
    # 79.95 shows as 80.0 and passes a threshold of 80: what is shown is what is judged
    r = rubric(c("a", "tests", 7995, tests=[F2P[0]]), c("b", "tests", 2005, tests=[F2P[1]]),
               threshold=80)
    result = score(r, {**ALL_PASS, F2P[1]: "FAILED"}, SRC_FIX)
    assert result.score == 80.0 and result.verdict == "PASS"
    below = rubric(c("a", "tests", 7994, tests=[F2P[0]]), c("b", "tests", 2006, tests=[F2P[1]]))
    assert score(below, {**ALL_PASS, F2P[1]: "FAILED"}, SRC_FIX).verdict == "FAIL"  # 79.9


def test_weights_may_be_fractions_and_manual_weight_never_counts():
    r = rubric(c("a", "tests", 0.5, tests=[F2P[0]]), c("b", "tests", 1.5, tests=[F2P[1]]),
               {"id": "m", "kind": "manual", "weight": 100}, threshold=0)
    assert score(r, {**ALL_PASS, F2P[1]: "FAILED"}, SRC_FIX).score == 25.0


@pytest.mark.parametrize("outcome", ["SKIPPED", "ERROR", "FAILED", "XFAIL", "XPASS", None])
def test_a_fail_to_pass_test_passes_only_when_it_ran_and_passed(outcome):
    outcomes = dict(ALL_PASS)
    if outcome is None:
        del outcomes[F2P[0]]
    else:
        outcomes[F2P[0]] = outcome
    result = score(SEED_LIKE, outcomes, SRC_FIX)
    fix_a = result.criteria[0]
    assert fix_a.passed is False
    assert f"{F2P[0]} {outcome or 'NOT RUN'} (fail_to_pass)" in fix_a.reason
    assert result.tests_passed == 2


@pytest.mark.parametrize("outcome", ["SKIPPED", "FAILED", "ERROR", None])
def test_a_pass_to_pass_test_must_not_fail_or_vanish(outcome):
    outcomes = {**ALL_PASS}
    if outcome is None:
        del outcomes[P2P[0]]
    else:
        outcomes[P2P[0]] = outcome
    keeps = score(SEED_LIKE, outcomes, SRC_FIX).criteria[2]
    assert keeps.passed is False and "(pass_to_pass)" in keeps.reason


@pytest.mark.parametrize("outcomes", [None, {}, {"other.py::test_x": "PASSED"}])
def test_no_evidence_that_tests_ran_fails_every_tests_criterion(outcomes):
    result = score(SEED_LIKE, outcomes, SRC_FIX)
    tests = [r for r in result.criteria if r.kind == "tests"]
    assert all(not r.passed and "no evidence the tests ran" in r.reason for r in tests)
    assert result.tests_passed == 0 and result.verdict == "FAIL"


def test_an_exit_code_that_disagrees_with_the_statuses_fails():
    result = score(SEED_LIKE, ALL_PASS, SRC_FIX, exit_code=1)
    assert not result.criteria[0].passed
    assert "pytest exited 1 although the named tests passed" in result.criteria[0].reason
    assert score(SEED_LIKE, ALL_PASS, SRC_FIX, exit_code=0).verdict == "PASS"


# --- test-id semantics, alone ------------------------------------------------------------------


def test_judge_tests_skipped_fail_to_pass_fails():
    verdict = testids.judge_tests(["a"], ["b"], {"a": "SKIPPED", "b": "PASSED"}, exit_code=0)
    assert not verdict.passed and verdict.failing == ("a SKIPPED (fail_to_pass)",)


def test_judge_tests_nonzero_exit_while_every_status_passed_fails():
    verdict = testids.judge_tests(["a"], ["b"], {"a": "PASSED", "b": "PASSED"}, exit_code=1)
    assert not verdict.passed and "although the named tests passed" in verdict.reason


def test_judge_tests_exit_zero_with_a_failed_test_is_a_disagreement_too():
    verdict = testids.judge_tests(["a"], [], {"a": "FAILED"}, exit_code=0)
    assert not verdict.passed and "pytest exited 0 although a named test failed" in verdict.reason


@pytest.mark.parametrize("outcomes, problem, needle", [
    (None, "", "no evidence the tests ran (no test report)"),
    (None, "pytest exited 3 but its report says 0", "pytest exited 3 but its report says 0"),
    ({"x": "PASSED"}, "", "names none of the 2 tests"),
])
def test_judge_tests_without_evidence_fails(outcomes, problem, needle):
    verdict = testids.judge_tests(["a"], ["b"], outcomes, exit_code=0, problem=problem)
    assert not verdict.passed and needle in verdict.reason and verdict.count_passed == 0


def test_judge_tests_all_passed_with_exit_zero_passes():
    verdict = testids.judge_tests(["a"], ["b"], {"a": "PASSED", "b": "PASSED"}, exit_code=0)
    assert verdict.passed and verdict.reason == "2 tests passed"


def test_verification_rows_refuse_a_task_that_does_not_demonstrate_its_bug():
    tests = testids.TestIds(("a", "b"), ("c", "d"))
    base = {"a": "FAILED", "b": "PASSED", "c": "PASSED", "d": "FAILED"}
    golden = {"a": "PASSED", "b": "PASSED", "c": "PASSED", "d": "SKIPPED"}
    rows, problems = testids.verification_rows(tests, base, golden)
    assert [(r.test_id, r.base, r.golden) for r in rows] == [
        ("a", "FAILED", "PASSED"), ("b", "PASSED", "PASSED"), ("c", "PASSED", "PASSED"),
        ("d", "FAILED", "SKIPPED")]
    assert problems == [
        ("fail_to_pass test already passes on the untouched repo-state: b (the task would "
         "reward doing nothing)"),
        "pass_to_pass test does not pass on the untouched repo-state: d FAILED",
        "pass_to_pass test does not pass after solution/: d SKIPPED",
    ]
    assert testids.verification_rows(tests, {"a": "FAILED", "b": "ERROR", "c": "PASSED",
                                             "d": "PASSED"}, {t: "PASSED" for t in "abcd"})[1] == []


# --- paths, patterns, sizes ---------------------------------------------------------------------


@pytest.mark.parametrize("glob, path, expected", [
    ("tests/**", "tests/test_x.py", True),
    ("tests/**", "tests/unit/deep/test_x.py", True),
    ("tests/**", "src/tests.py", False),
    ("tests/*.py", "tests/unit/test_x.py", False),
    ("**/conftest.py", "conftest.py", True),
    ("**/conftest.py", "a/b/conftest.py", True),
    ("conftest.py", "a/conftest.py", True),  # no slash: any depth
    ("src/*.py", "src/a.py", True),
    ("src/?.py", "src/ab.py", False),
    ("src/[ab].py", "src/b.py", True),
    ("src/[!ab].py", "src/b.py", False),
    ("tests/", "tests/x/y.py", True),
    ("a+b/*.py", "a+b/x.py", True),
])
def test_globs(glob, path, expected):
    assert bool(glob_regex(glob).match(path)) is expected
    assert matches(path, [glob]) is expected


def test_added_lines_are_only_the_plus_lines_of_hunks_with_their_file():
    diff = make_diff({"a b.py": ("keep = abs(1)\nold = 2\n", "keep = abs(1)\nnew = 3\n"),
                      "z.py": (None, "+++ not a header\n")})
    assert added_lines(diff.text) == [("a b.py", "new = 3"), ("z.py", "+++ not a header")]


def test_a_forbidden_pattern_reads_added_lines_only_and_in_its_paths():
    r = rubric(c("no-abs", "forbidden_pattern", pattern=r"\babs\(", paths=["src/**"]))
    removed_only = make_diff({"src/a.py": ("y = abs(x)\n", "y = max(0, x)\n")})
    assert score(r, ALL_PASS, removed_only).criteria[0].passed
    context_only = make_diff({"src/a.py": ("y = abs(x)\nz = 1\n", "y = abs(x)\nz = 2\n")})
    assert score(r, ALL_PASS, context_only).criteria[0].passed
    outside = make_diff({"docs/a.py": ("", "y = abs(x)\n")})
    assert score(r, ALL_PASS, outside).criteria[0].passed
    added = make_diff({"src/a.py": ("y = x\n", "y = abs(x)\nw = abs(y)\n")})
    result = score(r, ALL_PASS, added).criteria[0]
    assert not result.passed
    assert result.reason == r"added line matches /\babs\(/: src/a.py: 'y = abs(x)' (and 1 more line(s))"


def test_a_required_pattern_must_be_added():
    r = rubric(c("clamps", "required_pattern", pattern=r"max\(0", paths=["src/**"]))
    assert score(r, ALL_PASS, SRC_FIX).criteria[0].passed
    elsewhere = make_diff({"notes.txt": ("", "max(0, x)\n")})
    result = score(r, ALL_PASS, elsewhere).criteria[0]
    assert not result.passed and result.reason == r"no added line in src/** matches /max\(0/"


def test_patterns_on_a_cut_diff_say_what_they_could_not_see():
    big = "x = 1\n" * 400
    diff = make_diff({"src/a.py": ("", big + "y = abs(x)\n"), "src/b.py": ("", "ok\n")},
                     truncate_at=600)
    forbidden = rubric(c("no-abs", "forbidden_pattern", pattern=r"abs\("))
    result = score(forbidden, ALL_PASS, diff).criteria[0]
    assert not result.passed and "cannot be shown" in result.reason and "src/a.py" in result.reason
    required = rubric(c("needs", "required_pattern", pattern=r"abs\("))
    result = score(required, ALL_PASS, diff).criteria[0]
    assert not result.passed and "cut" in result.reason
    # files recorded in full before the cut are judged as usual
    whole = make_diff({"a.py": ("", "y = abs(x)\n"), "b.py": ("", "x = 1\n" * 400)},
                      truncate_at=600)
    assert "matches" in score(forbidden, ALL_PASS, whole).criteria[0].reason


def test_size_limits_count_files_and_lines_from_the_file_list():
    diff = make_diff({"src/a.py": ("1\n2\n", "1\n3\n"), "src/b.py": (None, "x\ny\n"),
                      "README.md": ("a\n", "b\n")})
    r = rubric(c("files", "max_files_changed", max=2), c("src-files", "max_files_changed", max=2,
                                                         paths=["src/**"]),
               c("lines", "max_lines_changed", max=5), c("src-lines", "max_lines_changed", max=4,
                                                         paths=["src/**"]), threshold=0)
    files, src_files, lines, src_lines = score(r, ALL_PASS, diff).criteria
    assert not files.passed and files.reason.startswith("3 file(s) changed (at most 2)")
    assert src_files.passed
    assert not lines.passed and lines.reason == "6 line(s) changed (at most 5)"
    assert src_lines.passed and src_lines.reason == "4 line(s) changed (at most 4)"
    # the file list is complete even when the text was cut
    cut = make_diff({"src/a.py": ("1\n2\n", "1\n3\n"), "src/b.py": (None, "x\ny\n"),
                     "README.md": ("a\n", "b\n")}, truncate_at=10)
    assert score(r, ALL_PASS, cut).criteria[0].reason.startswith("3 file(s) changed")


def test_the_json_shape_grade_prints():
    data = score(SEED_LIKE, ALL_PASS, SRC_FIX).to_json()
    assert set(data) >= {"score", "verdict", "tests_passed", "tests_total", "criteria",
                         "auto_fail_tripped", "outstanding_review"}
    assert set(data["criteria"][0]) >= {"id", "passed", "points", "reason"}
    assert data["criteria"][0]["points"] == 4 and data["pass_threshold"] == 80
