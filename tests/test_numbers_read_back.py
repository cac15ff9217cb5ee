"""Issue #31, item 9: numbers read back from files this run did not write (history summaries,
baselines) are bounded as results already are (ci_eval/results/records.py, NUMBER_LIMITS): two
costs of 1e308 once made `history site` exit 3 (an infinite total), and a summary claiming
2e8 runs made it hang on math.comb. Now each is bad input naming the file and the field (exit
2), and pass@k / pass^k of large pooled counts take no time."""

from __future__ import annotations

import json
import time

import pytest
from harness_helpers import cli

from ci_eval.results import stats


def _summary(tasks: dict, second: int = 1) -> str:
    return json.dumps({"format": "ci-eval-run-summary", "schema_version": 1,
                       "date": "2026-03-01", "recorded_at": f"2026-03-01T12:00:0{second}Z",
                       "commit": None, "agent": "a", "ci_eval_version": "0.1.0",
                       "tasks": tasks})


def _task(**fields) -> dict:
    return {"runs": 5, "passes": 5, "errors": 0, "requested": 5, "status": "pass", **fields}


@pytest.mark.parametrize("fields, field, expected", [
    ({"cost_usd": 1e308}, "cost_usd", "number 0-1000000000000, got 1e+308"),
    ({"runs": 200_000_000, "passes": 10_000_000, "requested": 1_000_000, "status": "fail"},
     "passes", "integer 0-1000000, got 10000000"),
    ({"tokens": 10**30}, "tokens", "integer 0-1000000000000000000"),
    ({"wall_seconds": 1e300}, "wall_seconds", "number 0-10000000000000"),
    ({"errors": 10**9}, "errors", "integer 0-1000000"),
], ids=["cost", "runs", "tokens", "wall", "errors"])
@pytest.mark.parametrize("command", [("history", "site", "--out", "site"), ("history", "show")])
def test_a_summary_beyond_the_bounds_is_bad_input(tmp_path, fields, field, expected, command):
    (tmp_path / "tasks").mkdir()
    history = tmp_path / "history"
    history.mkdir()
    tasks = {"task-001-a": _task(**fields), "task-002-b": _task(**fields)}
    (history / "2026-03-01-001-a.json").write_text(_summary(tasks))
    started = time.monotonic()
    proc = cli(*command, "--root", str(tmp_path), "--history", "history", cwd=tmp_path,
               timeout=60)
    assert time.monotonic() - started < 30
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"2026-03-01-001-a.json: $.tasks.task-001-a.{field}: expected {expected}" in proc.stderr


def test_the_largest_bounded_history_draws_in_time(tmp_path):
    """Many summaries at the bound: pooled runs in the millions, k in the hundred thousands."""
    (tmp_path / "tasks").mkdir()
    history = tmp_path / "history"
    history.mkdir()
    for second in range(1, 6):
        task = _task(runs=1_000_000, passes=400_000, requested=1_000_000, status="fail",
                     cost_usd=1e12, wall_seconds=1e13, tokens=10**18)
        (history / f"2026-03-01-00{second}-a.json").write_text(
            _summary({"task-001-a": task, "task-002-b": task}, second))
    started = time.monotonic()
    proc = cli("history", "site", "--root", str(tmp_path), "--history", "history", "--out",
               "site", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 60
    assert "2 flaky" in proc.stdout


@pytest.mark.parametrize("entry, field, expected", [
    ({"runs": 200_000_000, "passes": 1}, "runs", "integer 1-1000000"),
    ({"avg_wall_seconds": 1e308}, "avg_wall_seconds", "got 1e+308"),
])
def test_a_baseline_beyond_the_bounds_is_bad_input(tmp_path, entry, field, expected):
    (tmp_path / "tasks").mkdir()
    base = {"passes": 4, "runs": 5, "pass_rate": 0.8, "avg_tokens": None,
            "avg_wall_seconds": 1.0, "recorded": "2026-11-29",
            "prompt_hash": "sha256:" + "0" * 64, **entry}
    (tmp_path / "baseline.json").write_text(json.dumps(
        {"schema_version": 2, "agent": "a", "tasks": {"task-001-a": base}}))
    proc = cli("baseline", "show", "--root", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"$.tasks.task-001-a.{field}: expected" in proc.stderr and expected in proc.stderr


@pytest.mark.parametrize("n, c, k", [(5, 3, 2), (40, 17, 5), (1000, 1, 1000), (12, 12, 12)])
def test_pass_at_k_small_counts_stay_exact(n, c, k):
    from math import comb

    assert stats.pass_at_k(n, c, k) == (1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k))
    assert stats.pass_hat_k(n, c, k) == comb(c, k) / comb(n, k)


def test_pass_at_k_large_counts_agree_with_the_exact_value():
    from fractions import Fraction
    from math import comb

    n, c, k = 3000, 2990, 40
    exact_hat = float(Fraction(comb(c, k), comb(n, k)))
    assert stats.pass_hat_k(n, c, k) == pytest.approx(exact_hat, rel=1e-9)
    exact_at = 1 - float(Fraction(comb(n - c, k), comb(n, k)))
    assert stats.pass_at_k(n, c, k) == pytest.approx(exact_at, rel=1e-9)
    started = time.monotonic()
    assert 0.0 <= stats.pass_hat_k(10**11, 4 * 10**10, 10**6) <= 1.0
    assert stats.pass_at_k(10**11, 4 * 10**10, 10**6) == pytest.approx(1.0)
    assert time.monotonic() - started < 1
