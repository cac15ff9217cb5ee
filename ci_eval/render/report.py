"""Rendering run summaries: a terminal table, JSON, or JUnit XML (one testcase per task)."""

from __future__ import annotations

import json

from ci_eval.render.junit import Case, render_cases
from ci_eval.render.terminal import cut, fit_table, wrap
from ci_eval.results.summary import TaskSummary, pass_at_k_label


def _num(value, digits: int = 2) -> str:
    return "-" if value is None else f"{float(value):.{digits}f}"


def fmt_money(value: float | None) -> str:
    """Dollars for people: cents, or 4 significant decimals below a cent; "-" when unknown."""
    if value is None:
        return "-"
    if value == 0 or abs(value) >= 0.01:
        return f"${value:,.2f}"
    return f"${value:.4f}"


def render_table(summaries: list[TaskSummary], notices: tuple[str, ...] = (), *,
                 reasons: bool = False) -> str:
    """Fits 100 columns: pass@1 is the rate (one column), task ids are cut when too long
    (their task-NNN prefix kept), error reasons cut to a line (report --reasons, show: whole)."""
    ks = {s.k for s in summaries if s.runs}
    same_k = len(ks) == 1
    rows = []
    for s in summaries:
        rows.append([
            s.task, f"{s.passes}/{s.runs}" + (" !" if s.inconclusive else ""),
            _num(s.pass_rate),
            _num(s.pass_at_k) + ("" if same_k or not s.runs else f" (k={s.k})"),
            _num(s.pass_hat_k), _num(s.mean_tokens, 0), _num(s.mean_wall_seconds),
            _num(s.p95_wall_seconds), fmt_money(s.total_cost_usd), str(s.errors),
        ])
    k_label = pass_at_k_label(next(iter(ks))).split(" ")[0] if same_k else "pass@k"
    hat = f"pass^{next(iter(ks))}" if same_k else "pass^k"
    headers = ["task", "passes", "rate", k_label, hat, "tokens", "wall s", "p95 s", "cost",
               "errors"]
    lines = [fit_table(rows, headers)]
    total_runs = sum(s.runs for s in summaries)
    total_passes = sum(s.passes for s in summaries)
    lines.append(f"\n{len(summaries)} tasks, {total_passes}/{total_runs} valid runs passed, "
                 f"{sum(s.errors for s in summaries)} errors")
    inconclusive = [s.task for s in summaries if s.inconclusive]
    if inconclusive:
        lines.append(f"inconclusive (fewer valid runs than asked): {', '.join(inconclusive)}")
    lines += [wrap(rubric_line(s.task, s.rubric_runs, s.mean_rubric_score, s.rubric_tripped,
                               s.rubric_auto_fail), indent="  ")
              for s in summaries if s.rubric_runs]
    if reasons:
        lines += reason_lines(summaries)
    else:
        for s in summaries:
            for reason in dict.fromkeys(s.error_reasons):
                lines.append(cut(f"error in {s.task}: {reason}"))
    lines.extend(f"NOTICE: {notice}" for notice in notices)  # one line each: read by grep
    return "\n".join(lines) + "\n"


MOST_TRIPPED = 3  # criteria named per task


def rubric_line(task: str, runs: int, mean_score: float | None,
                tripped: tuple[tuple[str, int], ...],
                auto_fail: tuple[tuple[str, int], ...]) -> str:
    """"rubric task-x: mean score 81.6/100 over 5 runs; most tripped: a (3/5), b (1/5);
    auto-fail gate tripped: c (2/5)"."""
    text = f"rubric {task}: mean score {mean_score:.1f}/100 over {runs} run(s)"
    if tripped:
        text += "; most tripped: " + ", ".join(f"{c} ({n}/{runs})"
                                               for c, n in tripped[:MOST_TRIPPED])
    else:
        text += "; no criterion tripped"
    if auto_fail:
        text += "; auto-fail gate tripped: " + ", ".join(f"{c} ({n}/{runs})" for c, n in auto_fail)
    return text


def reason_lines(summaries: list[TaskSummary]) -> list[str]:
    """Per task, the distinct reasons its runs did not pass, with counts (report --reasons)."""
    lines = []
    for s in summaries:
        if not s.failure_reasons:
            continue
        lines.append(f"\n{s.task}: why {sum(n for _, n in s.failure_reasons)} run(s) did not pass")
        lines += [f"  {n} x {reason}" for reason, n in s.failure_reasons]
    return lines


def render_json(summaries: list[TaskSummary], notices: tuple[str, ...] = (), *,
                reasons: bool = False) -> str:
    payload = {"tasks": [s.to_json() for s in summaries], "notices": list(notices)}
    return json.dumps(payload, indent=2, sort_keys=True) + "\n"


def render_junit(summaries: list[TaskSummary], notices: tuple[str, ...] = (), *,
                 reasons: bool = False) -> str:
    """A task fails exactly when report exits 1 for it: inconclusive (see render/junit.py)."""
    cases = []
    for s in summaries:
        evidence = f"{s.passes}/{s.runs} valid runs passed, {s.errors} errors"
        if s.rubric_runs:
            evidence += "\n" + rubric_line(s.task, s.rubric_runs, s.mean_rubric_score,
                                           s.rubric_tripped, s.rubric_auto_fail)
        if s.failure_reasons:
            evidence += "\n" + "\n".join(f"{n} x {r}" for r, n in s.failure_reasons)
        failure = (("inconclusive", f"inconclusive: {s.runs} valid run(s) of {s.requested}, "
                    f"{s.errors} error(s)") if s.inconclusive else None)
        cases.append(Case(s.task, evidence, failure,
                          seconds=(s.mean_wall_seconds or 0) * s.runs))
    return render_cases("report", cases, notices)


RENDERERS = {"table": render_table, "json": render_json, "junit": render_junit}


def render(summaries: list[TaskSummary], fmt: str, notices: tuple[str, ...] = (), *,
           reasons: bool = False) -> str:
    return RENDERERS[fmt](summaries, notices, reasons=reasons)
