"""Pure statistics over run outcomes: pass@k, pass^k, intervals, percentiles."""

from __future__ import annotations

import math
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
