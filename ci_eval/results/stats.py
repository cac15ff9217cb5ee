"""Pure statistics over run outcomes: pass@k, pass^k, intervals, percentiles."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k), for k <= n."""
    if not 0 < k <= n:
        raise ValueError(f"pass@k needs 0 < k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (all k of k sampled runs pass): C(c, k) / C(n, k), for k <= n."""
    if not 0 < k <= n:
        raise ValueError(f"pass^k needs 0 < k <= n, got k={k}, n={n}")
    return math.comb(c, k) / math.comb(n, k)


def pass_rate(passes: int, runs: int) -> Fraction | None:
    """Exact pass rate; None when there are no valid runs."""
    return Fraction(passes, runs) if runs else None


def wilson_interval(passes: int, runs: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval for a binomial proportion.

    Exact at the bounds: with every run passing the upper end is 1.0 and with none the lower end
    is 0.0 (algebraically so; in floating point centre + half gives 0.9999999999999999 for 10/10).
    """
    if runs == 0:
        return (0.0, 1.0)
    p = passes / runs
    denom = 1 + z * z / runs
    centre = (p + z * z / (2 * runs)) / denom
    half = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / denom
    low = 0.0 if passes == 0 else max(0.0, centre - half)
    high = 1.0 if passes == runs else min(1.0, centre + half)
    return (low, high)


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


# --- per-run distributions of tokens, cost and wall time -------------------------------------

# The smallest value a log is taken of, per unit: a run that reports 0 tokens or $0 is counted
# at the floor (log(0) is -inf), small enough never to matter next to a real run's value.
LOG_FLOOR = 1e-9


@dataclass(frozen=True)
class Distribution:
    """What the cost/tokens/wall test needs of a set of per-run values: n, mean and standard
    deviation (for people), and the same of their natural logs (the test works on logs: costs
    and times are skewed, and a rise is a ratio)."""

    n: int
    mean: float
    sd: float
    log_mean: float
    log_sd: float

    def to_json(self) -> dict:
        return {"n": self.n, "mean": _round(self.mean), "sd": _round(self.sd),
                "log_mean": _round(self.log_mean), "log_sd": _round(self.log_sd)}


def _round(value: float) -> float:
    return float(f"{value:.6g}")


def _sd(values: list[float], centre: float) -> float:
    if len(values) < 2:
        return 0.0
    return math.sqrt(math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1))


def distribution(values: list[float]) -> Distribution | None:
    """The Distribution of per-run values (>= 0); None for no values."""
    if not values:
        return None
    values = [float(v) for v in values]
    logs = [math.log(max(v, LOG_FLOOR)) for v in values]
    centre, log_centre = math.fsum(values) / len(values), math.fsum(logs) / len(logs)
    return Distribution(len(values), centre, _sd(values, centre), log_centre,
                        _sd(logs, log_centre))


def log_ratio_test(base: Distribution, current: Distribution) -> tuple[float, float]:
    """(t, one-sided p) of "current is larger than base" on the logs: Student's two-sample t
    with the pooled variance (n_base + n_current - 2 degrees of freedom). Under the null that
    nothing changed both samples come from one distribution, so the pooled variance is the
    right one, and at a PR's 5 runs it has ~40 degrees of freedom where Welch's would have ~4
    (docs/gate.md). Needs n >= 2 on one side at least and 3 in all."""
    df = base.n + current.n - 2
    if df < 1:
        raise ValueError("the test needs at least 3 values in all")
    pooled = ((base.n - 1) * base.log_sd ** 2 + (current.n - 1) * current.log_sd ** 2) / df
    diff = current.log_mean - base.log_mean
    scale = math.sqrt(pooled * (1 / base.n + 1 / current.n))
    if scale == 0:
        t = math.copysign(math.inf, diff) if diff else 0.0
    else:
        t = diff / scale
    return t, student_t_sf(t, df)


def student_t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with df degrees of freedom."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * regularized_beta(df / (df + t * t), df / 2, 0.5)
    return tail if t >= 0 else 1.0 - tail


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function (Lentz's continued fraction)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - regularized_beta(1 - x, b, a)
    return front * _beta_fraction(x, a, b) / a


def _beta_fraction(x: float, a: float, b: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return result
