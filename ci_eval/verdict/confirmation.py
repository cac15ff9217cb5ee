"""Confirmation runs (pure): when to run a gated task again before its verdict, and how much.

With k = 5 runs per task the literal rule (a drop of more than 0.30) both cries wolf and misses:
on a 20-task suite it fails about 3 PRs in 5 with no true change, and catches a true 0.4 drop
about 2 times in 3 (bench/gate_sim.py; docs/gate.md). So the runner stages extra runs, and
stops a task as soon as more runs are unlikely to change its verdict, in either direction.

Stages are run totals (shipped: 5, 10, ..., 50; the first is normally k). The last stage, N, is the most
valid runs a task is ever asked for, and the most runs (valid + errored) it is ever given when
`recorded_runs` is passed. After every stage `next_step` looks at ALL the task's valid runs so
far: n runs, rate = passes/n, T = baseline - 0.30, and

    s(n) = 0.5 * sqrt(1/n - 1/N)

the standard deviation of the rate after N runs around today's rate, at its largest (a true
rate of 0.5): how far the remaining N - n runs can still move the rate, counting both today's
uncertainty about the true rate and the noise of the runs to come. It is 0 at N. In order:

  no-baseline  not gated (baseline_rate None): nothing to add;
  no-runs      no valid run yet: nothing to add (inconclusive anyway);
  last-stage   n >= N, or recorded_runs >= N: final;
  decided      the verdict after N runs is already fixed whatever the remaining runs do: even
               all passing stays below T (passes + N - n < T*N: regressed), or even all
               failing stays at or above T (passes >= T*N: not regressed);
  clear        rate >= T + CLEAR_Z * s(n): a clear pass, at any stage, the first included;
  confirmed    rate < T - CONFIRM_Z * s(n), once n is past the first stage: a clear regression
               (never on the first stage's runs alone);
  suspect      otherwise: run on to the first stage above n (never past N - recorded_runs).

The margins are compared exactly (squared, in fractions): CLEAR_Z's with >=, CONFIRM_Z's with
>. Whatever stops the staging, the verdict is `gate.rate_status` on all the task's runs: the
rule itself, so every stop above agrees with it. The stages and the two margins were tuned with
bench/gate_sim.py; bench/gate_limit.py computes the best any stopping rule could do on the
same simulated suite (figures and both commands: docs/gate.md).

    from ci_eval.verdict.confirmation import DEFAULT_STAGES, parse_stages, runs_to_add
    extra = runs_to_add(rate, passes, valid_runs, stages, recorded_runs=len(records))  # 0: final
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from ci_eval.errors import UserError
from ci_eval.results.summary import count_runs
from ci_eval.tasks.model import Task, other_prompts
from ci_eval.verdict.baseline import Baseline
from ci_eval.verdict.gate import REGRESSION_DROP, gated_baseline_rate
from ci_eval.verdict.rules import GateRules

DEFAULT_STAGES: tuple[int, ...] = (5, 10, 15, 20, 25, 30, 35, 40, 45, 50)
CLEAR_Z = Fraction(11, 10)  # stop, cleared, once rate >= T + CLEAR_Z * s(n)
CONFIRM_Z = Fraction(19, 10)  # past the first stage, stop once rate < T - CONFIRM_Z * s(n)
MAX_STAGE = 10_000


@dataclass(frozen=True)
class StageDecision:
    """The decision after a stage. runs_to_add == 0 means the verdict is final."""

    runs_to_add: int
    reason: str  # "suspect" | "clear" | "confirmed" | "decided" | "last-stage" | "no-runs" | "no-baseline"


def parse_stages(spec: str, *, field: str = "--confirm-stages") -> tuple[int, ...]:
    """"5,10,20,30" -> (5, 10, 20, 30): whole numbers >= 1, strictly increasing.
    A single stage ("5") turns confirmation off: the literal rule after k runs."""
    parts = [p.strip() for p in str(spec).split(",")]
    if not parts or any(not p for p in parts):
        raise UserError(f"expected comma-separated run counts like 5,10,20, got {spec!r}",
                        field=field)
    stages = []
    for part in parts:
        if not part.isdigit() or int(part) < 1 or int(part) > MAX_STAGE:
            raise UserError(f"expected a whole number 1-{MAX_STAGE}, got {part!r} in {spec!r}",
                            field=field)
        stages.append(int(part))
    if any(b <= a for a, b in itertools.pairwise(stages)):
        raise UserError(f"stages must increase, got {spec!r}", field=field)
    return tuple(stages)


def format_stages(stages: tuple[int, ...]) -> str:
    return ",".join(str(s) for s in stages)


def describe(stages: tuple[int, ...] = DEFAULT_STAGES) -> str:
    """The rule in one line, for reports and the simulation's header."""
    return (f"stages {format_stages(stages)} (at most {stages[-1]} runs per task); with "
            f"T = baseline - 0.30 and s(n) = 0.5*sqrt(1/n - 1/{stages[-1]}): clear once "
            f"rate >= T + {float(CLEAR_Z):g}*s(n), confirmed once rate < T - "
            f"{float(CONFIRM_Z):g}*s(n) after the first stage, decided once the remaining "
            "runs cannot move the rate across T")


def next_step(
    baseline_rate: Fraction | None,
    passes: int,
    runs: int,
    stages: tuple[int, ...] = DEFAULT_STAGES,
    *,
    recorded_runs: int | None = None,
    regression_threshold: Fraction = REGRESSION_DROP,
) -> StageDecision:
    """The decision for a gated task with `passes` of `runs` valid runs (pooled over every stage
    so far), as the module docstring lists it. baseline_rate None (no baseline / aspirational)
    or no valid runs: nothing to add. recorded_runs (valid + errored, default `runs`) caps the
    staging: a task never gets more than the last stage's number of runs, errored ones included
    (a task whose runs keep erroring ends inconclusive instead of looping)."""
    if not stages:
        raise ValueError("stages must not be empty")
    if baseline_rate is None:
        return StageDecision(0, "no-baseline")
    if runs <= 0:
        return StageDecision(0, "no-runs")  # inconclusive anyway; more runs of a broken setup won't help
    if not 0 <= passes <= runs:
        raise ValueError(f"passes must be 0..runs, got {passes}/{runs}")
    recorded = runs if recorded_runs is None else max(recorded_runs, runs)
    last = stages[-1]
    if runs >= last or recorded >= last:
        return StageDecision(0, "last-stage")
    threshold = Fraction(baseline_rate) - regression_threshold
    if Fraction(passes + last - runs, last) < threshold:
        return StageDecision(0, "decided")  # even all-pass to the last stage stays a breach
    if Fraction(passes, last) >= threshold:
        return StageDecision(0, "decided")  # even all-fail to the last stage stays clear of the line
    gap = Fraction(passes, runs) - threshold
    spread_squared = Fraction(1, 4) * (Fraction(1, runs) - Fraction(1, last))  # s(n)**2
    if gap >= 0 and gap * gap >= CLEAR_Z * CLEAR_Z * spread_squared:
        return StageDecision(0, "clear")
    if gap < 0 and runs > stages[0] and gap * gap > CONFIRM_Z * CONFIRM_Z * spread_squared:
        return StageDecision(0, "confirmed")
    target = stages[bisect.bisect_right(stages, runs)]  # the first stage above `runs`
    return StageDecision(min(target - runs, last - recorded), "suspect")


def runs_to_add(
    baseline_rate: Fraction | None,
    passes: int,
    runs: int,
    stages: tuple[int, ...] = DEFAULT_STAGES,
    *,
    recorded_runs: int | None = None,
    regression_threshold: Fraction = REGRESSION_DROP,
) -> int:
    """How many more runs the task needs before its verdict; 0 = the verdict is final (apply
    `gate.rate_status(baseline_rate, passes, runs)` to all runs). regression_threshold:
    ci-eval.yaml's gate.regression_threshold (T = baseline - it)."""
    return next_step(baseline_rate, passes, runs, stages, recorded_runs=recorded_runs,
                     regression_threshold=regression_threshold).runs_to_add


def confirmation_hook(baseline: Baseline, stages: tuple[int, ...], rules: GateRules,
                      references: Mapping[str, Fraction] | None = None):
    """The runner's hook for `run --confirm-against`: (task, its records) -> extra runs for a
    gated task whose pooled runs breach (or nearly breach) the gate, by runs_to_add.
    `references`: task -> the rate to stage a gated task against in the baseline's place
    (main's record, verdict/main_record.py)."""

    def more_runs(task: Task, records: list[dict]) -> int:
        entry = baseline.entries.get(task.id)
        rate = (gated_baseline_rate(entry, aspirational=task.aspirational, rules=rules)
                if entry else None)
        if entry is None or rate is None or other_prompts([task.prompt_hash], entry.prompt_hash):
            return 0  # not gated, or prompt-changed whatever the runs say
        rate = (references or {}).get(task.id, rate)
        counts = count_runs(records)
        return runs_to_add(rate, counts.passes, counts.valid, stages, recorded_runs=len(records),
                           regression_threshold=rules.regression_threshold)

    return more_runs
