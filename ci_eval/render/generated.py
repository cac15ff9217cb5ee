"""`ci-eval generate`'s summary for people: the figures, why candidates were rejected, the
tasks kept and how to accept one (pure: the summary's JSON in, text out)."""

from __future__ import annotations

from pathlib import Path

MAX_REJECTION_LINES = 40


def summary_text(summary: dict, into: Path) -> str:
    lines = [f"{summary['repo']} ({summary['mode']}): {summary['scanned']} scanned, "
             f"{summary['candidates']} candidates, {summary['valid_tasks']} valid tasks in "
             f"{summary['seconds']:.0f}s ({summary['tasks_per_minute']:.2f} tasks/min)"
             + (f"; {summary['resumed']} decided by an earlier run" if summary["resumed"] else "")]
    if summary["rejected"]:
        lines.append("rejected: " + ", ".join(f"{reason} {count}" for reason, count
                                               in summary["rejected"].items()))
    for rejection in summary["rejections"][:MAX_REJECTION_LINES]:
        detail = f": {rejection['detail']}" if rejection.get("detail") else ""
        lines.append(f"  {rejection['key'][:12]} {rejection['reason']}{detail}")
    if len(summary["rejections"]) > MAX_REJECTION_LINES:
        lines.append(f"  ... {len(summary['rejections']) - MAX_REJECTION_LINES} more (--json)")
    for task in summary["tasks"]:
        lines.append(f"kept {task['key'][:12]} -> {into / 'tasks' / task['task']}")
    if summary["tasks"]:
        lines.append(f"review them (ci-eval verify --root {into}); accept one with "
                     f"`git mv {into}/tasks/TASK tasks/` (renumber it if its number is taken)")
    return "\n".join(lines)
