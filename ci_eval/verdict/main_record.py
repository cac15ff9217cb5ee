"""Main's recent record as the pull request's reference (pure).

eval.yml runs every task on each push to the default branch, and the run summary of that push
(results/history.py, the ci-eval-history artifact) keeps main's passes and runs per task beside
the baseline it was judged against. Once main has drifted, its record after the drift carries
the drift, so a PR judged against it no longer finds every drifted task suspect: the control
arm (verdict/control.py) is then spent only where the record cannot settle the question (drift
since main's last push, a task the record lacks).

  record_of   main's passes/runs of a task over its last `pushes` recorded runs that judged it
              against the SAME baseline counts (a refreshed baseline starts it anew), by the
              same agent with the harness of main's newest such run (a merged harness change
              starts it anew), none older than `max_age_days` days: older or foreign
              evidence is not main now;
  reference   the reference a PR's task is screened and judged against (it takes the place
              of the baseline's rate in control.next_step and in arm_status): the baseline
              pooled with the record while the record is not below it (one-sided Fisher p >=
              RECORD_SWITCH_P), the record alone once it is (main has moved: main now is the
              reference), the baseline alone without a record;
  suite_shift main's drift since the baseline over the whole suite (drift is usually for
              everyone): when the suite's record is below its baselines (a z-test over the
              gated tasks, z^2 > SUITE_DRIFT_Z2), the mean fall of the OTHER tasks (a task's
              own runs are not counted twice); with it, reference() pools the record with the
              baseline moved down by that shift (80 runs of main now, not 40) unless the two
              disagree on the task (one-sided Fisher p < SHIFT_AGREE_P either way: a drift not the
              suite's; then the record alone);
  control_evidence  main now for the verdict's test: the control arm's runs pooled with the
              record while the control arm is not shown below it (p >= CONTROL_AGREE_P), else
              the control arm alone (main moved since its last push);
  arm_status  the task's status: control.arm_status's tests of the PR arm against
              control_evidence(), but a PR arm below the reference's line that the test cannot
              tell from main is excused as "drifted" only when the control arm's own runs are
              below the reference (p < DRIFT_EXCUSE_P: main moved since the record), else
              "regressed" (a control arm low by chance does not excuse a real drop).
A task is then staged by control.next_step against reference().rate (the control arm's own runs
decide when it stops, as without a record) and judged by arm_status: judge_task / with_record
on the verdict's side (`compare --main-history`, the report on a pull request), references_of on the
runner's (`run --main-history`).
The level and the number of pushes were chosen with bench/gate_drift.py (docs/gate.md, "Main's
record as control evidence").
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ci_eval.results.history import RunSummary
from ci_eval.verdict import control
from ci_eval.verdict.baseline import Baseline
from ci_eval.verdict.control import CONTROL_ALPHA, better_p, worse_p
from ci_eval.verdict.gate import REGRESSION_DROP, is_gated_entry, rate_status
from ci_eval.verdict.model import TaskStatus, TaskVerdict, Verdict
from ci_eval.verdict.rules import GateRules

RECORD_SWITCH_P = Fraction(1, 20)  # the record replaces the baseline once below it at p < this
CONTROL_AGREE_P = Fraction(1, 20)  # control arm pooled with the record unless below it at p <
DRIFT_EXCUSE_P = Fraction(1, 3)  # "drifted" needs the control arm below the reference at p <
RECORD_PUSHES = 8  # main's last pushes pooled (k = 5 each: 40 runs, a baseline's worth)
RECORD_MAX_AGE_DAYS = 14
SUITE_DRIFT_Z2 = Fraction(19, 2)  # z^2 (z = 3.08, one-sided p ~ 0.001): the suite's record is low
SUITE_MIN_TASKS = 5  # tasks with a record before a suite-wide shift is estimated
SHIFT_AGREE_P = Fraction(1, 20)  # the moved baseline pooled unless the record differs at p <
REFERENCE_SOURCES = ("baseline", "baseline+main", "main", "shifted+main")
MAIN_SOURCES = ("main", "shifted+main")  # references that say main has moved


@dataclass(frozen=True)
class MainRecord:
    """Main's valid runs of a task over `pushes` recorded runs."""

    passes: int
    runs: int
    pushes: int

    def __post_init__(self) -> None:
        if not 0 <= self.passes <= self.runs or self.pushes < 0:
            raise ValueError(f"a record needs 0 <= passes <= runs, got {self.passes}/{self.runs}")


@dataclass(frozen=True)
class Reference:
    """What a PR's task is judged against, and where it comes from (REFERENCE_SOURCES)."""

    passes: int
    runs: int
    source: str
    shift: Fraction = Fraction(0)  # "shifted+main": how far the baseline was moved down

    @property
    def rate(self) -> Fraction:
        return Fraction(self.passes, self.runs)

    def describe(self) -> str:
        what = {"baseline": "the baseline", "baseline+main": "the baseline pooled with main's "
                "record", "main": "main's record (main moved since the baseline)",
                "shifted+main": f"main's record pooled with the baseline moved down by main's "
                f"suite-wide drift ({float(self.shift):.2f}; main moved since the baseline)"
                }[self.source]
        return f"reference {self.passes}/{self.runs} = {float(self.rate):.2f}, {what}"


def reference(baseline_passes: int, baseline_runs: int, record: MainRecord | None = None,
              switch_p: Fraction = RECORD_SWITCH_P, *,
              shift: Fraction | None = None) -> Reference:
    """The reference of a task (module docstring). baseline_runs must be >= 1. shift: the
    suite's drift (suite_shift) when it showed one."""
    if not 0 <= baseline_passes <= baseline_runs or baseline_runs < 1:
        raise ValueError(f"a baseline needs 0 <= passes <= runs >= 1, got "
                         f"{baseline_passes}/{baseline_runs}")
    if record is None or record.runs <= 0:
        return Reference(baseline_passes, baseline_runs, "baseline")
    if shift is not None:
        moved = min(max(math.floor(baseline_passes - shift * baseline_runs + Fraction(1, 2)), 0),
                    baseline_runs)
        if min(worse_p(record.passes, record.runs, moved, baseline_runs),
               better_p(record.passes, record.runs, moved, baseline_runs)) < SHIFT_AGREE_P:
            return Reference(record.passes, record.runs, "main")
        return Reference(moved + record.passes, baseline_runs + record.runs, "shifted+main", shift)
    if worse_p(record.passes, record.runs, baseline_passes, baseline_runs) < switch_p:
        return Reference(record.passes, record.runs, "main")
    return Reference(baseline_passes + record.passes, baseline_runs + record.runs,
                     "baseline+main")


def suite_shift(tasks: Mapping[str, tuple[int, int, MainRecord]]) -> dict[str, Fraction]:
    """task -> main's suite-wide drift for that task, from every gated task's (baseline passes,
    baseline runs, main's record): empty unless at least SUITE_MIN_TASKS tasks have a record
    and the suite's record is below its baselines (the sum over tasks of baseline rate - record
    rate, against its variance with each task's pooled rate: z^2 > SUITE_DRIFT_Z2). A task's
    shift is the mean fall of the other tasks (leave-one-out: its own runs count once)."""
    falls, variance = {}, Fraction(0)
    for task, (passes, runs, record) in tasks.items():
        if record.runs > 0 and runs > 0:
            falls[task] = Fraction(passes, runs) - Fraction(record.passes, record.runs)
            pooled = Fraction(passes + record.passes, runs + record.runs)
            variance += pooled * (1 - pooled) * (Fraction(1, runs) + Fraction(1, record.runs))
    total = sum(falls.values(), Fraction(0))
    if len(falls) < SUITE_MIN_TASKS or total <= 0 or total * total <= SUITE_DRIFT_Z2 * variance:
        return {}
    return {task: (total - fall) / (len(falls) - 1) for task, fall in falls.items()}


def record_of(summaries: Sequence[RunSummary], task: str, baseline_passes: int,
              baseline_runs: int, *, agent: str | None, today: dt.date,
              pushes: int = RECORD_PUSHES,
              max_age_days: int = RECORD_MAX_AGE_DAYS) -> MainRecord | None:
    """Main's record of `task` (oldest-first `summaries` of the default branch), or None when
    no usable run has it. A run counts when it judged the task against a baseline of exactly
    these counts (its `baseline` field), was made by `agent` (when given), with the harness
    of the newest such run (when both record one: runs before a merged harness change are
    another agent) and is at most `max_age_days` old; the newest `pushes` such runs are
    pooled."""
    if pushes < 1 or max_age_days < 0:
        raise ValueError("pushes must be >= 1 and max_age_days >= 0")
    oldest = today - dt.timedelta(days=max_age_days)
    usable = []
    harness = None  # the digest of the newest usable run's harness
    for summary in reversed(summaries):
        record = summary.tasks.get(task)
        if (record is None or record.drifted is None or record.runs <= 0
                or (record.baseline_passes, record.baseline_runs)
                != (baseline_passes, baseline_runs)
                or (agent is not None and summary.agent != agent)
                or dt.date.fromisoformat(summary.date) < oldest
                or harness is not None and harness_digest(summary) not in (None, harness)):
            continue
        harness = harness or harness_digest(summary)
        usable.append(record)
        if len(usable) == pushes:
            break
    if not usable:
        return None
    return MainRecord(sum(r.passes for r in usable), sum(r.runs for r in usable), len(usable))


def harness_digest(summary: RunSummary) -> str | None:
    digest = (summary.harness or {}).get("digest")
    return digest if isinstance(digest, str) else None


def control_evidence(control_passes: int, control_runs: int,
                     record: MainRecord | None = None,
                     agree_p: Fraction = CONTROL_AGREE_P) -> tuple[int, int]:
    """Main now, as the verdict's control evidence (passes, runs): the control arm's runs
    pooled with main's record, unless the control arm is shown below the record (one-sided
    Fisher p < agree_p: main moved since its last push, and the record is stale), then the
    control arm alone. Without a record or control runs, the control arm alone."""
    if record is None or record.runs <= 0 or control_runs <= 0:
        return control_passes, control_runs
    if worse_p(control_passes, control_runs, record.passes, record.runs) < agree_p:
        return control_passes, control_runs
    return control_passes + record.passes, control_runs + record.runs


def arm_status(ref: Reference, record: MainRecord | None, pr_passes: int, pr_runs: int,
               control_passes: int, control_runs: int, *,
               threshold: Fraction = REGRESSION_DROP, alpha: Fraction = CONTROL_ALPHA,
               excuse_p: Fraction = DRIFT_EXCUSE_P) -> TaskStatus:
    """The status of a gated task with pr_runs >= 1 valid PR runs against `ref` (reference())
    and main's `record`, with control_runs valid control runs (module docstring). Without
    control runs: gate.rate_status against ref.rate."""
    screen = rate_status(ref.rate, pr_passes, pr_runs, threshold)
    evidence = control_evidence(control_passes, control_runs, record)
    if evidence[1] <= 0:
        return screen
    if better_p(pr_passes, pr_runs, *evidence) < alpha:
        return "improved"
    if worse_p(pr_passes, pr_runs, *evidence) < alpha:
        return "regressed"
    if screen != "regressed":
        return "unchanged"
    if worse_p(control_passes, control_runs, ref.passes, ref.runs) < excuse_p:
        return "drifted"
    return "regressed"


def judge_task(verdict: TaskVerdict, record: MainRecord | None, control_passes: int = 0,
               control_runs: int = 0, *, rules: GateRules,
               shift: Fraction | None = None) -> TaskVerdict:
    """A task's verdict against main's record (and its control arm's valid runs, if any):
    control.judge_task's, decided again by arm_status. A PR arm below the baseline's line but
    not below a reference that is main's record is "drifted": main has moved, not this PR."""
    judged = (control.judge_task(verdict, control_passes, control_runs, rules) if control_runs
              else verdict)
    if (record is None or record.runs <= 0 or not verdict.gated or not verdict.runs
            or verdict.status not in control.RATE_STATUSES or not verdict.baseline_runs
            or verdict.baseline_rate is None):
        return judged
    ref = reference(verdict.baseline_passes or 0, verdict.baseline_runs, record, shift=shift)
    passes = verdict.passes or 0
    status = arm_status(ref, record, passes, verdict.runs, control_passes, control_runs,
                        threshold=rules.regression_threshold)
    below_baseline = rate_status(verdict.baseline_rate, passes, verdict.runs,
                                 rules.regression_threshold) == "regressed"
    if status == "unchanged" and ref.source in MAIN_SOURCES and below_baseline:
        status = "drifted"
    if status == judged.status and ref.source not in MAIN_SOURCES:
        return judged  # the record agrees with the baseline and changes nothing: no note
    shown = f"main's record {record.passes}/{record.runs} over {record.pushes} push(es); " \
            f"{ref.describe()}"
    return dataclasses.replace(judged, status=status, drift_fails=rules.drift == "fail",
                               note=f"{judged.note}; {shown}".lstrip("; "))


def records_of(summaries: Sequence[RunSummary], verdict: Verdict, *, today: dt.date,
               pushes: int = RECORD_PUSHES,
               max_age_days: int = RECORD_MAX_AGE_DAYS) -> dict[str, MainRecord]:
    """Main's record (record_of) of every gated task of `verdict` that has a baseline and a
    usable record, for the verdict's agent."""
    records = {}
    for t in verdict.tasks:
        if t.gated and t.baseline_runs:
            record = record_of(summaries, t.task, t.baseline_passes or 0, t.baseline_runs,
                               agent=verdict.agent, today=today, pushes=pushes,
                               max_age_days=max_age_days)
            if record is not None:
                records[t.task] = record
    return records


def with_record(verdict: Verdict, records: Mapping[str, MainRecord],
                controls: Mapping[str, tuple[int, int]], rules: GateRules) -> Verdict:
    """The Verdict with each task judged against main's record (task -> MainRecord) and its
    control arm (task -> (passes, valid runs)), by judge_task; the drift note when a task
    drifted. Main's suite-wide drift (suite_shift) is taken over the gated tasks of `records`."""
    shifts = suite_shift({t.task: (t.baseline_passes or 0, t.baseline_runs, records[t.task])
                          for t in verdict.tasks
                          if t.task in records and t.gated and t.baseline_runs})
    tasks = tuple(judge_task(t, records.get(t.task), *controls.get(t.task, (0, 0)), rules=rules,
                             shift=shifts.get(t.task))
                  if t.task in records or t.task in controls else t for t in verdict.tasks)
    return dataclasses.replace(verdict, tasks=tasks,
                               notes=verdict.notes + control.drift_notes(tasks, rules))


def references_of(summaries: Sequence[RunSummary], baseline: Baseline, *, agent: str | None,
                  today: dt.date) -> dict[str, Fraction]:
    """task -> reference().rate for every baseline entry with a usable record (record_of): what
    `run --main-history` stages a gated task against in the baseline's place (main's suite-wide
    drift taken over the entries that gate by the default rules, as with_record takes it over
    the verdict's gated tasks)."""
    records = {}
    for task, entry in baseline.entries.items():
        if entry.runs > 0:
            record = record_of(summaries, task, entry.passes, entry.runs, agent=agent, today=today)
            if record is not None:
                records[task] = record
    shifts = suite_shift({task: (baseline.entries[task].passes, baseline.entries[task].runs,
                                 record) for task, record in records.items()
                          if is_gated_entry(baseline.entries[task])})
    return {task: reference(baseline.entries[task].passes, baseline.entries[task].runs, record,
                            shift=shifts.get(task)).rate for task, record in records.items()}
