"""What the dashboard (`ci-eval history site`) shows, as plain JSON-able data (pure).

    data = dashboard_data(summaries, baseline=load_baseline(path), archived=archived_tasks(root))

Built for the question "what got worse", from the run summaries of a history folder in their
order (results/history.py: by date, then record time; runs are numbered #1 … #N in that order
and every x axis uses that number, never the record time):
  - a tasks × runs grid: each cell a task's pass rate in one CI run; a cell is marked when it
    is below what the task's own rate so far makes likely (one-sided binomial test against the
    rate of the task's earlier runs, p < CELL_ALPHA): the run where a task started to fail;
  - per task the change since the baseline: the last RECENT_RUNS runs that had the task, pooled,
    against its baseline.json gate value (or, without a baseline entry, against its own earlier
    runs), with the one-sided binomial p-value; the tasks that changed most first (clear drops,
    then clear gains, then the rest, each by the size of the change); the grid uses that order;
  - the runs at which the baseline was recorded, the harness changed (a run summary's harness
    digest differs from the run before; summaries without one mark nothing) and the agent
    changed;
  - per task cost and wall per agent run in each CI run, and their change since the reference;
  - main against its baseline (drift): per task, main's pass rate in each run on the default
    branch beside the baseline it was compared with (the run summary's `drifted` / `baseline`,
    verdict/main_drift.py), the runs where main was below it marked, and the current streak of
    drifted runs; a streak of `refresh_after` (gate.drift_refresh_after) or more is due a
    baseline refresh, as the scheduled baseline workflow decides (main_drift.refresh_due);
  - flaky tasks, judged against the task's own rate: a task with both outcomes and no clear
    change whose rate, even at the top of its 95% interval, leaves a CI run of k runs at least
    FLAKY_CHANCE likely to hold a fail (1 - rate^k). One fail among many passes is not flaky.

Rates used as a test's reference are smoothed, (passes + 1/2) / (runs + 1), so a task that never
failed is not a certainty that any single fail refutes. Every number read from a summary or the
baseline is bounded: a value outside its range (or not finite) is left out, never drawn or summed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from ci_eval.results import stats
from ci_eval.results.history import RunSummary, TaskRecord, tasks_in
from ci_eval.verdict.baseline import Baseline
from ci_eval.verdict.main_drift import current_streak
from ci_eval.verdict.rules import DEFAULT_DRIFT_REFRESH_AFTER

RECENT_RUNS = 3  # the runs "now" is pooled from, per task
ALPHA = 0.01  # a change since the reference is clear below this one-sided p (many tasks)
CELL_ALPHA = 0.01  # a cell is marked below this (many cells: fewer false marks)
FLAKY_CHANCE = 0.2  # flaky: a CI run of k fails at least this often, at the task's own rate
MAX_COUNT = 1_000_000  # runs of one task in one CI run; beyond, the record is left out
MAX_USD = 1e9
MAX_SECONDS = 1e9
MAX_TOKENS = 10**15
MAX_DIGEST_CHARS = 128


def bounded(value: object, cap: float) -> float | None:
    """A number read from a file, if it is finite and within 0..cap; else None (left out)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not 0 <= value <= cap:
        return None
    number = float(value)
    return number if math.isfinite(number) and 0.0 <= number <= cap else None


def _counts(record: TaskRecord | None) -> tuple[int, int, int] | None:
    """(passes, runs, errors) of a record, if within bounds."""
    if record is None:
        return None
    values = (record.passes, record.runs, record.errors)
    if any(bounded(v, MAX_COUNT) is None for v in values) or record.passes > record.runs:
        return None
    return values


def _smoothed(passes: int, runs: int) -> float:
    return (passes + 0.5) / (runs + 1)


def _per_attempt(total: object, cap: float, attempts: int) -> float | None:
    value = bounded(total, cap)
    return None if value is None or attempts < 1 else round(value / attempts, 6)


def harness_digest(summary: RunSummary) -> str | None:
    """The harness digest a run summary records (attribute `harness` or `harness_digest`: a
    string, or a mapping with "digest"), if any; summaries written before harness provenance
    carry none."""
    value = getattr(summary, "harness", None) or getattr(summary, "harness_digest", None)
    if isinstance(value, Mapping):
        value = value.get("digest")
    return value[:MAX_DIGEST_CHARS] if isinstance(value, str) and value else None


def _columns(summaries: Sequence[RunSummary]) -> list[dict]:
    columns: list[dict] = []
    previous: tuple[str | None, str | None] | None = None
    for index, s in enumerate(summaries, 1):
        counts = [c for c in (_counts(r) for r in s.tasks.values()) if c is not None]
        passes, runs = sum(c[0] for c in counts), sum(c[1] for c in counts)
        digest = harness_digest(s)
        before = previous
        columns.append({
            "index": index, "date": s.date, "recorded_at": s.recorded_at, "commit": s.commit,
            "agent": s.agent, "url": (s.ci_run or {}).get("url"), "source": s.source,
            "passes": passes, "runs": runs,
            "pass_rate": round(passes / runs, 4) if runs else None,
            "harness": digest[:12] if digest else None,
            "harness_changed": bool(before and digest and before[0] and before[0] != digest),
            "agent_changed": bool(before and before[1] != s.agent),
        })
        previous = (digest, s.agent)
    return columns


def _reference(task: str, baseline: Baseline | None, earlier: list[tuple[int, int]]):
    """(label, passes, runs) the task's recent runs are compared with: its baseline gate value,
    else its own runs before the recent ones; None when there is neither."""
    entry = baseline.entries.get(task) if baseline else None
    if entry is not None and bounded(entry.runs, 10 * MAX_COUNT) and entry.passes <= entry.runs:
        return ("baseline", entry.passes, entry.runs)
    runs = sum(r for _, r in earlier)
    return ("earlier runs", sum(p for p, _ in earlier), runs) if runs else None


def _change(reference, recent: list[tuple[int, int]]) -> dict:
    passes, runs = sum(p for p, _ in recent), sum(r for _, r in recent)
    change: dict[str, object] = {"recent_passes": passes, "recent_runs": runs, "reference": None,
              "reference_rate": None, "delta": None, "p_value": None, "verdict": "unknown"}
    if reference is None or not runs:
        return change
    label, ref_passes, ref_runs = reference
    ref_rate, rate = ref_passes / ref_runs, passes / runs
    worse = rate < ref_rate
    p_value = stats.binomial_tail(passes, runs, _smoothed(ref_passes, ref_runs), upper=not worse)
    verdict = ("worse" if worse else "better") if p_value < ALPHA and rate != ref_rate else "same"
    change.update(reference=label, reference_passes=ref_passes, reference_runs=ref_runs,
                  reference_rate=round(ref_rate, 4), delta=round(rate - ref_rate, 4),
                  p_value=float(f"{p_value:.3g}"), verdict=verdict)
    return change


def _baseline_index(task: str, baseline: Baseline | None, dates: list[str]) -> int | None:
    """The first run (1-based) after the task's baseline was recorded, if any run is."""
    entry = baseline.entries.get(task) if baseline else None
    if entry is None:
        return None
    return next((i for i, date in enumerate(dates, 1) if date > entry.recorded), None)


def _cell(counts: tuple[int, int, int] | None, record: TaskRecord | None,
          before: tuple[int, int]):
    if counts is None or record is None:  # counts come from a record
        return None if record is None else {"unreadable": True}
    passes, runs, errors = counts
    attempts = runs + errors
    cell = {"passes": passes, "runs": runs, "errors": errors,
            "rate": round(passes / runs, 4) if runs else None,
            "cost": _per_attempt(record.cost_usd, MAX_USD, attempts),
            "wall": _per_attempt(record.wall_seconds, MAX_SECONDS, attempts),
            "tokens": _per_attempt(record.tokens, MAX_TOKENS, attempts), "below": False,
            "drifted": record.drifted is True}
    if runs and before[1]:
        cell["below"] = stats.binomial_tail(passes, runs, _smoothed(*before)) < CELL_ALPHA
    return cell


def _usage_change(cells: list[dict | None], key: str, reference: float | None,
                  recent_runs: int) -> dict:
    values = [c[key] for c in cells if c and c.get(key) is not None]
    if not values:
        return {"reference": None, "recent": None, "ratio": None}
    recent = stats.percentile(values[-recent_runs:], 50)
    if reference is None and len(values) > recent_runs:
        reference = stats.percentile(values[:-recent_runs], 50)
    ratio = round(recent / reference, 3) if reference and recent is not None else None
    return {"reference": None if reference is None else round(reference, 6),
            "recent": recent, "ratio": ratio}


def _flaky(row: dict) -> dict | None:
    passes, runs, k = row["passes"], row["runs"], row["k"]
    if not 0 < passes < runs or row["change"]["verdict"] in ("worse", "better"):
        return None
    low, high = stats.wilson_interval(passes, runs)
    if 1 - high ** k < FLAKY_CHANCE:
        return None
    rate = passes / runs
    return {"task": row["task"], "passes": passes, "runs": runs, "rate": round(rate, 4),
            "low": round(low, 4), "high": round(high, 4), "k": k,
            "fail_chance": round(1 - rate ** k, 4), "cells_below": row["cells_below"]}


def _task_row(task: str, summaries: Sequence[RunSummary], baseline: Baseline | None) -> dict:
    records = [s.tasks.get(task) for s in summaries]
    counts = [_counts(r) for r in records]
    valid = [c for c in counts if c is not None]
    passes, runs = sum(c[0] for c in valid), sum(c[1] for c in valid)
    cells, before = [], (0, 0)  # the task's passes and runs in the runs before this one
    for c, r in zip(counts, records):
        cells.append(_cell(c, r, before))
        if c is not None:
            before = (before[0] + c[0], before[1] + c[1])
    had = [(c[0], c[1]) for c in counts if c is not None and c[1]]
    recent, earlier = had[-RECENT_RUNS:], had[:-RECENT_RUNS]
    entry = baseline.entries.get(task) if baseline else None
    asked = Counter(min(r.requested, MAX_COUNT) for r in records if r is not None)
    ref_cost = None
    if entry is not None and "cost_usd" in entry.distributions:
        ref_cost = bounded(entry.distributions["cost_usd"].mean, MAX_USD)
    return {
        "task": task, "passes": passes, "runs": runs, "cells": cells,
        "k": max(1, asked.most_common(1)[0][0]) if asked else 1,
        "cells_below": sum(1 for c in cells if c and c.get("below")),
        "change": _change(_reference(task, baseline, earlier), recent),
        "baseline_index": _baseline_index(task, baseline, [s.date for s in summaries]),
        "baseline_recorded": entry.recorded if entry else None,
        "cost": _usage_change(cells, "cost", ref_cost, RECENT_RUNS),
        "wall": _usage_change(cells, "wall", bounded(entry.avg_wall_seconds, MAX_SECONDS)
                              if entry else None, RECENT_RUNS),
    }


def _drift_point(record: TaskRecord | None) -> dict | None:
    counts = _counts(record)
    if record is None or counts is None or record.drifted is None or not counts[1]:
        return None
    base_passes, base_runs = record.baseline_passes, record.baseline_runs
    if (base_passes is None or base_runs is None or bounded(base_runs, 10 * MAX_COUNT) is None
            or not base_runs
            or bounded(base_passes, base_runs) is None):
        return None
    passes, runs, _errors = counts
    return {"passes": passes, "runs": runs, "rate": round(passes / runs, 4),
            "baseline_passes": base_passes, "baseline_runs": base_runs,
            "baseline_rate": round(base_passes / base_runs, 4), "drifted": record.drifted}


def _drift_row(task: str, summaries: Sequence[RunSummary], refresh_after: int) -> dict | None:
    """Main's rate against its baseline per run (None where the run did not judge the task)."""
    points = [_drift_point(s.tasks.get(task)) for s in summaries]
    judged = [p for p in points if p is not None]
    if not judged:
        return None
    streak = len(current_streak(summaries, task))
    return {"task": task, "points": points, "drifted_runs": sum(p["drifted"] for p in judged),
            "judged_runs": len(judged), "latest": judged[-1], "streak": streak,
            "refresh_due": streak >= refresh_after}


def _order(row: dict) -> tuple:
    change = row["change"]
    rank = {"worse": 0, "better": 1}.get(change["verdict"], 2)
    return (rank, -abs(change["delta"] or 0.0), row["task"])


def dashboard_data(summaries: Sequence[RunSummary], *, baseline: Baseline | None = None,
                   archived: Sequence[dict] = (),
                   refresh_after: int = DEFAULT_DRIFT_REFRESH_AFTER) -> dict:
    """Everything the page draws (see the module docstring)."""
    rows = sorted((_task_row(task, summaries, baseline) for task in tasks_in(summaries)),
                  key=_order)
    drift = [d for d in (_drift_row(row["task"], summaries, refresh_after) for row in rows) if d]
    drift.sort(key=lambda d: (-d["streak"], not d["latest"]["drifted"], -d["drifted_runs"],
                              d["task"]))
    flaky = [f for f in (_flaky(row) for row in rows) if f is not None]
    flaky.sort(key=lambda f: (-f["fail_chance"], f["task"]))
    cells = [c for row in rows for c in row["cells"] if c]
    return {
        "runs": _columns(summaries), "tasks": rows, "flaky": flaky, "archived": list(archived),
        "drift": drift,
        "has_cost": any(c.get("cost") is not None for c in cells),
        "has_wall": any(c.get("wall") is not None for c in cells),
        "baseline": None if baseline is None else {
            "agent": baseline.agent, "tasks": len(baseline.entries),
            "recorded": sorted({e.recorded for e in baseline.entries.values()})[-3:]},
        "settings": {"recent_runs": RECENT_RUNS, "alpha": ALPHA, "cell_alpha": CELL_ALPHA,
                     "flaky_chance": FLAKY_CHANCE, "refresh_after": refresh_after},
    }
