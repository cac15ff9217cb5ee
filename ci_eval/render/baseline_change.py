"""The before/after table of a baseline refresh (the body of the baseline-refresh PR).

    render_change(before, after, notes=[...], run_url=...)   # markdown

Rows: every task whose entry was added, changed or removed, with its rate before and after
(exact passes/runs), the change, and whether it is gated; unchanged tasks are counted, not listed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ci_eval.render.compare_cells import fmt_delta, fmt_rate
from ci_eval.verdict.baseline import Baseline, BaselineEntry

MARKER = "<!-- ci-eval-baseline-refresh -->"
MAX_BODY_CHARS = 65_536  # pull request bodies share the comment limit


def _gate(entry: BaselineEntry | None) -> str:
    if entry is None:
        return "—"
    return "aspirational" if entry.aspirational else "gated"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def changed_tasks(before: Baseline, after: Baseline) -> list[str]:
    return sorted(t for t in set(before.entries) | set(after.entries)
                  if before.entries.get(t) != after.entries.get(t))


def render_change(before: Baseline, after: Baseline, *, notes: Sequence[str] = (),
                  run_url: str | None = None) -> str:
    changed = changed_tasks(before, after)
    unchanged = len(set(after.entries) - set(changed))
    lines = [MARKER, f"### ci-eval baseline refresh: {len(changed)} task(s) changed", ""]
    if before.agent != after.agent:
        lines += [f"Agent: {before.agent or 'none'} → **{after.agent}**", ""]
    else:
        lines += [f"Agent: {after.agent or 'none'}", ""]
    if changed:
        lines += ["| Task | Before | After | Δ | Gate before → after |", "|---|---|---|---|---|"]
        for task in changed:
            old, new = before.entries.get(task), after.entries.get(task)
            delta = None if old is None or new is None else new.pass_rate - old.pass_rate
            lines.append("| " + " | ".join(_cell(c) for c in (
                task,
                fmt_rate(old.passes, old.runs) if old else "— (new)",
                fmt_rate(new.passes, new.runs) if new else "— (removed)",
                fmt_delta(delta),
                f"{_gate(old)} → {_gate(new)}",
            )) + " |")
        lines.append("")
    lines.append(f"{unchanged} task(s) unchanged.")
    if notes:
        lines += ["", "<details><summary>`ci-eval baseline update` said</summary>", "", "```"]
        lines += [n.replace("```", "'''") for n in notes]
        lines += ["```", "", "</details>"]
    if run_url:
        lines += ["", f"Recorded by {run_url}"]
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_BODY_CHARS:
        note = "\n> ⚠️ Truncated at GitHub's 65,536-character limit; see the workflow run.\n"
        text = text[: MAX_BODY_CHARS - len(note)] + note
    return text
