"""The cells of the compare report (terminal table, PR comment, baseline PR): rates, deltas,
evidence, the cost / tokens / wall verdict, and why no axis could be judged."""

from __future__ import annotations

from fractions import Fraction

from ci_eval.verdict.model import TaskVerdict, Verdict


def fmt_rate(passes: int | None, runs: int | None) -> str:
    if not runs:
        return "—"
    return f"{float(Fraction(passes or 0, runs)):.2f} ({passes}/{runs})"


def fmt_delta(delta: Fraction | None) -> str:
    if delta is None:
        return "—"
    return f"{'+' if delta > 0 else '-' if delta < 0 else '±'}{abs(float(delta)):.2f}"


def fmt_evidence(t: TaskVerdict) -> str:
    interval = t.interval
    if not t.runs or interval is None:
        return f"0 valid runs, {t.errors} error(s)" if t.errors else "no runs"
    low, high = interval
    text = f"{t.passes}/{t.runs} pass, {low:.2f}–{high:.2f}"
    if t.errors:
        text += f", {t.errors} error(s)"
    return text


def fmt_change(delta: float | None, base: float | None, unit: str = "") -> str:
    """+1.2k (+15%) for tokens, +3.1s (+8%) for seconds; — when either side is unknown."""
    if delta is None:
        return "—"
    sign = "+" if delta > 0 else "-" if delta < 0 else "±"
    size = abs(delta)
    if unit:
        amount = f"{size:.1f}{unit}"
    else:
        amount = f"{size / 1000:.1f}k" if size >= 1000 else f"{size:.0f}"
    text = f"{sign}{amount}"
    if base:
        text += f" ({sign}{size / base * 100:.0f}%)"
    return text


def fmt_axes(t: TaskVerdict) -> str:
    """The cost / tokens / wall verdict beside the pass rate: the axes that moved, with their
    ratio to the baseline ("tokens ×3.02 regressed (fails)"), else "unchanged"; "—" when none
    could be judged (axes_note says why, once)."""
    if not t.axes:
        return "—"
    # an axis that fails the gate first: a cell cut to fit the terminal keeps what decides
    shown = sorted((a for a in t.axes if a.status in ("regressed", "improved")),
                   key=lambda a: not (a.fails and t.gated))
    moved = [f"{a.axis} ×{a.ratio:.2f} {a.status}" + (" (fails)" if a.fails and t.gated else "")
             for a in shown]
    if moved:
        return ", ".join(moved)
    known = [a for a in t.axes if a.status != "unknown"]
    if not known:
        return "—"
    return "unchanged" + ("" if len(known) == len(t.axes) else
                          f" ({', '.join(a.axis for a in known)})")


def moved(t: TaskVerdict) -> bool:
    """Shown in the changed table: a status other than unchanged, or an axis that moved."""
    return t.status != "unchanged" or any(a.status in ("regressed", "improved") for a in t.axes)


def row(t: TaskVerdict) -> list[str]:
    return [
        t.task,
        t.status,
        fmt_rate(t.baseline_passes, t.baseline_runs),
        fmt_rate(t.passes, t.runs),
        fmt_delta(t.delta),
        fmt_axes(t),
        fmt_evidence(t),
        fmt_change(t.tokens_delta, t.baseline_tokens),
        fmt_change(t.wall_delta, t.baseline_wall_seconds, "s"),
        t.note,
    ]


def axes_note(verdict: Verdict) -> str:
    """Why cost, tokens and wall were judged for no task (the most common reason), else ""."""
    axes = [a for t in verdict.tasks for a in t.axes]
    if not axes or any(a.status != "unknown" for a in axes):
        return ""
    reasons = [a.why_unknown.split(": ", 1)[-1] for a in axes if a.why_unknown]
    why = max(set(reasons), key=reasons.count) if reasons else "no data"
    return (f"Cost, tokens and wall were not judged for any task: {why}"
            + (" (re-record it with `ci-eval baseline update`)." if "baseline" in why else "."))
