"""Render a GC plan (pure): the terminal report of `ci-eval gc` and the archive PR's title/body.

    title, body = archive_pr(plan)      # for the GitHub layer's gc mode (PR on ci-eval/gc-DATE)
"""

from __future__ import annotations

from ci_eval.render.trend import counts, trend_line
from ci_eval.verdict.gc import MIN_AGE_MONTHS, GcPlan, TaskEvaluation

PR_MARKER = "<!-- ci-eval-archive-pr -->"
MAX_PR_BODY_CHARS = 65_536  # GitHub's limit for a PR body, as for comments


def window_line(plan: GcPlan) -> str:
    if plan.missing:
        return (f"{plan.recorded} recorded run(s); the rule needs the last {plan.window}: "
                f"{plan.missing} missing, nothing can be archived yet")
    return (f"{plan.recorded} recorded run(s); the last {plan.window} from "
            f"{plan.window_sources[0]} to {plan.window_sources[-1]}")


def render_text(plan: GcPlan, *, dry_run: bool, archived: bool = False) -> str:
    """What `ci-eval gc` prints: the window, each candidate with its evidence, each near-miss
    with what it lacks, a count of the rest."""
    lines = [f"gc {plan.today.isoformat()}: {window_line(plan)}"]
    verb = "archived" if archived else "would archive" if dry_run else "to archive"
    for e in plan.candidates:
        lines.append(f"{verb}: {e.task}: {e.evidence}  {trend_line(e.points)}")
    for e in plan.near_misses:
        lines.append(f"near miss: {e.task}: {'; '.join(e.lacks)}")
    others = len(plan.evaluations) - len(plan.candidates) - len(plan.near_misses)
    tally = (f"{len(plan.candidates)} candidate(s), {len(plan.near_misses)} near miss(es), "
             f"{others} other task(s) not close to eligible")
    lines.append(tally)
    if not plan.candidates:
        lines.append("nothing to archive")
    elif dry_run:
        lines.append("dry run: nothing changed (run without --dry-run to archive)")
    return "\n".join(lines) + "\n"


def archive_pr(plan: GcPlan) -> tuple[str, str]:
    """The archive PR's title and markdown body: each task to archive with its evidence (runs,
    sparkline, created date, age), the rule, the near-misses, and how to restore. Deterministic
    for a given plan, so updating an open PR with the same plan changes nothing."""
    n = len(plan.candidates)
    title = (f"ci-eval: archive {n} task{'s' if n != 1 else ''} that passed every run "
             f"({plan.today.isoformat()})")
    out = [PR_MARKER, f"### 🗄️ ci-eval entropy GC — {plan.today.isoformat()}", ""]
    out.append(f"These tasks passed every run in each of the last {plan.window} recorded CI "
               f"runs and were created more than {MIN_AGE_MONTHS} calendar months ago, so they "
               "no longer carry signal and only cost agent runs. Merging moves them to "
               "`archive/` (restorable with `ci-eval restore task-NNN`), drops their "
               "`baseline.json` entries and logs them in `archive/ARCHIVE-LOG.md`. Their "
               "numbers stay taken.")
    out += ["", f"History: {window_line(plan)}.", ""]
    if plan.candidates:
        out += ["| Task | Runs (oldest first) | Trend | Created | Age |", "|---|---|---|---|---|"]
        out += [_candidate_row(e) for e in plan.candidates]
    else:
        out.append("No task is eligible.")
    if plan.near_misses:
        out += ["", f"<details><summary>{len(plan.near_misses)} near miss(es)</summary>", ""]
        out += [f"- `{e.task}`: {_md('; '.join(e.lacks))}" for e in plan.near_misses]
        out += ["", "</details>"]
    out += ["", ("<sub>Opened by the ci-eval GC workflow (`ci-eval propose-archive`). While "
                 "this PR is open, later GC runs update it instead of opening another, and close "
                 "it when nothing is eligible any more. Closing it keeps the tasks for now; a "
                 "later run proposes them again while they stay eligible.</sub>"), ""]
    body = "\n".join(out)
    if len(body) > MAX_PR_BODY_CHARS:
        note = "\n\n> ⚠️ Truncated at GitHub's body limit; `ci-eval gc --dry-run` lists all.\n"
        body = body[: MAX_PR_BODY_CHARS - len(note)] + note
    return title, body


def _candidate_row(e: TaskEvaluation) -> str:
    created = e.created.isoformat() if e.created else "—"
    return (f"| `{e.task}` | {_md(counts(e.points))} ({e.passing}/{e.window} pass) | "
            f"{trend_line(e.points)} | {created} | {e.age or '—'} |")


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
