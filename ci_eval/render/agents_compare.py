"""Render `compare --against`: two agents' results on the same tasks side by side (terminal
table, markdown, JSON). The verdict is the gate's (verdict/against.py makes the other agent's
runs the baseline); here its "baseline" columns are named after that agent, and each task gets
its per-run cost, wall and tokens on both sides (arithmetic means of the valid runs) beside the
gate's judgement of them (ratio and status of verdict/axes.py)."""

from __future__ import annotations

import json

from ci_eval.render.compare import fmt_delta, fmt_rate, render_json, verdict_line
from ci_eval.render.inert import code_span
from ci_eval.render.terminal import simple_table
from ci_eval.verdict.axes import AxisVerdict
from ci_eval.verdict.model import TaskVerdict, Verdict

FORMATS = ("table", "markdown", "json")
UNITS = {"cost": "$", "tokens": "", "wall": "s"}


def render(verdict: Verdict, fmt: str) -> str:
    if fmt == "table":
        return render_table(verdict)
    if fmt == "markdown":
        return render_markdown(verdict)
    if fmt == "json":
        return render_json_side_by_side(verdict)
    raise ValueError(f"unknown format {fmt!r}")


def names(verdict: Verdict) -> tuple[str, str]:
    """(the other agent, this one): the --against folder's agent and the --results folder's."""
    return (verdict.baseline_agent or "against", verdict.agent or "results")


def _amount(axis: str, value: float | None) -> str:
    if value is None:
        return "—"
    if UNITS[axis] == "$":
        return f"${value:.4f}"
    if UNITS[axis] == "s":
        return f"{value:.1f}s"
    return f"{value / 1000:.1f}k" if value >= 1000 else f"{value:.0f}"


def _means(a: AxisVerdict) -> tuple[float | None, float | None]:
    return (a.baseline.mean if a.baseline else None, a.current.mean if a.current else None)


def fmt_side_by_side(a: AxisVerdict) -> str:
    """"$0.0120 → $0.0310 (×2.58 regressed)": the means per run, then the gate's judgement
    when it saw a change."""
    then, now = _means(a)
    text = f"{_amount(a.axis, then)} → {_amount(a.axis, now)}"
    if a.status in ("regressed", "improved"):
        text += f" (×{a.ratio:.2f} {a.status})"
    return text


def _axes(t: TaskVerdict) -> dict[str, AxisVerdict]:
    return {a.axis: a for a in t.axes}


def row(t: TaskVerdict) -> list[str]:
    axes = _axes(t)
    cells = [fmt_side_by_side(axes[axis]) if axis in axes else "—"
             for axis in ("cost", "wall", "tokens")]
    return [t.task, t.status, fmt_rate(t.baseline_passes, t.baseline_runs),
            fmt_rate(t.passes, t.runs), fmt_delta(t.delta), *cells, t.note]


def columns(other: str, this: str) -> tuple[str, ...]:
    return ("Task", "Status", other, this, "Δ", "Cost per run", "Wall per run",
            "Tokens per run", "Note")


def totals(verdict: Verdict) -> list[str]:
    """One line per agent: valid runs passed and what all its runs cost."""
    other, this = names(verdict)
    against = verdict.against
    if against is None:  # not a comparison of two agents
        return []
    lines = []
    for name, passes, runs, cost in (
            (other, against.passes, against.runs, against.total_cost_usd),
            (this, sum(t.passes or 0 for t in verdict.tasks),
             sum(t.runs or 0 for t in verdict.tasks), verdict.total_cost_usd)):
        spent = "cost unknown" if cost is None else f"${cost:.4f} in all"
        lines.append(f"{name}: {passes}/{runs} valid runs passed, {spent}")
    return lines


def render_table(verdict: Verdict) -> str:
    other, this = names(verdict)
    rule = f"{this} against {other} (the gate's rule: {verdict.rules.describe()})"
    lines = [verdict_line(verdict, emoji=False), rule, *totals(verdict), *verdict.notes, ""]
    if verdict.tasks:
        lines.append(simple_table([row(t) for t in verdict.tasks], columns(other, this)))
    evidence = [f"  {t.task}: {a.evidence}" for t in verdict.tasks for a in t.axes
                if a.status in ("regressed", "improved")]
    if evidence:
        lines += ["", "Evidence:", *evidence]
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(verdict: Verdict) -> str:
    other, this = names(verdict)
    head = columns(code_span(other, in_table=True), code_span(this, in_table=True))
    rule = f"{code_span(this)} against {code_span(other)}: {_md_cell(verdict.rules.describe())}"
    lines = [f"### {verdict_line(verdict, quote=code_span)}", "", rule, ""]
    lines += [f"- {_md_cell(line)}" for line in (*totals(verdict), *verdict.notes)]
    lines += ["", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for t in verdict.tasks:
        cells = row(t)
        cells[0] = code_span(cells[0], in_table=True)
        cells[-1] = _md_cell(cells[-1])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_json_side_by_side(verdict: Verdict) -> str:
    """The gate's JSON (render/compare.render_json, "baseline" being the other agent) with
    "against": both agents' totals and each task's means per run on both sides."""
    against = verdict.against
    if against is None:  # not a comparison of two agents: the gate's JSON as it is
        return render_json(verdict)
    data = json.loads(render_json(verdict))
    data["against"] = {
        "agent": verdict.baseline_agent, "results": str(against.results_dir),
        "passes": against.passes, "runs": against.runs,
        "total_cost_usd": against.total_cost_usd,
        "tasks": {t.task: {axis: dict(zip(("against", "results"), _means(a)))
                           for axis, a in _axes(t).items()} for t in verdict.tasks}}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
