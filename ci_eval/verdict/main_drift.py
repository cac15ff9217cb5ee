"""Drift of the default branch (pure): a run on main compared with baseline.json, and the
pushes after which a baseline refresh is due.

On the default branch there is no pull request to blame: a gated task whose pass rate falls
below the baseline's line (the gate's "regressed") is main itself having moved since the
baseline (the model behind the same name, the CLI pin, a tool on the runner, or a change that
got past the gate). `judged_as_main` turns such a task into "drifted" (the check passes, with
a warning, unless `gate: {drift: fail}`); `drift_records` is what the run summary keeps per task
(main's rate is the record's passes/runs; the baseline's counts sit beside it); and
`refresh_due` reads the run history back: the tasks drifted in each of the last N recorded runs
that ran them, for which the scheduled baseline workflow opens a refresh pull request
(`gate: {drift_refresh_after: N}`, default 3). Baselines are never updated automatically.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ci_eval.results.history import RunSummary, TaskRecord, tasks_in
from ci_eval.verdict.model import TaskVerdict, Verdict

MAIN_DRIFT_NOTE = ("main is below its baseline (drift, not a pull request's regression): "
                   "refresh the baseline with the baseline workflow, or `ci-eval run -k 40` "
                   "then `ci-eval baseline update`")


def judged_as_main(verdict: Verdict) -> Verdict:
    """The Verdict of a run on the default branch: gated tasks the baseline rule found
    regressed are drifted (failing the check only with gate.drift: fail)."""
    drift_fails = verdict.rules.drift == "fail"
    tasks = tuple(
        dataclasses.replace(t, status="drifted", drift_fails=drift_fails,
                            note="; ".join(filter(None, [t.note, MAIN_DRIFT_NOTE])))
        if t.gated and t.status == "regressed" else t
        for t in verdict.tasks)
    drifted = [t.task for t in tasks if t.status == "drifted"]
    notes = verdict.notes
    if drifted:
        effect = "fails the check (gate.drift: fail)" if drift_fails else "does not fail the check"
        notes += (f"Drift on main: {len(drifted)} task(s) ({', '.join(drifted[:5])}"
                  f"{' and more' if len(drifted) > 5 else ''}) below the baseline. "
                  f"{MAIN_DRIFT_NOTE[0].upper()}{MAIN_DRIFT_NOTE[1:]}. Drift {effect}.",)
    return dataclasses.replace(verdict, tasks=tasks, notes=notes)


@dataclass(frozen=True)
class DriftRecord:
    """What a run summary keeps about a task against its baseline."""

    drifted: bool
    baseline_passes: int
    baseline_runs: int

    def to_json(self) -> dict:
        return {"drifted": self.drifted,
                "baseline": {"passes": self.baseline_passes, "runs": self.baseline_runs}}


def drift_records(verdict: Verdict) -> dict[str, DriftRecord]:
    """Per task the rate rule judged (_judged): drifted or not, and the baseline's counts."""
    return {t.task: DriftRecord(t.status == "drifted", t.baseline_passes or 0,
                                t.baseline_runs or 0)
            for t in verdict.tasks if _judged(t)}


JUDGED_STATUSES = ("drifted", "unchanged", "improved")  # what the rate rule decided on main


def _judged(t: TaskVerdict) -> bool:
    """A task the rate rule judged against its baseline in this run (an inconclusive, a
    prompt-changed or an aspirational task is left out: it neither drifts nor clears)."""
    return bool(t.gated and t.status in JUDGED_STATUSES and t.runs and t.baseline_runs
                and t.baseline_passes is not None)


@dataclass(frozen=True)
class RefreshDue:
    """A task drifted on main in each of its last `streak` recorded runs (>= the setting)."""

    task: str
    streak: int
    passes: int  # main's valid runs over the streak
    runs: int
    baseline_passes: int  # the baseline of the latest run
    baseline_runs: int

    @property
    def rate(self) -> Fraction:
        return Fraction(self.passes, self.runs)

    @property
    def baseline_rate(self) -> Fraction:
        return Fraction(self.baseline_passes, self.baseline_runs)

    def to_json(self) -> dict:
        return {"task": self.task, "streak": self.streak, "passes": self.passes,
                "runs": self.runs, "baseline_passes": self.baseline_passes,
                "baseline_runs": self.baseline_runs}


def current_streak(summaries: Sequence[RunSummary], task: str) -> list[TaskRecord]:
    """The task's records of its latest drifted runs in a row, newest first (oldest-first
    `summaries`; runs that did not judge the task against its baseline are passed over). The
    streak is cut where the task's baseline changed: a refresh already merged starts it anew."""
    judged = [r for s in summaries if (r := s.tasks.get(task)) is not None
              and r.drifted is not None]
    if not judged:
        return []
    latest = (judged[-1].baseline_passes, judged[-1].baseline_runs)
    streak = []
    for record in reversed(judged):
        if not record.drifted or (record.baseline_passes, record.baseline_runs) != latest:
            break
        streak.append(record)
    return streak


def refresh_due(summaries: Sequence[RunSummary], after: int) -> list[RefreshDue]:
    """The tasks whose baseline a refresh pull request should update: drifted in each of their
    last `after` (or more) recorded runs (current_streak)."""
    if after < 1:
        raise ValueError("after must be >= 1")
    due = []
    for task in tasks_in(summaries):
        streak = current_streak(summaries, task)
        if len(streak) >= after:
            due.append(RefreshDue(task, len(streak), sum(r.passes for r in streak),
                                  sum(r.runs for r in streak), streak[0].baseline_passes or 0,
                                  streak[0].baseline_runs or 0))
    return due
