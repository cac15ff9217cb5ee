"""Render a gate Verdict: terminal table, markdown (the PR comment), JSON, JUnit XML.

The markdown starts with COMMENT_MARKER (the GitHub layer finds its sticky comment by it), then
the verdict line, a table of the changed, new or failing tasks (status other than
"unchanged"), the full table in <details>, the rubric section (tasks with rubric.yaml: mean
score, most tripped criteria; a tripped auto-fail gate is also named at the top), calibration warnings and a footer (agent, k,
commit). It never exceeds MAX_COMMENT_CHARS: rows are left out from the end of the full table first, then of the changed
table, and an explicit note says how many. Given `trends` (task id -> a sparkline of its last CI
runs, render.trend.trends(history)), the full table gets a last "History" column.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ci_eval.render.compare_cells import (
    axes_note,
    fmt_axes,
    fmt_delta,
    fmt_evidence,
    fmt_rate,
    moved,
    row,
)
from ci_eval.render.inert import code_span
from ci_eval.render.junit import Case, render_cases
from ci_eval.render.report import MOST_TRIPPED, rubric_line
from ci_eval.render.terminal import cut, fit_table, wrap
from ci_eval.verdict.axes import ALPHA
from ci_eval.verdict.model import TaskVerdict, Verdict

COMMENT_MARKER = "<!-- ci-eval-report -->"
MAX_COMMENT_CHARS = 65_536
FORMATS = ("table", "markdown", "json", "junit")
COLUMNS = ("Task", "Status", "Baseline", "Current", "Δ", "Cost / tokens / wall",
           "Evidence (95% CI)", "Tokens Δ", "Wall Δ", "Note")


def render(verdict: Verdict, fmt: str, *, commit: str | None = None,
           trends: Mapping[str, str] | None = None) -> str:
    """trends (optional): task id -> sparkline, shown in the markdown full table."""
    if fmt == "table":
        return render_table(verdict, commit=commit)
    if fmt == "markdown":
        return render_markdown(verdict, commit=commit, trends=trends)
    if fmt == "json":
        return render_json(verdict, commit=commit)
    if fmt == "junit":
        return render_junit(verdict)
    raise ValueError(f"unknown format {fmt!r}")


def verdict_line(verdict: Verdict, *, emoji: bool = True, quote=str) -> str:
    """The verdict in one line; `quote` renders agent-derived text (code_span in markdown)."""
    counts = " · ".join(f"{n} {status}" for status, n in verdict.counts.items()) or "no tasks"
    failed = len(verdict.failed)
    if verdict.setup_broken is not None:
        head = (f"agent setup broken: {quote(verdict.setup_broken)} (every run failed the same "
                "way; the pass rates say nothing about the agent)")
        text = f"ci-eval: {head}"
        return f"❌ {text}" if emoji else f"FAIL {text}"
    if verdict.passed:
        head = "no regressions"
        mark = "✅"
    else:
        head = f"{failed} of {len(verdict.tasks)} task(s) fail the gate"
        mark = "❌"
    usage = sum(1 for t in verdict.tasks for a in t.axes if a.status == "regressed")
    if usage:
        counts += f" · {usage} cost/tokens/wall regression(s)"
    text = f"ci-eval: {head} — {counts}"
    return f"{mark} {text}" if emoji else ("PASS " if verdict.passed else "FAIL ") + text


def runs_text(verdict: Verdict) -> str:
    """k=5, or "k=5 + 5 confirmation runs" when tasks near the gate were run more (a row then
    shows 0/10, not the 0/5 that k=5 alone suggests)."""
    extra = max((t.requested - verdict.k for t in verdict.tasks if t.requested), default=0)
    if extra <= 0:
        return f"k={verdict.k}"
    runs = "run" if extra == 1 else "runs"
    return f"k={verdict.k} + {extra} confirmation {runs} on tasks near the gate"


def usage_text(verdict: Verdict) -> str:
    """What the runs compared used in all: "12,345 tokens, $0.0421" (unknown when no run said)."""
    tokens = "tokens unknown" if verdict.total_tokens is None else \
        f"{verdict.total_tokens:,} tokens"
    cost = "cost unknown" if verdict.total_cost_usd is None else f"${verdict.total_cost_usd:.4f}"
    return f"in all {tokens}, {cost}"


def footer_items(verdict: Verdict, commit: str | None, run_url: str | None = None, *,
                 quote=str, failed_jobs: Sequence[tuple[str, str, str]] = ()) -> list[str]:
    """`failed_jobs`: (label, conclusion, job URL) of the shard jobs that did not succeed."""
    items = [f"agent {quote(verdict.agent) if verdict.agent else 'unknown'}"]
    if verdict.baseline_agent and verdict.baseline_agent != verdict.agent:
        items.append(f"baseline agent {quote(verdict.baseline_agent)}")
    items.append(runs_text(verdict))
    items.append(usage_text(verdict))
    items.append(f"commit {commit[:12]}" if commit else "commit unknown")
    items.append(verdict.rules.describe() + f" at p < {ALPHA:g}")
    if run_url:
        items.append(f"[workflow run]({run_url}) (its artifacts results-shard-* hold every run)")
    items += [f"[{label}]({url}) ended {conclusion}" for label, conclusion, url in failed_jobs]
    return items


# --- table ------------------------------------------------------------------------------------


def render_table(verdict: Verdict, *, commit: str | None = None) -> str:
    """For a 100-column terminal (render/terminal.py): the pass-rate columns, the 95% interval,
    the cost / tokens / wall verdict where one could be judged; each task's note below the
    table; the token and wall deltas are in the markdown and JSON reports."""
    # the verdict line and the notes stay one line each (scripts grep them)
    lines = [verdict_line(verdict, emoji=False), *verdict.notes]
    unjudged = axes_note(verdict)
    lines += [unjudged] if unjudged else []
    lines.append("")
    if verdict.tasks:
        lines.append(terminal_table(verdict))
    notes = [wrap(f"  {t.task}: {t.note}", indent="    ") for t in verdict.tasks if t.note]
    if notes:
        lines += ["", "Notes:", *notes]
    why = [cut(f"  {t.task}: {t.why}") for t in verdict.tasks
           if t.status != "unchanged" and t.why]
    why += [wrap(f"  {t.task}: {a.evidence}", indent="    ") for t in verdict.tasks
            for a in t.axes if a.status in ("regressed", "improved")]
    if why:
        lines += ["", "Why (the most common reason runs did not pass):", *why]
    graded = [t for t in verdict.tasks if t.rubric_runs]
    if graded:
        lines += [""] + [wrap(rubric_line(t.task, t.rubric_runs, t.rubric_score,
                                          t.rubric_tripped, t.rubric_auto_fail), indent="  ")
                         for t in graded]
    if verdict.calibration:
        lines += ["", "Calibration warnings:"]
        lines += [wrap(f"  {w.message}", indent="    ") for w in verdict.calibration]
    lines += ["", wrap(" · ".join(footer_items(verdict, commit)))]
    return "\n".join(lines) + "\n"


def terminal_table(verdict: Verdict) -> str:
    judged = any(a.status != "unknown" for t in verdict.tasks for a in t.axes)
    headers = ["Task", "Status", "Baseline", "Current", "Δ", "95% CI",
               *(["Cost / tokens / wall"] if judged else [])]
    rows = []
    for t in verdict.tasks:
        shown = t.interval
        interval = f"{shown[0]:.2f}–{shown[1]:.2f}" if t.runs and shown else "—"
        if t.errors:
            interval += f", {t.errors} err"
        rows.append([t.task, t.status, fmt_rate(t.baseline_passes, t.baseline_runs),
                     fmt_rate(t.passes, t.runs), fmt_delta(t.delta), interval,
                     *([fmt_axes(t)] if judged else [])])
    return fit_table(rows, headers)



# --- markdown ---------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_row(cells: list[str], quoted: tuple[str, ...] = ()) -> str:
    """A table row: `cells` are ci-eval's own text (escaped), `quoted` agent- or checks-derived
    text (inert code spans)."""
    shown = [_md_cell(c) for c in cells] + [code_span(q, in_table=True) for q in quoted]
    return "| " + " | ".join(shown) + " |\n"


def _quoted(text: str) -> str:
    return code_span(text)


def _md_header(extra: tuple[str, ...] = ()) -> str:
    columns = list(COLUMNS) + list(extra)
    return _md_row(columns) + "|" + "|".join(["---"] * len(columns)) + "|\n"


def render_markdown(verdict: Verdict, *, commit: str | None = None,
                    limit: int = MAX_COMMENT_CHARS,
                    trends: Mapping[str, str] | None = None, run_url: str | None = None,
                    failed_jobs: Sequence[tuple[str, str, str]] = ()) -> str:
    changed = [_changed_row(t) for t in verdict.tasks if moved(t)]
    history = ("History",) if trends is not None else ()
    full = [_md_row(row(t) + ([trends.get(t.task, "")] if trends is not None else []))
            for t in verdict.tasks]
    head = f"{COMMENT_MARKER}\n### {verdict_line(verdict, quote=_quoted)}\n\n"
    gates = auto_fail_notes(verdict)
    unjudged = axes_note(verdict)
    notes = (*verdict.notes, *gates, *([unjudged] if unjudged else []))
    head += "".join(f"> {_md_cell(note)}\n" for note in notes)
    head += "\n" if notes else ""
    tail = rubric_markdown(verdict)
    if verdict.calibration:
        tail += "\n#### Calibration warnings\n\n"
        tail += "".join(f"- ⚠️ {_md_cell(w.message)}\n" for w in verdict.calibration)
    items = footer_items(verdict, commit, run_url, quote=_quoted, failed_jobs=failed_jobs)
    tail += "\n---\n<sub>" + " · ".join(items)
    tail += "</sub>\n"

    def assemble(n_changed: int, n_full: int) -> str:
        out = head
        if changed:
            out += "#### Changed, new or failing tasks\n\n" + _md_header(("Why",))
            out += "".join(changed[:n_changed])
        else:
            out += "No task changed status.\n"
        everything = f"All {len(full)} tasks" if len(full) != 1 else "The 1 task"
        out += (f"\n<details><summary>{everything}</summary>\n\n" + _md_header(history)
                + "".join(full[:n_full]) + "\n</details>\n")
        omitted = (len(changed) - n_changed) + (len(full) - n_full)
        if omitted:
            out += (f"\n> ⚠️ Truncated: {omitted} table row(s) left out to stay under GitHub's "
                    f"{limit:,}-character comment limit; the JSON report has every task.\n")
        return out + tail

    n_changed, n_full = len(changed), len(full)
    text = assemble(n_changed, n_full)
    while len(text) > limit and (n_full or n_changed):
        excess = len(text) - limit
        while excess > 0 and n_full:
            n_full -= 1
            excess -= len(full[n_full])
        while excess > 0 and n_changed and not n_full:
            n_changed -= 1
            excess -= len(changed[n_changed])
        text = assemble(n_changed, n_full)
    if len(text) > limit:  # notes or warnings alone are too long: cut, and say so
        note = "\n\n> ⚠️ Truncated at the comment limit.\n"
        text = text[: limit - len(note)] + note
    return text


def _changed_row(t: TaskVerdict) -> str:
    """A row of the changed table: its Why cell holds the runs' reason (agent-derived, a code
    span) and the evidence of the axes that moved (ci-eval's own text)."""
    text = _md_row(row(t), (t.why,))
    evidence = "; ".join(a.evidence for a in t.axes if a.status in ("regressed", "improved"))
    if not evidence:
        return text
    return text[:-len(" |\n")] + ("; " if t.why else "") + _md_cell(evidence) + " |\n"


def auto_fail_notes(verdict: Verdict) -> list[str]:
    """One line per task whose rubric auto-fail gate tripped in a run, naming the gate."""
    return [f"⛔ {t.task}: auto-fail gate {', '.join(f'`{c}`' for c, _ in t.rubric_auto_fail)} "
            f"tripped in {max(n for _, n in t.rubric_auto_fail)} of {t.rubric_runs} run(s)"
            for t in verdict.tasks if t.rubric_auto_fail]


def rubric_markdown(verdict: Verdict) -> str:
    graded = [t for t in verdict.tasks if t.rubric_runs]
    if not graded:
        return ""
    out = "\n#### Rubric\n\n" + _md_row(["Task", "Mean score", "Most tripped criteria",
                                           "Auto-fail gates tripped"]) + "|---|---|---|---|\n"
    for t in graded:
        tripped = ", ".join(f"{c} ({n}/{t.rubric_runs})"
                            for c, n in t.rubric_tripped[:MOST_TRIPPED])
        gates = ", ".join(f"⛔ {c} ({n}/{t.rubric_runs})" for c, n in t.rubric_auto_fail)
        out += _md_row([t.task, f"{t.rubric_score:.1f}", tripped or "none", gates or "none"])
    return out


# --- json -------------------------------------------------------------------------------------


def task_json(t: TaskVerdict) -> dict:
    return {
        "task": t.task,
        "status": t.status,
        "gated": t.gated,
        "fails_gate": t.fails_gate,
        "why": t.why,
        "baseline": None if not t.baseline_runs else {
            "passes": t.baseline_passes, "runs": t.baseline_runs,
            "pass_rate": float(t.baseline_rate or 0)},  # baseline_runs > 0: a rate
        "current": None if t.runs is None else {
            "passes": t.passes, "runs": t.runs, "errors": t.errors, "requested": t.requested,
            "pass_rate": None if t.rate is None else float(t.rate),
            "interval_95": list(t.interval) if t.interval else None},
        "delta": None if t.delta is None else float(t.delta),
        "control": None if t.control_runs is None else {
            "passes": t.control_passes, "runs": t.control_runs,
            "pass_rate": None if t.control_rate is None else float(t.control_rate)},
        "tokens": {"baseline": t.baseline_tokens, "current": t.tokens, "delta": t.tokens_delta},
        "wall_seconds": {"baseline": t.baseline_wall_seconds, "current": t.wall_seconds,
                         "delta": t.wall_delta},
        "axes": {a.axis: a.to_json() for a in t.axes},
        "note": t.note,
        "rubric": None if not t.rubric_runs else {
            "runs": t.rubric_runs, "mean_score": t.rubric_score,
            "tripped": [{"criterion": c, "runs": n} for c, n in t.rubric_tripped],
            "auto_fail_tripped": [{"criterion": c, "runs": n} for c, n in t.rubric_auto_fail]},
    }


def render_json(verdict: Verdict, *, commit: str | None = None) -> str:
    data = {
        "passed": verdict.passed,
        "exit_code": verdict.exit_code,
        "verdict": verdict_line(verdict, emoji=False),
        "counts": verdict.counts,
        "agent": verdict.agent,
        "baseline_agent": verdict.baseline_agent,
        "k": verdict.k,
        "commit": commit,
        "rule": {"regression_drop": str(verdict.rules.regression_threshold), "strict": True,
                 **verdict.rules.to_json(), "axis_alpha": ALPHA},
        "notes": list(verdict.notes),
        "setup_broken": verdict.setup_broken,
        "tasks": [task_json(t) for t in verdict.tasks],
        "calibration": [w.to_json() for w in verdict.calibration],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# --- junit ------------------------------------------------------------------------------------


def render_junit(verdict: Verdict) -> str:
    """A task fails exactly when it fails the gate (see render/junit.py)."""
    never_gated = {"aspirational", "missing"}
    cases = []
    for t in verdict.tasks:
        summary = (f"{t.status}: baseline {fmt_rate(t.baseline_passes, t.baseline_runs)}, "
                   f"current {fmt_rate(t.passes, t.runs)}, delta {fmt_delta(t.delta)}, "
                   f"evidence {fmt_evidence(t)}" + (f"; {t.note}" if t.note else ""))
        cases.append(Case(t.task, summary, (t.status, summary) if t.fails_gate else None,
                          skipped=summary if t.status in never_gated else None))
    return render_cases("gate", cases, tuple(verdict.notes))
