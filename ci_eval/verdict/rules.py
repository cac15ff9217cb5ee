"""The gate's parameters (pure data): the pass-rate rule's threshold, the rate a baseline must
reach to be gated, and the cost / tokens / wall limits. ci-eval.yaml's `gate:` section sets them
(agents/gate_config.py reads it); every field defaults to the rule as shipped:

    gate:
      regression_threshold: 0.30   # a task regresses when its pass rate drops MORE than this
      min_baseline_rate: 0.60      # baselines below are aspirational (reported, never gated)
      cost:   {max_increase: 0.5, fail: false}   # flag a rise of more than 50%, report only
      tokens: {max_increase: 0.5, fail: false}
      wall:   {max_increase: 0.5, fail: false}
      drift: warn                  # a task both arms fail against the baseline (`run
                                   # --control-ref`): warn (shown, passes) or fail
      drift_refresh_after: 3       # the scheduled baseline workflow opens a refresh PR for a
                                   # task drifted on main in this many recorded runs in a row

Rates are exact fractions (0.30 in YAML is 3/10). An axis flags a task when its mean rose by
more than `max_increase` AND the rise is evidence, not noise (verdict/axes.py); `fail: true`
makes such a flag fail the check, otherwise it is shown only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

DEFAULT_REGRESSION_THRESHOLD = Fraction(3, 10)
DEFAULT_MIN_BASELINE_RATE = Fraction(3, 5)
DEFAULT_MAX_INCREASE = Fraction(1, 2)
# The usage axes: the name in ci-eval.yaml and reports -> the results field it reads.
AXES = {"cost": "cost_usd", "tokens": "tokens", "wall": "wall_seconds"}
AXIS_UNITS = {"cost": "$", "tokens": "", "wall": "s"}
DRIFT_POLICIES = ("warn", "fail")
DEFAULT_DRIFT_REFRESH_AFTER = 3
MAX_DRIFT_REFRESH_AFTER = 20  # the history the scheduled baseline workflow fetches


@dataclass(frozen=True)
class AxisRule:
    max_increase: Fraction = DEFAULT_MAX_INCREASE  # flag above (1 + max_increase) x baseline
    fail: bool = False  # a flag fails the check (otherwise it is reported only)

    @property
    def ratio(self) -> Fraction:
        return 1 + self.max_increase


def _default_axes() -> dict[str, AxisRule]:
    return {axis: AxisRule() for axis in AXES}


@dataclass(frozen=True)
class GateRules:
    regression_threshold: Fraction = DEFAULT_REGRESSION_THRESHOLD
    min_baseline_rate: Fraction = DEFAULT_MIN_BASELINE_RATE
    axes: dict[str, AxisRule] = field(default_factory=_default_axes)
    drift: str = "warn"  # DRIFT_POLICIES: does a drifted task fail the check?
    drift_refresh_after: int = DEFAULT_DRIFT_REFRESH_AFTER  # drifted runs on main in a row

    def describe(self) -> str:
        """The rules in one line: what the comment's footer states."""
        axes = ", ".join(f"{axis} > ×{float(rule.ratio):g}"
                         + (" fails" if rule.fail else " reported")
                         for axis, rule in self.axes.items())
        return (f"regression = drop of more than {_decimal(self.regression_threshold)} (exact) "
                f"· gated from baseline ≥ {_decimal(self.min_baseline_rate)} · {axes}"
                + (" · drift fails" if self.drift == "fail" else ""))

    def to_json(self) -> dict:
        return {"regression_threshold": str(self.regression_threshold),
                "min_baseline_rate": str(self.min_baseline_rate),
                "axes": {axis: {"max_increase": str(rule.max_increase), "fail": rule.fail}
                         for axis, rule in self.axes.items()},
                "drift": self.drift}


DEFAULT_RULES = GateRules()


def _decimal(value: Fraction) -> str:
    """3/10 -> "0.30"; a fraction that is no short decimal keeps its exact form."""
    text = f"{float(value):.2f}"
    return text if Fraction(text) == value else f"{float(value):g} ({value})"
