"""render/dashboard.py: what the dashboard decides (pure) — the change since the baseline and
its order, the cells below a task's own rate, flakiness against the task's own rate, the
baseline / harness / agent marks, usage trends, and bounds on every number read."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pytest

from ci_eval.render.dashboard import bounded, dashboard_data, harness_digest
from ci_eval.render.site import _script_json
from ci_eval.results import stats
from ci_eval.results.history import RunSummary, TaskRecord
from ci_eval.verdict.baseline import Baseline, BaselineEntry


def record(task, passes, runs=5, errors=0, **usage):
    return TaskRecord(task, runs, passes, errors, runs, **usage)


def summary(day, records, agent="claude", **extra):
    return RunSummary(date=f"2026-10-{day:02d}", recorded_at=f"2026-10-{day:02d}T10:00:00Z",
                      commit=f"{day:040x}", agent=agent, ci_eval_version="0",
                      tasks={r.task: r for r in records}, **extra)


def history(rows: dict[str, list[int]], runs: int = 5, **usage) -> list[RunSummary]:
    """task -> passes per CI run (of `runs` each; None: the task was not in that run)."""
    length = len(next(iter(rows.values())))
    return [summary(i + 1, [record(t, p[i], runs, **usage) for t, p in rows.items()
                            if p[i] is not None]) for i in range(length)]


def baseline_of(counts: dict[str, tuple[int, int]], recorded="2026-10-03") -> Baseline:
    return Baseline("claude", {t: BaselineEntry(t, p, n, recorded, "sha256:" + "0" * 64)
                               for t, (p, n) in counts.items()})


def by_task(data):
    return {row["task"]: row for row in data["tasks"]}


def test_binomial_tail_is_exact_and_one_sided():
    assert stats.binomial_tail(4, 5, 0.97) == pytest.approx(1 - 0.97 ** 5)
    assert stats.binomial_tail(3, 5, 0.6, upper=True) == pytest.approx(
        sum(math.comb(5, i) * 0.6 ** i * 0.4 ** (5 - i) for i in range(3, 6)))
    assert stats.binomial_tail(5, 5, 0.2) == 1.0 and stats.binomial_tail(0, 5, 1.0) == 0.0
    # beyond the exact limit the normal approximation agrees closely
    assert stats.binomial_tail(4900, 10000, 0.5) == pytest.approx(0.0228, abs=2e-3)
    with pytest.raises(ValueError):
        stats.binomial_tail(6, 5, 0.5)


def test_a_drop_since_the_baseline_is_listed_first_and_noise_is_not():
    rows = {"task-001-steady": [5] * 10,
            "task-002-drops": [5] * 7 + [1, 2, 1],
            "task-003-one-fail": [5] * 9 + [4]}
    data = dashboard_data(history(rows), baseline=baseline_of(
        {"task-001-steady": (40, 40), "task-002-drops": (40, 40), "task-003-one-fail": (40, 40)}))
    assert data["tasks"][0]["task"] == "task-002-drops"
    tasks = by_task(data)
    drop = tasks["task-002-drops"]["change"]
    assert drop["verdict"] == "worse" and drop["reference"] == "baseline"
    assert (drop["recent_passes"], drop["recent_runs"]) == (4, 15) and drop["p_value"] < 1e-6
    assert drop["delta"] == pytest.approx(4 / 15 - 1, abs=1e-4)
    # one fail among 15 recent runs of a task that never failed before: not a clear change
    assert tasks["task-003-one-fail"]["change"]["verdict"] == "same"
    assert tasks["task-001-steady"]["change"]["verdict"] == "same"


def test_without_a_baseline_a_task_is_compared_with_its_own_earlier_runs():
    data = dashboard_data(history({"task-001-x": [5, 5, 5, 5, 5, 5, 0, 0, 0],
                                   "task-002-new": [None] * 8 + [5]}))
    change = by_task(data)["task-001-x"]["change"]
    assert change["reference"] == "earlier runs" and change["verdict"] == "worse"
    assert (change["reference_passes"], change["reference_runs"]) == (30, 30)
    # a task seen only in its recent runs has nothing to compare with
    assert by_task(data)["task-002-new"]["change"]["verdict"] == "unknown"
    assert data["baseline"] is None


def test_a_cell_is_marked_when_below_the_tasks_own_rate():
    data = dashboard_data(history({"task-001-x": [5] * 8 + [0, 4]}))
    cells = by_task(data)["task-001-x"]["cells"]
    assert [c["below"] for c in cells] == [False] * 8 + [True, False]
    # a coin-flip task's 1/5 is what its own rate predicts
    coin = dashboard_data(history({"task-001-coin": [3, 2, 3, 4, 1, 3, 2, 3, 3, 2]}))
    assert not any(c["below"] for c in by_task(coin)["task-001-coin"]["cells"])


def test_flaky_is_judged_against_the_tasks_own_rate():
    rows = {"task-001-coin": [3, 2, 3, 4, 2, 3, 2, 3, 3, 2, 4, 3],  # 0.57: flaky
            "task-002-one-fail": [5] * 11 + [4],  # 59/60: fails as rarely as it should
            "task-003-never": [5] * 12,
            "task-004-drift": [5] * 9 + [0, 1, 0]}  # a drop, not flakiness
    data = dashboard_data(history(rows))
    assert [f["task"] for f in data["flaky"]] == ["task-001-coin"]
    coin = data["flaky"][0]
    assert (coin["passes"], coin["runs"], coin["k"]) == (34, 60, 5)
    assert coin["low"] < coin["rate"] < coin["high"] < 0.75
    assert coin["fail_chance"] == pytest.approx(1 - (34 / 60) ** 5, abs=1e-4)
    assert by_task(data)["task-004-drift"]["change"]["verdict"] == "worse"


def test_the_baseline_mark_is_the_first_run_after_it_was_recorded():
    data = dashboard_data(history({"task-001-x": [5] * 6, "task-002-y": [5] * 6}),
                          baseline=baseline_of({"task-001-x": (5, 5)}, recorded="2026-10-03"))
    assert by_task(data)["task-001-x"]["baseline_index"] == 4
    assert by_task(data)["task-001-x"]["baseline_recorded"] == "2026-10-03"
    assert by_task(data)["task-002-y"]["baseline_index"] is None
    assert data["baseline"] == {"agent": "claude", "tasks": 1, "recorded": ["2026-10-03"]}


@dataclass(frozen=True)
class WithHarness(RunSummary):
    """A run summary that records the harness digest (the field another branch adds)."""

    harness: object = None


def test_harness_changes_are_marked_between_consecutive_runs_that_record_a_digest():
    tasks = [record("task-001-x", 5)]
    runs = [summary(1, tasks), *[WithHarness(**{**summary(i, tasks).__dict__, "harness": h})
                                 for i, h in ((2, "sha256:aa"), (3, "sha256:aa"),
                                              (4, {"digest": "sha256:bb"}), (5, None),
                                              (6, "sha256:cc"))]]
    columns = dashboard_data(runs)["runs"]
    assert [c["harness_changed"] for c in columns] == [False, False, False, True, False, False]
    assert [c["harness"] for c in columns] == [None, "sha256:aa", "sha256:aa", "sha256:bb",
                                               None, "sha256:cc"]
    assert harness_digest(summary(1, tasks)) is None


def test_agent_changes_are_marked_and_runs_are_numbered_in_history_order():
    runs = [summary(1, [record("task-001-x", 5)]), summary(2, [record("task-001-x", 5)]),
            summary(3, [record("task-001-x", 0)], agent="noop")]
    columns = dashboard_data(runs)["runs"]
    assert [c["index"] for c in columns] == [1, 2, 3]
    assert [c["agent_changed"] for c in columns] == [False, False, True]


def test_usage_trends_per_agent_run_and_their_change():
    runs = history({"task-001-x": [5] * 6}, cost_usd=0.5, wall_seconds=10.0)
    runs += history({"task-001-x": [5] * 3}, cost_usd=1.5, wall_seconds=10.0)
    row = by_task(dashboard_data(runs))["task-001-x"]
    assert row["cells"][0]["cost"] == 0.1 and row["cells"][0]["wall"] == 2.0
    assert row["cost"] == {"reference": 0.1, "recent": 0.3, "ratio": 3.0}
    assert row["wall"]["ratio"] == 1.0
    no_cost = dashboard_data(history({"task-001-x": [5] * 3}))
    assert no_cost["has_cost"] is False and no_cost["has_wall"] is False


@pytest.mark.parametrize("value, cap, expected", [
    (1.5, 10, 1.5), (0, 10, 0.0), (11, 10, None), (-1, 10, None), (math.inf, 1e9, None),
    (math.nan, 1e9, None), (10 ** 400, 1e9, None), (True, 10, None), ("3", 10, None)])
def test_bounded(value, cap, expected):
    assert bounded(value, cap) == expected


def test_odd_numbers_are_left_out_not_drawn_or_summed():
    """Values a hand-edited or hostile summary may hold: huge counts, huge or endless usage."""
    odd = [record("task-001-x", 10 ** 30, runs=10 ** 30),
           record("task-002-y", 5, cost_usd=1e308, wall_seconds=math.inf, tokens=10 ** 40)]
    runs = [summary(1, odd), summary(2, odd)]
    data = dashboard_data(runs, baseline=baseline_of({"task-001-x": (40, 40)}))
    rows = by_task(data)
    assert rows["task-001-x"]["cells"] == [{"unreadable": True}, {"unreadable": True}]
    assert rows["task-001-x"]["change"]["verdict"] == "unknown"
    cell = rows["task-002-y"]["cells"][0]
    assert cell["cost"] is None and cell["wall"] is None and cell["tokens"] is None
    assert data["runs"][0]["runs"] == 5 and data["has_cost"] is False
    json.loads(_script_json(data))  # finite, JSON-able


def drift_record(task, passes, drifted, base=(9, 10), runs=5):
    return TaskRecord(task, runs, passes, 0, runs, drifted=drifted, baseline_passes=base[0],
                      baseline_runs=base[1])


def test_main_against_its_baseline_per_run_with_the_drifted_runs_marked():
    runs = [summary(1, [record("task-001-a", 5), record("task-002-b", 5)]),  # before drift
            summary(2, [drift_record("task-001-a", 5, False), drift_record("task-002-b", 1, True)]),
            summary(3, [drift_record("task-001-a", 1, True), drift_record("task-002-b", 0, True)]),
            summary(4, [drift_record("task-002-b", 2, True)])]  # task-001 not run
    data = dashboard_data(runs, refresh_after=3)
    assert data["settings"]["refresh_after"] == 3
    first, second = data["drift"]
    assert first["task"] == "task-002-b" and first["streak"] == 3 and first["refresh_due"]
    assert first["points"][0] is None  # the run before drift was recorded
    assert first["points"][1] == {"passes": 1, "runs": 5, "rate": 0.2, "baseline_passes": 9,
                                  "baseline_runs": 10, "baseline_rate": 0.9, "drifted": True}
    assert (first["drifted_runs"], first["judged_runs"]) == (3, 3)
    assert first["latest"]["passes"] == 2
    assert second["task"] == "task-001-a" and second["streak"] == 1 and not second["refresh_due"]
    assert second["points"][3] is None and second["latest"]["drifted"] is True
    cells = by_task(data)["task-002-b"]["cells"]
    assert [c["drifted"] for c in cells] == [False, True, True, True]
    assert dashboard_data(runs, refresh_after=4)["drift"][0]["refresh_due"] is False


def test_no_drift_recorded_no_drift_rows_and_out_of_range_baselines_are_left_out():
    assert dashboard_data(history({"task-001-a": [5, 4]}))["drift"] == []
    bad = [summary(1, [drift_record("task-001-a", 1, True, base=(11, 10))]),
           summary(2, [drift_record("task-001-a", 1, True, base=(1, 10**9))])]
    assert dashboard_data(bad)["drift"] == []
