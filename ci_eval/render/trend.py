"""Compact trends of a task's last CI runs (pure): a sparkline of pass rates and the counts.

    sparkline([Fraction(1), Fraction(3, 5), None, Fraction(0)])  ->  "█▅·▁"
    counts(points)                                               ->  "5/5 3/5 — 0/5"

Levels: a pass rate r is the bar ▁▂▃▄▅▆▇█ number round(7·r) (exact fractions: 0 is ▁, 1 is █,
0.8 is ▇, 0.6 is ▅, 0.4 is ▄); a run in which the task had no valid run is "?"; a run without
the task at all is "·".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from math import floor

from ci_eval.results.history import (
    RunSummary,
    TaskRecord,
    suite_cost,
    suite_rate,
    task_points,
    tasks_in,
)

BARS = "▁▂▃▄▅▆▇█"
NOT_RUN = "·"
NO_VALID_RUNS = "?"
DEFAULT_LIMIT = 10
CHART_RUNS = 20  # runs in the step summary's mermaid charts


def bar(rate: Fraction) -> str:
    """The sparkline character of one pass rate (0..1)."""
    level = floor(Fraction(rate) * (len(BARS) - 1) + Fraction(1, 2))
    return BARS[max(0, min(len(BARS) - 1, level))]


def sparkline(rates: Iterable[Fraction | None]) -> str:
    """One character per run, oldest first; None = the task was not in that run."""
    return "".join(NOT_RUN if r is None else bar(r) for r in rates)


def trend_line(points: Sequence[TaskRecord | None]) -> str:
    """The sparkline of a task's records (oldest first), "?" where it had no valid run."""
    return "".join(NOT_RUN if p is None else NO_VALID_RUNS if not p.runs
                   else bar(Fraction(p.passes, p.runs)) for p in points)


def counts(points: Sequence[TaskRecord | None]) -> str:
    """"5/5 5/5 4/5", "—" where the task was not run; errored runs noted as "+1e"."""
    cells = []
    for point in points:
        if point is None:
            cells.append("—")
            continue
        cell = f"{point.passes}/{point.runs}"
        if point.errors:
            cell += f"+{point.errors}e"
        cells.append(cell)
    return " ".join(cells)


def trends(summaries: Sequence[RunSummary], limit: int = DEFAULT_LIMIT) -> dict[str, str]:
    """task id -> sparkline over the last `limit` summaries (oldest first): what the PR
    comment's optional History column shows (render.compare.render(..., trends=...))."""
    recent = list(summaries)[-limit:] if limit else list(summaries)
    return {task: trend_line(task_points(recent, task)) for task in tasks_in(recent)}


def trend_rows(summaries: Sequence[RunSummary], limit: int = DEFAULT_LIMIT,
               tasks: Iterable[str] | None = None) -> list[dict]:
    """Per task (sorted): its sparkline, counts and last status over the last `limit` runs."""
    recent = list(summaries)[-limit:] if limit else list(summaries)
    rows = []
    for task in sorted(set(tasks) if tasks is not None else tasks_in(recent)):
        points = task_points(recent, task)
        last = next((p for p in reversed(points) if p is not None), None)
        rows.append({
            "task": task,
            "sparkline": trend_line(points),
            "counts": counts(points),
            "passed_every_run": sum(1 for p in points if p is not None and p.passed_every_run),
            "runs": len(points),
            "last_status": last.status if last else None,
            "points": [None if p is None else {**p.to_json(), "date": s.date}
                       for p, s in zip(points, recent)],
        })
    return rows


def window_note(summaries: Sequence[RunSummary], shown: int) -> str:
    """"12 run summaries; the last 10 shown (2026-01-01 … 2026-03-01)"."""
    if not summaries:
        return "no run summaries"
    recent = list(summaries)[-shown:] if shown else list(summaries)
    span = recent[0].date if len(recent) == 1 else f"{recent[0].date} … {recent[-1].date}"
    return (f"{len(summaries)} run summar{'y' if len(summaries) == 1 else 'ies'}; "
            f"the last {len(recent)} shown ({span})")



def _mermaid_label(index: int) -> str:
    """An x-axis label: the run's place in the history, quoted for mermaid (short and unique:
    20 dates side by side overlap, and equal labels would merge)."""
    return f'"#{index}"'


def mermaid_charts(summaries: Sequence[RunSummary], limit: int = CHART_RUNS) -> str:
    """Two mermaid xychart-beta blocks (GitHub renders them in markdown): the suite's pass rate
    (every task's valid runs pooled) and its cost per run, over the last `limit` summaries, the
    last one being this run. A run that recorded no cost is drawn at 0 and said so."""
    recent = list(summaries)[-limit:]
    if not recent:
        return ""
    first = len(summaries) - len(recent) + 1
    labels = ", ".join(_mermaid_label(first + i) for i in range(len(recent)))
    rates = [suite_rate(s) for s in recent]
    shown = ", ".join("0" if r is None else f"{float(r) * 100:.1f}" for r in rates)
    span = recent[0].date if len(recent) == 1 else f"{recent[0].date} … {recent[-1].date}"
    out = (f"\n#### Trend: the last {len(recent)} recorded run(s), this one last\n\n"
           f"Runs #{first}–#{first + len(recent) - 1} of the history, {span}.\n\n"
           "```mermaid\nxychart-beta\n    title \"Suite pass rate (%)\"\n"
           f"    x-axis [{labels}]\n    y-axis \"pass rate (%)\" 0 --> 100\n"
           f"    line [{shown}]\n```\n")
    costs = [suite_cost(s) for s in recent]
    if any(c is not None for c in costs):
        values = ", ".join("0" if c is None else f"{c:.4g}" for c in costs)
        out += ("\n```mermaid\nxychart-beta\n    title \"Cost per CI run (USD)\"\n"
                f"    x-axis [{labels}]\n    y-axis \"USD\"\n    bar [{values}]\n```\n")
        missing = sum(c is None for c in costs)
        if missing:
            out += f"\n{missing} of these run(s) recorded no cost (drawn at 0).\n"
    return out
