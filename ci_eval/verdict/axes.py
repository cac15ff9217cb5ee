"""Cost, tokens and wall time against the baseline (pure): one status per axis and its evidence.

An axis of a task is
  regressed  its geometric-mean ratio to the baseline is above 1 + max_increase AND a one-sided
             test says the rise is not noise (p < ALPHA);
  improved   the ratio is below 1 / (1 + max_increase) and the same test the other way round
             says the fall is not noise;
  unknown    the baseline holds no per-run distribution of it (a schema_version 2 file, or
             the agent reported none), the runs reported none, or there are fewer than 3
             values in all;
  unchanged  otherwise.
The test: Student's t on the logs of the per-run values with the pooled variance
(results/stats.log_ratio_test): costs and times are skewed and a rise is a ratio. Why that
test and ALPHA: docs/gate.md; the false flags and the detection: bench/cost_sim.py. A regressed
axis fails the check only when its rule says `fail: true` (verdict/rules.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from ci_eval.results.stats import Distribution, log_ratio_test
from ci_eval.verdict.rules import AXES, AXIS_UNITS, AxisRule

# One-sided level of the test for one axis of one task (tuned with bench/cost_sim.py so that a
# 20-task suite with nothing changed is flagged on at most 2% of PRs).
ALPHA = 0.001
AXIS_STATUSES = ("regressed", "improved", "unchanged", "unknown")


@dataclass(frozen=True)
class AxisVerdict:
    axis: str  # "cost" | "tokens" | "wall"
    status: str  # one of AXIS_STATUSES
    rule: AxisRule
    baseline: Distribution | None = None
    current: Distribution | None = None
    ratio: float | None = None  # geometric mean now / at the baseline
    t: float | None = None
    p_rise: float | None = None  # one-sided p of "it rose"
    why_unknown: str = ""

    @property
    def fails(self) -> bool:
        return self.status == "regressed" and self.rule.fail

    @property
    def evidence(self) -> str:
        if self.status == "unknown":
            return self.why_unknown
        base, now = self.baseline, self.current
        p = self.p_rise if self.status != "improved" else 1.0 - self.p_rise
        return (f"{self.axis} ×{self.ratio:.2f} (geometric mean {show(self.axis, now)} over "
                f"{now.n} runs vs {show(self.axis, base)} over {base.n}; one-sided t = "
                f"{self.t:.2f}, p = {p:.2g}, flagged at p < {ALPHA:g} beyond "
                f"×{float(self.rule.ratio):g})")

    def to_json(self) -> dict:
        return {"status": self.status, "ratio": self.ratio, "t": _finite(self.t),
                "p_rise": self.p_rise, "alpha": ALPHA,
                "max_increase": str(self.rule.max_increase), "fail": self.rule.fail,
                "fails_gate": self.fails, "evidence": self.evidence,
                "baseline": self.baseline.to_json() if self.baseline else None,
                "current": self.current.to_json() if self.current else None}


def _finite(value: float | None) -> float | str | None:
    return value if value is None or math.isfinite(value) else str(value)


def show(axis: str, dist: Distribution) -> str:
    value = math.exp(dist.log_mean)
    unit = AXIS_UNITS[axis]
    if unit == "$":
        return f"${value:.4g}"
    if unit == "s":
        return f"{value:.3g}s"
    return f"{value / 1000:.1f}k" if value >= 1000 else f"{value:.0f}"


def axis_status(axis: str, rule: AxisRule, baseline: Distribution | None,
                current: Distribution | None) -> AxisVerdict:
    if baseline is None:
        return AxisVerdict(axis, "unknown", rule, current=current,
                           why_unknown=f"{axis}: the baseline has no per-run distribution")
    if current is None:
        return AxisVerdict(axis, "unknown", rule, baseline=baseline,
                           why_unknown=f"{axis}: the runs reported none")
    if baseline.n + current.n < 3:
        return AxisVerdict(axis, "unknown", rule, baseline, current,
                           why_unknown=f"{axis}: {baseline.n} + {current.n} values, too few")
    t, p_rise = log_ratio_test(baseline, current)
    ratio = math.exp(current.log_mean - baseline.log_mean)
    status = "unchanged"
    if ratio > rule.ratio and p_rise < ALPHA:
        status = "regressed"
    elif ratio * rule.ratio < 1 and 1.0 - p_rise < ALPHA:
        status = "improved"
    return AxisVerdict(axis, status, rule, baseline, current, ratio, t, p_rise)


def axis_statuses(rules: Mapping[str, AxisRule], baseline: Mapping[str, Distribution],
                  current: Mapping[str, Distribution]) -> tuple[AxisVerdict, ...]:
    """Every axis of one task; `baseline` and `current` map a results field (tokens, cost_usd,
    wall_seconds) to its distribution."""
    return tuple(axis_status(axis, rules[axis], baseline.get(field), current.get(field))
                 for axis, field in AXES.items())


def unknown_axes(rules: Mapping[str, AxisRule], why: str) -> tuple[AxisVerdict, ...]:
    return tuple(AxisVerdict(axis, "unknown", rules[axis], why_unknown=f"{axis}: {why}")
                 for axis in AXES)
