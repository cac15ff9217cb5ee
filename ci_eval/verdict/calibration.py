"""Judge calibration (pure): do a task's checks agree with the human's expected pass rate?

A task whose metadata has human_label.expected_pass_rate is flagged when its observed pass rate
differs from the expectation by MORE than 0.20 (exact fractions: 0.20 off is fine) in each of
its last 3 consecutive baseline snapshots. Observed below expected: the checks look too strict;
above: too loose; both directions across the 3 snapshots: inconsistent. The snapshots are the
baseline entries' observations (BaselineEntry.history): what every `baseline update` measured,
also the updates that refused to lower a gate, so a task whose gate stays at 0.80 while it is
measured at 0.40 is seen. They live in baseline.json, so this works in a shallow clone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ci_eval.errors import UserError

TOLERANCE = Fraction(1, 5)
WINDOW = 3

TOO_STRICT = "too strict"
TOO_LOOSE = "too loose"
INCONSISTENT = "inconsistent"


@dataclass(frozen=True)
class CalibrationWarning:
    task: str
    expected: Fraction
    observed: tuple[Fraction, ...]  # the last WINDOW snapshots' pass rates, oldest first
    dates: tuple[str, ...]
    direction: str  # TOO_STRICT | TOO_LOOSE | INCONSISTENT

    @property
    def message(self) -> str:
        seen = ", ".join(f"{float(r):.2f}" for r in self.observed)
        what = {
            TOO_STRICT: "checks look too strict (observed below expected)",
            TOO_LOOSE: "checks look too loose (observed above expected)",
            INCONSISTENT: "observed rate swings on both sides of expected",
        }[self.direction]
        return (f"{self.task}: {what}: observed {seen} in the last {len(self.observed)} "
                f"baseline observations vs expected {float(self.expected):.2f} "
                f"(more than {float(TOLERANCE):.2f} off each time)")

    def to_json(self) -> dict:
        return {
            "task": self.task,
            "direction": self.direction,
            "expected_pass_rate": float(self.expected),
            "observed_pass_rates": [float(r) for r in self.observed],
            "snapshot_dates": list(self.dates),
            "message": self.message,
        }


def expected_rate(value: object) -> Fraction:
    """human_label.expected_pass_rate as an exact fraction: 0.6 -> 3/5 (its decimal reading,
    not the binary float). TypeError / ValueError unless a number 0..1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number 0-1, got {value!r}")
    rate = Fraction(str(value)) if isinstance(value, float) else Fraction(value)
    if not 0 <= rate <= 1:
        raise ValueError(f"expected a number 0-1, got {value!r}")
    return rate


def expected_rates(tasks: Iterable) -> dict[str, Fraction]:
    """task id -> expected pass rate, for the Task objects whose metadata has
    human_label.expected_pass_rate; UserError naming metadata.json when it is not a number 0-1."""
    found = {}
    for task in tasks:
        label = task.metadata.get("human_label")
        if not isinstance(label, dict) or "expected_pass_rate" not in label:
            continue
        try:
            found[task.id] = expected_rate(label["expected_pass_rate"])
        except (TypeError, ValueError) as exc:
            raise UserError(str(exc), path=task.path / "metadata.json",
                            field="$.human_label.expected_pass_rate") from None
    return found


def check_task(
    task: str,
    expected: Fraction,
    snapshots: Sequence[tuple[str, int, int]],
    *,
    window: int = WINDOW,
    tolerance: Fraction = TOLERANCE,
) -> CalibrationWarning | None:
    """snapshots: (recorded date, passes, runs), oldest first. A warning when each of the last
    `window` differs from expected by more than `tolerance`; None otherwise (also when there
    are fewer than `window` snapshots: not enough history yet)."""
    recent = [s for s in snapshots if s[2] > 0][-window:]
    if len(recent) < window:
        return None
    rates = tuple(Fraction(passes, runs) for _, passes, runs in recent)
    if not all(abs(rate - expected) > tolerance for rate in rates):
        return None
    if all(rate < expected for rate in rates):
        direction = TOO_STRICT
    elif all(rate > expected for rate in rates):
        direction = TOO_LOOSE
    else:
        direction = INCONSISTENT
    return CalibrationWarning(task, Fraction(expected), rates, tuple(d for d, _, _ in recent),
                              direction)


def check_all(
    expected: Mapping[str, Fraction],
    history: Mapping[str, Iterable[tuple[str, int, int]]],
) -> list[CalibrationWarning]:
    """expected: task -> expected pass rate (tasks with a human label); history: task ->
    snapshots. Warnings sorted by task."""
    warnings = []
    for task in sorted(expected):
        found = check_task(task, expected[task], list(history.get(task, ())))
        if found is not None:
            warnings.append(found)
    return warnings
