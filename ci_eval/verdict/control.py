"""The control arm (pure): a PR's task judged against the base branch's agent run now, with the
baseline as the first screen.

The baseline was recorded weeks ago; since then the model behind the same name, the CLI pin or a
tool on the runner may have moved for everyone ("drift"). A task whose PR runs fall below the
baseline's line (baseline - gate.regression_threshold) is therefore also run with the base
branch's agent and harness (the control arm, on the PR's own task files), interleaved with the
PR's runs, and the two arms are compared with each other:

  regressed  the PR arm worse than the control arm: Fisher's exact test, one-sided, p <
             CONTROL_ALPHA (with no control runs: the baseline rule alone, as before);
  drifted    below the line, not shown worse than the control, and the control itself below
             the baseline's rate: main has moved since the baseline, not this PR's fault (fails
             the check only with `gate: {drift: fail}`);
  improved   the PR arm better than the control arm (the same test the other way), or, with no
             control runs, the baseline rule's "improved";
  unchanged  everything else.
A PR arm below the line whose control arm is not below the baseline's rate stays "regressed"
even when the test cannot tell the arms apart: main does not explain the drop.

Staging (next_step): while the control arm has no runs, the PR arm is staged against the
baseline exactly as confirmation.next_step does, and stops there when it clears. Once its
pooled runs are below the line past the second stage (or past the first, when the screen is
already sure of the breach), both arms run to the next stage together
(the control catches up; the runner interleaves them), and after every stage the pair stops
when the test finds the PR worse (p < CONTROL_ALPHA), when there is no case against the PR left
(p >= FUTILITY_P), when the PR arm clears the baseline again, or at the last stage (N runs per
arm at most). p-values are exact fractions (hypergeometric tails over integers), compared
exactly.

CONTROL_ALPHA and the stop rules were tuned with bench/gate_drift.py (figures: docs/gate.md,
"Drift and the control arm").
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from ci_eval.results.summary import count_runs
from ci_eval.tasks.model import Task, other_prompts
from ci_eval.verdict.baseline import Baseline
from ci_eval.verdict.confirmation import DEFAULT_STAGES
from ci_eval.verdict.confirmation import next_step as baseline_step
from ci_eval.verdict.gate import REGRESSION_DROP, gated_baseline_rate, is_regression, rate_status
from ci_eval.verdict.model import TaskStatus, TaskVerdict, Verdict
from ci_eval.verdict.rules import GateRules

CONTROL_ALPHA = Fraction(1, 1500)  # per task and direction: ~20 tasks, ~10 looks, 2% per PR
FUTILITY_P = Fraction(2, 5)  # both arms stop once worse_p >= this: no case against the PR left
CONTROL_FROM_STAGE = 1  # stages[i] (0-based): while the screen is still unsure, the PR arm
# runs alone up to this stage; the control arm starts after it (or on a firm breach)
ARM_STATUSES = ("regressed", "drifted", "improved", "unchanged")


@dataclass(frozen=True)
class ArmStep:
    """The decision after a stage: runs to add to each arm (both 0: the verdict is final)."""

    pr_runs: int
    control_runs: int
    reason: str  # a confirmation reason, or "control" | "worse" | "not-worse" | "cleared"

    @property
    def final(self) -> bool:
        return not self.pr_runs and not self.control_runs


@lru_cache(maxsize=65536)
def worse_p(pr_passes: int, pr_runs: int, control_passes: int, control_runs: int) -> Fraction:
    """One-sided Fisher exact test: P(the PR arm passes this rarely or more rarely) if both arms
    had the same pass rate, given the total passes. 1 when either arm has no runs."""
    if pr_runs <= 0 or control_runs <= 0:
        return Fraction(1)
    _check(pr_passes, pr_runs)
    _check(control_passes, control_runs)
    total, passes = pr_runs + control_runs, pr_passes + control_passes
    low = max(0, passes - control_runs)
    tail = sum(math.comb(passes, x) * math.comb(total - passes, pr_runs - x)
               for x in range(low, pr_passes + 1))
    return Fraction(tail, math.comb(total, pr_runs))


def better_p(pr_passes: int, pr_runs: int, control_passes: int, control_runs: int) -> Fraction:
    """The same test the other way: P(the PR arm passes this often or more often)."""
    return worse_p(pr_runs - pr_passes, pr_runs, control_runs - control_passes, control_runs)


def _check(passes: int, runs: int) -> None:
    if not 0 <= passes <= runs:
        raise ValueError(f"passes must be 0..runs, got {passes}/{runs}")


def arm_status(baseline_rate: Fraction, pr_passes: int, pr_runs: int, control_passes: int,
               control_runs: int, *, threshold: Fraction = REGRESSION_DROP,
               alpha: Fraction = CONTROL_ALPHA) -> TaskStatus:
    """The status of a gated task with pr_runs >= 1 valid PR runs and control_runs valid control
    runs (0: no control arm; then gate.rate_status alone). A PR arm below the line whose control
    arm did not move below the baseline (and that the test cannot tell from it) stays
    "regressed": the baseline rule stands when main does not explain the drop."""
    screen = rate_status(baseline_rate, pr_passes, pr_runs, threshold)
    if control_runs <= 0:
        return screen
    if better_p(pr_passes, pr_runs, control_passes, control_runs) < alpha:
        return "improved"
    if worse_p(pr_passes, pr_runs, control_passes, control_runs) < alpha:
        return "regressed"
    if screen != "regressed":
        return "unchanged"
    if Fraction(control_passes, control_runs) < baseline_rate:
        return "drifted"
    return "regressed"


def next_step(baseline_rate: Fraction | None, pr_passes: int, pr_runs: int,
              control_passes: int = 0, control_runs: int = 0,
              stages: tuple[int, ...] = DEFAULT_STAGES, *, pr_recorded: int | None = None,
              control_recorded: int | None = None, threshold: Fraction = REGRESSION_DROP,
              alpha: Fraction = CONTROL_ALPHA, futility: Fraction = FUTILITY_P) -> ArmStep:
    """What both arms of a task need next (module docstring). `*_recorded`: runs recorded per
    arm, errored ones included (default: the valid ones); neither arm is given more than the
    last stage's number of runs in all. alpha and futility: the shipped levels unless a bench
    weighs others (bench/gate_drift.py --alpha / --futility)."""
    if not stages:
        raise ValueError("stages must not be empty")
    last = stages[-1]
    pr_recorded = max(pr_recorded or 0, pr_runs)
    control_recorded = max(control_recorded or 0, control_runs)
    if baseline_rate is None or pr_runs <= 0:
        return ArmStep(0, 0, "no-baseline" if baseline_rate is None else "no-runs")
    below = is_regression(baseline_rate, Fraction(pr_passes, pr_runs), threshold)
    screen = baseline_step(baseline_rate, pr_passes, pr_runs, stages, recorded_runs=pr_recorded,
                           regression_threshold=threshold)
    if control_recorded == 0:
        alone_until = stages[min(CONTROL_FROM_STAGE, len(stages) - 1)]
        early = pr_runs <= alone_until and screen.runs_to_add
        if not below or early:  # the baseline screen alone, as confirmation stages it
            return ArmStep(screen.runs_to_add, 0, screen.reason)
        return _together(pr_recorded, control_recorded, stages, "control")
    p_worse = worse_p(pr_passes, pr_runs, control_passes, control_runs)
    if p_worse < alpha:
        return ArmStep(0, 0, "worse")
    if p_worse >= futility:
        return ArmStep(0, 0, "not-worse")
    if not below and not screen.runs_to_add and screen.reason in ("clear", "decided"):
        return ArmStep(0, 0, "cleared")
    if pr_recorded >= last and control_recorded >= last:
        return ArmStep(0, 0, "last-stage")
    return _together(pr_recorded, control_recorded, stages, "suspect")


def _together(pr_recorded: int, control_recorded: int, stages: tuple[int, ...],
              reason: str) -> ArmStep:
    """Both arms to the first stage above the larger of them (the last stage at most)."""
    last = stages[-1]
    ahead = max(pr_recorded, control_recorded)
    target = stages[bisect.bisect_right(stages, ahead)] if ahead < last else last
    return ArmStep(max(0, target - pr_recorded), max(0, target - control_recorded), reason)


def arms_hook(baseline: Baseline, stages: tuple[int, ...], rules: GateRules,
              references: Mapping[str, Fraction] | None = None):
    """The runner's hook for `run --control-ref`: (task, the PR's records, the control arm's
    records) -> (more PR runs, more control runs), by next_step. Tasks that are not gated, or
    whose prompt changed since the baseline, get none. `references`: as confirmation_hook's."""

    def more_runs(task: Task, records: list[dict], control_records: list[dict]) -> tuple[int, int]:
        entry = baseline.entries.get(task.id)
        rate = (gated_baseline_rate(entry, aspirational=task.aspirational, rules=rules)
                if entry else None)
        if entry is None or rate is None or other_prompts([task.prompt_hash], entry.prompt_hash):
            return 0, 0
        rate = (references or {}).get(task.id, rate)
        pr, main = count_runs(records), count_runs(control_records)
        step = next_step(rate, pr.passes, pr.valid, main.passes, main.valid, stages,
                         pr_recorded=len(records), control_recorded=len(control_records),
                         threshold=rules.regression_threshold)
        return step.pr_runs, step.control_runs

    return more_runs


RATE_STATUSES = ("regressed", "improved", "unchanged")  # what the baseline rule alone decides
REFRESH_HINT = ("main itself has moved since the baseline; refresh it: run the baseline "
                "workflow (or `ci-eval run -k 40` on main, then `ci-eval baseline update --all`)")


def judge_task(verdict: TaskVerdict, control_passes: int, control_runs: int,
               rules: GateRules) -> TaskVerdict:
    """A task's verdict with its control arm's valid runs: the rate status decided again by
    arm_status (gated tasks whose rate the baseline rule judged), the control's counts shown on
    every task that has them."""
    shown = (f"control arm (main now) {control_passes}/{control_runs}"
             + (f" = {control_passes / control_runs:.2f}" if control_runs else ""))
    judged = dataclasses.replace(verdict, control_passes=control_passes,
                                 control_runs=control_runs, drift_fails=rules.drift == "fail",
                                 note="; ".join(filter(None, [verdict.note, shown])))
    if (not verdict.gated or verdict.status not in RATE_STATUSES or not verdict.runs
            or verdict.baseline_rate is None or control_runs <= 0):
        return judged
    status = arm_status(verdict.baseline_rate, verdict.passes or 0, verdict.runs, control_passes,
                        control_runs, threshold=rules.regression_threshold)
    why = {"drifted": "both arms below the baseline: main has moved, not this PR's regression",
           "regressed": "worse than the control arm" if worse_p(
               verdict.passes, verdict.runs, control_passes, control_runs) < CONTROL_ALPHA
           else "below the baseline, and main is not",
           "improved": "better than the control arm",
           "unchanged": "not worse than the control arm"}[status]
    return dataclasses.replace(judged, status=status, note=f"{judged.note}; {why}")


def with_control(verdict: Verdict, controls: Mapping[str, tuple[int, int]],
                 rules: GateRules) -> Verdict:
    """The Verdict with each task's control arm (task -> (passes, valid runs)) applied, and a
    note that main has drifted when a task did."""
    tasks = tuple(judge_task(t, *controls[t.task], rules) if t.task in controls else t
                  for t in verdict.tasks)
    return dataclasses.replace(verdict, tasks=tasks, notes=verdict.notes + drift_notes(tasks, rules))


def drift_notes(tasks: tuple[TaskVerdict, ...], rules: GateRules) -> tuple[str, ...]:
    """The verdict's note that main has drifted, when a task did (none otherwise)."""
    drifted = [t.task for t in tasks if t.status == "drifted"]
    if not drifted:
        return ()
    shown = ", ".join(drifted[:5]) + (f" and {len(drifted) - 5} more" if len(drifted) > 5
                                      else "")
    effect = "fails the check (gate.drift: fail)" if rules.drift == "fail" else (
        "does not fail the check")
    return (f"Drift: {len(drifted)} task(s) ({shown}) fail against the baseline on main too: "
            f"{REFRESH_HINT}. Drift {effect}.",)
