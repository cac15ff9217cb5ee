"""Cost, tokens and wall time against the baseline (pure): one status per axis and its evidence.

An axis of a task is
  regressed  its ratio to the baseline (Hodges-Lehmann: the median of now/then over every pair
             of runs) is above 1 + max_increase AND a one-sided test says the rise is not
             noise (p < ALPHA);
  improved   the ratio is below 1 / (1 + max_increase) and the same test the other way round
             says the fall is not noise;
  unknown    the baseline holds no per-run distribution of it (a schema_version 2 file, or
             the agent reported none), the runs reported none, or there are fewer than 3
             values in all;
  unchanged  otherwise.
The test: Mann-Whitney's, one-sided (results/stats.rank_test_greater): under "nothing changed"
every ordering of the baseline's and the PR's runs is equally likely, whatever the shape of
their distribution (skewed costs, a retry that takes 3x), so its false flags are what ALPHA
says. Why that test and ALPHA: docs/gate.md; the false flags and the detection:
bench/cost_sim.py. A regressed axis fails the check only when its rule says `fail: true`
(verdict/rules.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ci_eval.results.stats import Distribution, log_shift, rank_test_greater
from ci_eval.verdict.rules import AXES, AXIS_UNITS, AxisRule

# One-sided level of the test for one axis of one task: 0.02 / (20 tasks x 3 axes), rounded
# down. The test is exact whatever the runs' distribution, so a 20-task suite with nothing
# changed gets a false flag on at most 60 x ALPHA = 1.8% of PRs (the union bound; the ratio
# condition and the correlation of tokens with cost make it fewer: bench/cost_sim.py). A suite
# of N tasks: at most 3 x N x ALPHA.
ALPHA = 0.0003

AxisStatus = Literal["regressed", "improved", "unchanged", "unknown"]


@dataclass(frozen=True)
class AxisVerdict:
    axis: str  # "cost" | "tokens" | "wall"
    status: AxisStatus
    rule: AxisRule
    baseline: Distribution | None = None
    current: Distribution | None = None
    ratio: float | None = None  # Hodges-Lehmann: median over pairs of runs of now / then
    u: float | None = None  # Mann-Whitney U: pairs (PR run, baseline run) the PR run is above
    p: float | None = None  # one-sided p of the direction it moved in (of "it rose" unless
    #                         improved)
    why_unknown: str = ""

    @property
    def fails(self) -> bool:
        return self.status == "regressed" and self.rule.fail

    @property
    def evidence(self) -> str:
        base, now = self.baseline, self.current
        if self.status == "unknown" or base is None or now is None:
            return self.why_unknown
        pairs = len(base.values) * len(now.values)
        return (f"{self.axis} ×{self.ratio:.2f} (geometric mean {show(self.axis, now)} over "
                f"{now.n} runs vs {show(self.axis, base)} over {base.n}; Mann-Whitney U = "
                f"{self.u:g} of {pairs} pairs, one-sided p = {self.p:.2g}; flagged at "
                f"p < {ALPHA:g} beyond ×{float(self.rule.ratio):g})")

    def to_json(self) -> dict:
        return {"status": self.status, "ratio": self.ratio, "mann_whitney_u": self.u,
                "p": self.p, "alpha": ALPHA,
                "max_increase": str(self.rule.max_increase), "fail": self.rule.fail,
                "fails_gate": self.fails, "evidence": self.evidence,
                "baseline": self.baseline.to_json() if self.baseline else None,
                "current": self.current.to_json() if self.current else None}


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
    ratio = log_shift(baseline, current)
    u, p = rank_test_greater(baseline, current)
    status: AxisStatus = "unchanged"
    if ratio > rule.ratio and p < ALPHA:
        status = "regressed"
    elif ratio * rule.ratio < 1:
        _, p = rank_test_greater(current, baseline)
        status = "improved" if p < ALPHA else "unchanged"
    return AxisVerdict(axis, status, rule, baseline, current, ratio, u, p)


def axis_statuses(rules: Mapping[str, AxisRule], baseline: Mapping[str, Distribution],
                  current: Mapping[str, Distribution]) -> tuple[AxisVerdict, ...]:
    """Every axis of one task; `baseline` and `current` map a results field (tokens, cost_usd,
    wall_seconds) to its distribution."""
    return tuple(axis_status(axis, rules[axis], baseline.get(field), current.get(field))
                 for axis, field in AXES.items())


def unknown_axes(rules: Mapping[str, AxisRule], why: str) -> tuple[AxisVerdict, ...]:
    return tuple(AxisVerdict(axis, "unknown", rules[axis], why_unknown=f"{axis}: {why}")
                 for axis in AXES)
