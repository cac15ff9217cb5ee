"""Pure pieces of the harness: statistics, summaries, results files, progress output."""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb

import pytest

from ci_eval.errors import UserError
from ci_eval.results import stats
from ci_eval.results import store as results
from ci_eval.results.summary import summarize


def test_pass_at_k_matches_the_definition():
    assert stats.pass_at_k(5, 0, 1) == 0.0
    assert stats.pass_at_k(5, 5, 5) == 1.0
    assert stats.pass_at_k(10, 3, 2) == pytest.approx(1 - comb(7, 2) / comb(10, 2))
    assert stats.pass_at_k(5, 2, 1) == pytest.approx(0.4)  # pass@1 is the pass rate
    with pytest.raises(ValueError):
        stats.pass_at_k(3, 1, 4)


def test_pass_at_k_at_the_shortcut_edge():
    """n - c == k: one sample of k can still be all failures (the shortcut is n - c < k)."""
    assert stats.pass_at_k(5, 3, 2) == pytest.approx(0.9)  # 1 - C(2,2)/C(5,2)
    assert stats.pass_at_k(5, 4, 2) == 1.0  # n - c < k: every sample of 2 holds a pass
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert stats.pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_pass_hat_k_is_all_k_passing():
    assert stats.pass_hat_k(5, 4, 5) == 0.0
    assert stats.pass_hat_k(5, 5, 5) == 1.0
    assert stats.pass_hat_k(10, 8, 2) == pytest.approx(comb(8, 2) / comb(10, 2))


def test_wilson_interval_and_percentile():
    low, high = stats.wilson_interval(4, 5)
    assert 0.37 < low < 0.38 and 0.96 < high < 0.97
    assert stats.wilson_interval(0, 0) == (0.0, 1.0)
    for runs in range(1, 101):  # exact at the bounds, not 0.9999999999999999
        assert stats.wilson_interval(runs, runs)[1] == 1.0
        assert stats.wilson_interval(0, runs)[0] == 0.0
        for passes in range(1, runs):
            low, high = stats.wilson_interval(passes, runs)
            assert 0.0 < low < passes / runs < high < 1.0
    assert stats.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95) == 10
    assert stats.percentile([], 95) is None


@pytest.mark.parametrize("measure", [stats.pass_at_k, stats.pass_hat_k])
@pytest.mark.parametrize(("n", "k"), [(5, 0), (5, -1), (3, 4)])
def test_pass_at_k_and_pass_hat_k_refuse_k_outside_1_to_n(measure, n, k):
    with pytest.raises(ValueError, match=rf"needs 0 < k <= n, got k={k}, n={n}"):
        measure(n, 1, k)


def test_percentile_is_the_nearest_rank():
    assert stats.percentile([3, 1, 2], 10) == 1  # rank 1 at the lowest quantiles
    assert stats.percentile([3, 1, 2], 0) == 1
    assert stats.percentile(list(range(101)), 100) == 100  # rank n at q = 100
    assert stats.percentile(list(range(1, 21)), 50) == 10


def _rec(run, status, **extra):
    return {"run": run, "task": "task-001-x", "status": status, "passed": status == "pass",
            "agent": "a", **extra}


def test_summary_excludes_errors_and_marks_inconclusive():
    records = [_rec(1, "pass", tokens=10, wall_seconds=1.0, cost_usd=0.1),
               _rec(2, "fail", tokens=30, wall_seconds=3.0),
               _rec(3, "timeout", wall_seconds=9.0),
               _rec(4, "error", reason="checks crashed")]
    s = summarize("task-001-x", records, k=4)
    assert (s.runs, s.passes, s.errors, s.timeouts) == (3, 1, 1, 1)
    assert s.pass_rate == Fraction(1, 3)
    assert s.inconclusive
    assert s.mean_tokens == 20 and s.total_cost_usd == 0.1 and s.p95_wall_seconds == 9.0
    assert s.error_reasons == ("checks crashed",)
    assert not summarize("task-001-x", records[:3], k=3).inconclusive


def test_summary_with_no_usage_reports_none_not_zero():
    s = summarize("task-001-x", [_rec(1, "pass")], k=1)
    assert s.mean_tokens is None and s.total_cost_usd is None


def test_results_reader_drops_torn_tail_only_when_resuming(tmp_path, capsys):
    path = tmp_path / "task-001-x.jsonl"
    text = json.dumps(_rec(1, "pass")) + "\n" + '{"run": 2, "ta'
    path.write_text(text)
    with pytest.raises(UserError, match="torn last line"):
        results.read_records(path)
    found = results.read_file(path, allow_torn_tail=True)
    assert [r["run"] for r in found.records] == [1] and found.torn_line == 2
    assert path.read_text() == text  # reading never writes
    results.drop_torn_tail(found)
    assert "dropped a torn last line" in capsys.readouterr().err
    assert path.read_text().count("\n") == 1  # the torn line is gone from the file


def test_a_run_recorded_twice_is_bad_input_naming_both_lines(tmp_path):
    path = tmp_path / "task-001-x.jsonl"
    path.write_text("".join(json.dumps(_rec(n, "pass")) + "\n" for n in (1, 2, 1)))
    with pytest.raises(UserError, match=r"task-001-x.jsonl:3: run: run 1 recorded twice \(also at line 1\)"):
        results.read_records(path)


def test_a_run_beyond_what_was_asked_is_bad_input(tmp_path):
    path = tmp_path / "task-001-x.jsonl"
    lines = [{**_rec(n, "pass"), "k": 5, "requested": 5} for n in (1, 2, 3, 4, 5)]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert len(results.read_records(path)) == 5
    path.write_text("".join(json.dumps(r) + "\n" for r in [*lines, {**lines[0], "run": 999}]))
    with pytest.raises(UserError, match=r"task-001-x.jsonl:6: run: run 999 is beyond the runs asked"):
        results.read_records(path)
    # an errored run keeps its number, so one more number is in range per error
    errored = [{**lines[0], "status": "error", "passed": False}, *lines[1:], {**lines[0], "run": 6}]
    path.write_text("".join(json.dumps(r) + "\n" for r in errored))
    assert [r["run"] for r in results.read_records(path)] == [1, 2, 3, 4, 5, 6]


def test_a_line_of_another_agent_is_bad_input(tmp_path):
    path = tmp_path / "task-001-x.jsonl"
    path.write_text(json.dumps(_rec(1, "pass")) + "\n"
                    + json.dumps({**_rec(2, "pass"), "agent": "noop"}) + "\n")
    with pytest.raises(UserError, match=r"task-001-x.jsonl:2: agent: agent 'noop', but line 1 has"):
        results.read_records(path)


def test_a_corrupt_middle_line_gets_advice_that_works(tmp_path):
    path = tmp_path / "task-001-x.jsonl"
    path.write_text(json.dumps(_rec(1, "pass")) + "\n{oops\n" + json.dumps(_rec(2, "pass")) + "\n")
    with pytest.raises(UserError, match="task-001-x.jsonl:2") as info:
        results.read_file(path, allow_torn_tail=True)
    assert "--fresh" in str(info.value) and "rerun with --resume" not in str(info.value)


@pytest.mark.parametrize("line, message", [
    ('{"run": 1}', "task: missing field"),
    (json.dumps({**_rec(1, "pass"), "status": "maybe"}), "status: expected one of"),
    (json.dumps({**_rec(0, "pass")}), "run: expected a run number >= 1"),
    (json.dumps({**_rec(1, "pass"), "passed": "yes"}), "passed: expected bool"),
    ("[1, 2]", "expected a JSON object per line"),
])
def test_results_reader_names_line_and_field(tmp_path, line, message):
    path = tmp_path / "task-001-x.jsonl"
    path.write_text(line + "\n" + json.dumps(_rec(2, "pass")) + "\n")
    with pytest.raises(UserError, match=message) as info:
        results.read_records(path)
    assert f"{path}:1" in str(info.value)


def test_run_tests_requires_each_named_test_to_pass(tmp_path, monkeypatch):
    from ci_eval.checks import run_tests

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('d', ['Wed, 21 Oct'])\n"
        "def test_ok(d):\n    assert d\n"
        "def test_bad():\n    assert False\n"
        "@pytest.mark.skip\ndef test_skipped():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    assert run_tests(fail_to_pass=["tests/test_a.py::test_ok[Wed, 21 Oct]"]).ok
    result = run_tests(fail_to_pass=iter(["tests/test_a.py::test_skipped"]),
                       pass_to_pass=["tests/test_a.py::test_bad"])
    assert not result.ok
    # a skipped fail_to_pass test did not pass (SWE-bench semantics), named as such
    assert "test_skipped SKIPPED (fail_to_pass)" in result.reason
    assert "test_bad FAILED (pass_to_pass)" in result.reason
    missing = run_tests(pass_to_pass=["tests/test_a.py::test_nope"])
    assert not missing.ok and "no evidence the tests ran" in missing.reason


def test_add_hidden_tests_copies_from_the_task_folder(tmp_path, monkeypatch):
    from ci_eval.checks import add_hidden_tests, step

    task = tmp_path / "task"
    (task / "hidden_tests").mkdir(parents=True)
    (task / "hidden_tests" / "test_h.py").write_text("def test_h():\n    pass\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("CI_EVAL_TASK_DIR", str(task))
    assert add_hidden_tests("test_h.py") == "tests/test_h.py"
    # laid in for each step only (issue #31, item 1)
    assert not (workspace / "tests" / "test_h.py").exists()
    with step():
        assert (workspace / "tests" / "test_h.py").read_text().startswith("def test_h")
    assert not (workspace / "tests").exists()


def test_summary_every_field_of_a_mixed_task():
    """One task's whole summary, field by field: what report, compare and the PR comment show."""
    records = [
        _rec(1, "pass", tokens=10, wall_seconds=1.0, agent_exit_code=0, rubric_score=90.0,
             rubric_verdict="PASS", rubric_tripped=[], rubric_auto_fail=[]),
        _rec(2, "fail", tokens=30, wall_seconds=3.0, reason="FAIL: test_x", agent_exit_code=1,
             rubric_score=60.0, rubric_verdict="FAIL", rubric_tripped=["tests"],
             rubric_auto_fail=["no-test-tampering"]),
        _rec(3, "fail", wall_seconds=2.0, reason="FAIL: test_x", agent_exit_code=2),
        _rec(4, "pass", wall_seconds=4.0),
        _rec(5, "error", reason="checks crashed"),
        _rec(6, "timeout", wall_seconds=9.0),
    ]
    s = summarize("task-001-x", records, k=4)  # 5 lines of k=4: the errored run is asked again
    assert s.to_json() == {
        "task": "task-001-x", "requested": 6, "runs": 5, "passes": 2, "fails": 2, "timeouts": 1,
        "errors": 1, "pass_rate": 0.4, "pass_at_1": 0.4,
        "pass_at_k": 1.0, "pass_hat_k": 0.0, "k": 4, "pass_at_k_label": "pass@4 (unbiased)",
        "mean_tokens": 20.0, "mean_wall_seconds": 3.8, "p95_wall_seconds": 9.0,
        "total_cost_usd": None, "error_reasons": ["checks crashed"], "agents": ["a"],
        "failure_reasons": [{"reason": "FAIL: test_x", "runs": 2},
                            {"reason": "checks crashed", "runs": 1},
                            {"reason": "(timeout)", "runs": 1}], "agent_nonzero": 2,
        "rubric_runs": 2, "mean_rubric_score": 75.0,
        "rubric_tripped": [{"criterion": "tests", "runs": 1}],
        "rubric_auto_fail": [{"criterion": "no-test-tampering", "runs": 1}],
        "inconclusive": True,
        # valid runs only (the errored run's nothing), cost left out: no run reported one
        "distributions": {"tokens": {"n": 2, "mean": 20.0, "sd": 14.1421, "log_mean": 2.85189,
                                     "log_sd": 0.776836, "values": [10.0, 30.0]},
                          "wall_seconds": {"n": 5, "mean": 3.8, "sd": 3.11448,
                                           "log_mean": 1.07506, "log_sd": 0.815213,
                                           "values": [1.0, 2.0, 3.0, 4.0, 9.0]}},
        "total_tokens": 40, "total_wall_seconds": 19.0,
    }


def test_summary_of_nothing_asks_nothing():
    s = summarize("task-001-x", [])
    assert (s.requested, s.runs, s.pass_rate, s.pass_at_1, s.pass_at_k, s.pass_hat_k) == (
        0, 0, None, None, None, None)
    assert not s.inconclusive
