"""The gate's data: what it takes per task (TaskState from tasks/, TaskResult from results/) and
what it gives (TaskVerdict per task, the Verdict of the comparison). How a status is decided:
verdict/gate.py."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Literal, get_args

from ci_eval.results import stats
from ci_eval.results.summary import TaskSummary
from ci_eval.verdict.axes import AxisVerdict
from ci_eval.verdict.rules import DEFAULT_RULES, GateRules

if TYPE_CHECKING:  # against.py builds on this module's types
    from ci_eval.verdict.against import Against

TaskStatus = Literal[
    "regressed",
    "inconclusive",
    "prompt-changed",
    "drifted",
    "improved",
    "new",
    "missing",
    "aspirational",
    "unchanged",
]
STATUSES: tuple[TaskStatus, ...] = get_args(TaskStatus)
FAILING_STATUSES = frozenset({"regressed", "inconclusive", "prompt-changed"})



@dataclass(frozen=True)
class TaskState:
    """What tasks/ says about a task now."""

    task: str
    number: int | None
    prompt_hash: str | None
    aspirational: bool = False


@dataclass(frozen=True)
class TaskResult:
    """One task's results in this comparison."""

    summary: TaskSummary
    prompt_hashes: frozenset[str] = frozenset()  # as recorded in the results


@dataclass(frozen=True)
class TaskVerdict:
    task: str
    status: TaskStatus
    gated: bool  # a failing status of this task fails the gate
    baseline_passes: int | None = None
    baseline_runs: int | None = None
    passes: int | None = None
    runs: int | None = None  # valid runs
    errors: int = 0
    requested: int | None = None
    baseline_tokens: float | None = None
    tokens: float | None = None
    baseline_wall_seconds: float | None = None
    wall_seconds: float | None = None
    note: str = ""
    why: str = ""  # the most common reason its runs did not pass, with how many runs gave it
    rubric_runs: int = 0  # runs graded by the task's rubric.yaml
    rubric_score: float | None = None  # their mean score
    rubric_tripped: tuple[tuple[str, int], ...] = ()  # failed criterion -> runs, most first
    rubric_auto_fail: tuple[tuple[str, int], ...] = ()  # tripped auto-fail gate -> runs
    axes: tuple[AxisVerdict, ...] = ()  # cost, tokens, wall against the baseline
    control_passes: int | None = None  # the control arm (`run --control-ref`): main's agent now
    control_runs: int | None = None  # its valid runs (None: no control arm for this task)
    drift_fails: bool = False  # gate.drift is "fail": a drifted task fails the check

    @property
    def baseline_rate(self) -> Fraction | None:
        return Fraction(self.baseline_passes or 0, self.baseline_runs) if self.baseline_runs \
            else None

    @property
    def rate(self) -> Fraction | None:
        return Fraction(self.passes or 0, self.runs) if self.runs else None

    @property
    def delta(self) -> Fraction | None:
        if self.rate is None or self.baseline_rate is None:
            return None
        return self.rate - self.baseline_rate

    @property
    def interval(self) -> tuple[float, float] | None:
        """95% Wilson interval of the current pass rate."""
        return stats.wilson_interval(self.passes or 0, self.runs) if self.runs else None

    @property
    def control_rate(self) -> Fraction | None:
        return Fraction(self.control_passes or 0, self.control_runs) if self.control_runs \
            else None

    @property
    def tokens_delta(self) -> float | None:
        return _diff(self.tokens, self.baseline_tokens)

    @property
    def wall_delta(self) -> float | None:
        return _diff(self.wall_seconds, self.baseline_wall_seconds)

    @property
    def failing_axes(self) -> tuple[AxisVerdict, ...]:
        """Regressed axes whose rule fails the check (gated tasks only)."""
        return tuple(a for a in self.axes if a.fails) if self.gated else ()

    @property
    def fails_gate(self) -> bool:
        return self.gated and (self.status in FAILING_STATUSES or bool(self.failing_axes)
                               or (self.status == "drifted" and self.drift_fails))


def _diff(current: float | None, base: float | None) -> float | None:
    return None if current is None or base is None else current - base


@dataclass(frozen=True)
class Verdict:
    tasks: tuple[TaskVerdict, ...]
    k: int
    agent: str | None = None  # of the results
    baseline_agent: str | None = None
    calibration: tuple = ()  # calibration.CalibrationWarning, reported alongside
    notes: tuple[str, ...] = field(default=())
    setup_broken: str | None = None  # every run failed the same way: the agent never worked
    total_tokens: int | None = None  # of every run compared (None: no run reported any)
    total_cost_usd: float | None = None
    rules: GateRules = DEFAULT_RULES
    against: Against | None = None  # `compare --against`'s other agent

    @property
    def failed(self) -> tuple[TaskVerdict, ...]:
        return tuple(t for t in self.tasks if t.fails_gate)

    @property
    def drifted(self) -> tuple[TaskVerdict, ...]:
        """Tasks both arms fail against the baseline: main itself has moved since it."""
        return tuple(t for t in self.tasks if t.status == "drifted")

    @property
    def passed(self) -> bool:
        return not self.failed and self.setup_broken is None

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    @property
    def counts(self) -> dict[str, int]:
        """status -> number of tasks, in STATUSES order, statuses with no task left out."""
        found = Counter(t.status for t in self.tasks)
        return {s: found[s] for s in STATUSES if found[s]}
