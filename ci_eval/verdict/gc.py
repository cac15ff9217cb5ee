"""Entropy GC eligibility (pure): which tasks stopped carrying signal and may be archived.

A task is archived when both hold (DESIGN.md "Entropy GC"):
  history  it passed every run in each of the last WINDOW (10) recorded CI runs (run summaries,
           results/history.py): present in each, status "pass" (all valid runs passed, as many
           as asked). Not run in one of them, a failed run, or an inconclusive one: not eligible.
           Fewer than WINDOW summaries recorded: nothing is eligible, and the plan says how many
           are missing.
  age      its metadata `created` date is MORE than MIN_AGE_MONTHS (6) calendar months before
           today. Exactly 6 months is not enough.

Calendar months: a task is N months old on the day `add_months(created, N)`, the same day of the
month N months later, or the last day of that month when it is shorter (the usual rule, as
dateutil's relativedelta has it). So created 2026-01-31 is 6 months old on 2026-07-31 (not on
07-30) and eligible from 2026-08-01; created 2026-08-29, -30 or -31 are all 6 months old on
2027-02-28 and eligible from 2027-03-01. `months_old` is the number of whole months completed
and `age_text` adds the days since the last of them (what the log lines say: "6 months 1 day
old" for six months and a day, "7 months old" on the day itself).

Near-misses (listed by the dry run with what they lack): tasks that are not candidates but lack
only a little, and passed every run of at least one recorded run: every run available in the
window passed (they lack age, or recorded runs), or they are old enough and failed, were
inconclusive or were not run in at most NEAR_MISS_RUNS of the window.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ci_eval.errors import UserError
from ci_eval.results.history import RunSummary, TaskRecord, task_points

WINDOW = 10
MIN_AGE_MONTHS = 6
NEAR_MISS_RUNS = 2


# --- dates ------------------------------------------------------------------------------------


def parse_day(text: str | None, *, field: str) -> dt.date:
    """--today / --date YYYY-MM-DD (default: today, UTC); UserError naming the option."""
    if text is None:
        return dt.datetime.now(dt.timezone.utc).date()
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise UserError(f"expected a date YYYY-MM-DD, got {text!r}", field=field) from None


def add_months(day: dt.date, months: int) -> dt.date:
    """The same day of the month `months` later, clamped to the end of a shorter month."""
    years, month0 = divmod(day.month - 1 + months, 12)
    year, month = day.year + years, month0 + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def months_old(created: dt.date, today: dt.date) -> int:
    """Whole calendar months from `created` to `today` (0 if today is not after created)."""
    months = (today.year - created.year) * 12 + today.month - created.month
    if months > 0 and add_months(created, months) > today:
        months -= 1
    return max(months, 0)


def age_text(created: dt.date, today: dt.date) -> str:
    """Whole calendar months and the days after them: "6 months 1 day", "7 months", "12 days"."""
    months = months_old(created, today)
    days = max((today - add_months(created, months)).days, 0)
    parts = [_count(months, "month")] if months else []
    if days or not months:
        parts.append(_count(days, "day"))
    return " ".join(parts)


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def old_enough(created: dt.date, today: dt.date, months: int = MIN_AGE_MONTHS) -> bool:
    """MORE than `months` calendar months old: exactly `months` is not enough."""
    return today > add_months(created, months)


def eligible_from(created: dt.date, months: int = MIN_AGE_MONTHS) -> dt.date:
    """The first day on which a task created on `created` is old enough."""
    return add_months(created, months) + dt.timedelta(days=1)


# --- the plan ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskEvaluation:
    task: str
    created: dt.date | None
    months_old: int | None
    age: str | None  # age_text: "6 months 1 day"
    old_enough: bool
    passing: int  # window runs in which the task passed every run
    window: int  # runs the rule asks for (WINDOW)
    points: tuple[TaskRecord | None, ...]  # the task in each window summary, oldest first
    dates: tuple[str, ...]  # those summaries' dates
    lacks: tuple[str, ...]  # what keeps it from being archived; () for a candidate
    near_miss: bool

    @property
    def candidate(self) -> bool:
        return not self.lacks

    @property
    def evidence(self) -> str:
        """e.g. "passed every run in 10/10 recorded runs (2026-01-05 … 2026-03-01); created
        2025-06-01, 9 months 3 days old"."""
        span = f" ({self.dates[0]} … {self.dates[-1]})" if self.dates else ""
        age = (f"created {self.created.isoformat()}, {self.age} old"
               if self.created else "no created date")
        return f"passed every run in {self.passing}/{self.window} recorded runs{span}; {age}"

    def to_json(self) -> dict:
        return {
            "task": self.task,
            "candidate": self.candidate,
            "near_miss": self.near_miss,
            "created": self.created.isoformat() if self.created else None,
            "months_old": self.months_old,
            "age": self.age,
            "old_enough": self.old_enough,
            "passing_runs": self.passing,
            "window": self.window,
            "runs": [None if p is None else {**p.to_json(), "date": d}
                     for p, d in zip(self.points, self.dates)],
            "evidence": self.evidence,
            "lacks": list(self.lacks),
        }


@dataclass(frozen=True)
class GcPlan:
    today: dt.date
    window: int
    recorded: int  # summaries available
    window_sources: tuple[str, ...]  # the summaries the rule looked at (file names), oldest first
    evaluations: tuple[TaskEvaluation, ...]  # every task in tasks/, by id

    @property
    def missing(self) -> int:
        """Recorded runs still needed before anything can be archived."""
        return max(self.window - self.recorded, 0)

    @property
    def candidates(self) -> tuple[TaskEvaluation, ...]:
        return tuple(e for e in self.evaluations if e.candidate)

    @property
    def near_misses(self) -> tuple[TaskEvaluation, ...]:
        return tuple(e for e in self.evaluations if e.near_miss)

    def to_json(self) -> dict:
        return {
            "today": self.today.isoformat(),
            "window": self.window,
            "min_age_months": MIN_AGE_MONTHS,
            "recorded_runs": self.recorded,
            "missing_runs": self.missing,
            "window_summaries": list(self.window_sources),
            "candidates": [e.to_json() for e in self.candidates],
            "near_misses": [e.to_json() for e in self.near_misses],
            "others": [e.to_json() for e in self.evaluations
                       if not e.candidate and not e.near_miss],
        }


def plan_gc(created: Mapping[str, dt.date | None], summaries: Sequence[RunSummary],
            today: dt.date, *, window: int = WINDOW) -> GcPlan:
    """created: task id -> its metadata `created` date (every task in tasks/); summaries: the
    run history, oldest first (results.history.load_history)."""
    recent = list(summaries)[-window:]
    dates = tuple(s.date for s in recent)
    missing = max(window - len(recent), 0)
    evaluations = tuple(
        _evaluate(task, created[task], task_points(recent, task), dates, today, window, missing)
        for task in sorted(created)
    )
    return GcPlan(today, window, len(summaries), tuple(s.label for s in recent), evaluations)


def _evaluate(task: str, created: dt.date | None, points: list[TaskRecord | None],
              dates: tuple[str, ...], today: dt.date, window: int,
              missing: int) -> TaskEvaluation:
    lacks = []
    months = months_old(created, today) if created else None
    age = age_text(created, today) if created else None
    is_old = created is not None and old_enough(created, today)
    if created is None:
        lacks.append("no created date in metadata.json")
    elif not is_old:
        lacks.append(f"age: created {created.isoformat()}, {age} old; needs more than "
                     f"{MIN_AGE_MONTHS} months (old enough from {eligible_from(created).isoformat()})")
    bad = [(d, p) for d, p in zip(dates, points) if p is None or not p.passed_every_run]
    if bad:
        lacks.append("history: " + "; ".join(_describe_run(d, p) for d, p in bad))
    if missing:
        lacks.append(f"history: only {len(points)} of the {window} recorded runs needed "
                     f"({missing} missing)")
    passing = len(points) - len(bad)
    near = bool(lacks) and passing > 0 and (not bad or (is_old and len(bad) <= NEAR_MISS_RUNS))
    return TaskEvaluation(task, created, months, age, is_old, passing, window, tuple(points), dates,
                          tuple(lacks), near)


def _describe_run(date: str, point: TaskRecord | None) -> str:
    if point is None:
        return f"not run on {date}"
    detail = f"{point.passes}/{point.runs}"
    if point.errors:
        detail += f", {point.errors} error(s)"
    if point.status == "fail":
        return f"failed a run on {date} ({detail})"
    return f"inconclusive on {date} ({detail} of {point.requested} asked)"


# --- log lines --------------------------------------------------------------------------------


def archive_log_line(today: dt.date, evaluation: TaskEvaluation) -> str:
    """`YYYY-MM-DD — Archived task-NNN-name (10/10 pass, N months D days old)`."""
    return (f"{today.isoformat()} — Archived {evaluation.task} "
            f"({evaluation.passing}/{evaluation.window} pass, {evaluation.age} old)")


def restore_log_line(today: dt.date, task: str) -> str:
    return (f"{today.isoformat()} — Restored {task} (its baseline must be re-recorded: "
            f"ci-eval baseline update {task})")
