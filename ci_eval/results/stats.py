"""Pure statistics over run outcomes: pass@k, pass^k, intervals, percentiles."""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

EXACT_UP_TO = 1000  # runs: binomials as exact integers up to here, through lgamma beyond


def _comb_ratio(a: int, b: int, k: int) -> float:
    """C(a, k) / C(b, k) for 0 <= a <= b, 0 < k <= b: exact for small counts; beyond, in
    logs, so that a history claiming 10**8 runs takes no time and overflows nothing."""
    if k > a:
        return 0.0
    if b <= EXACT_UP_TO:
        return math.comb(a, k) / math.comb(b, k)
    log = (math.lgamma(a + 1) - math.lgamma(a - k + 1)
           - math.lgamma(b + 1) + math.lgamma(b - k + 1))
    return math.exp(log)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k), for k <= n."""
    if not 0 < k <= n:
        raise ValueError(f"pass@k needs 0 < k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - _comb_ratio(n - c, n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (all k of k sampled runs pass): C(c, k) / C(n, k), for k <= n."""
    if not 0 < k <= n:
        raise ValueError(f"pass^k needs 0 < k <= n, got k={k}, n={n}")
    return _comb_ratio(c, n, k)


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


EXACT_BINOMIAL_LIMIT = 5000  # trials up to which binomial_tail sums the exact terms


def binomial_tail(successes: int, trials: int, p: float, *, upper: bool = False) -> float:
    """P(X <= successes), or P(X >= successes) when upper, for X ~ Binomial(trials, p): the
    one-sided binomial test of `successes` against the rate p. Exact (the terms summed in log
    space) up to EXACT_BINOMIAL_LIMIT trials, beyond that the normal approximation with the
    continuity correction."""
    if not 0 <= successes <= trials or not 0.0 <= p <= 1.0:
        raise ValueError(f"binomial tail needs 0 <= {successes} <= {trials} and 0 <= p <= 1")
    if upper:
        return binomial_tail(trials - successes, trials, 1.0 - p)
    if successes == trials or p == 0.0:
        return 1.0
    if p == 1.0:
        return 0.0
    if trials > EXACT_BINOMIAL_LIMIT:
        sd = math.sqrt(trials * p * (1.0 - p))
        return 0.5 * math.erfc(-(successes + 0.5 - trials * p) / (sd * math.sqrt(2)))
    log_p, log_q, whole = math.log(p), math.log1p(-p), math.lgamma(trials + 1)
    logs = [whole - math.lgamma(i + 1) - math.lgamma(trials - i + 1) + i * log_p
            + (trials - i) * log_q for i in range(successes + 1)]
    top = max(logs)
    return min(1.0, math.exp(top) * math.fsum(math.exp(v - top) for v in logs))


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


# --- per-run distributions of tokens, cost and wall time -------------------------------------

# The smallest value a log is taken of: a run that reports 0 tokens or $0 is counted at the
# floor (log(0) is -inf), small enough never to matter next to a real run's value.
LOG_FLOOR = 1e-9
MAX_VALUES = 200  # values a Distribution keeps: all of them up to this, else evenly spaced ranks
EXACT_RANK_LIMIT = 1200  # n_current * n_base up to which the rank test's tail is exact


@dataclass(frozen=True)
class Distribution:
    """A set of per-run values: n, mean and standard deviation, the same of their natural logs
    (costs and times are skewed: the geometric mean is the typical run), and the sorted values
    themselves (at most MAX_VALUES), which the rank test compares."""

    n: int
    mean: float
    sd: float
    log_mean: float
    log_sd: float
    values: tuple[float, ...] = ()

    def to_json(self) -> dict:
        return {"n": self.n, "mean": _round(self.mean), "sd": _round(self.sd),
                "log_mean": _round(self.log_mean), "log_sd": _round(self.log_sd),
                "values": [_round(v) for v in self.values]}


def _round(value: float) -> float:
    return float(f"{value:.6g}")


def _sd(values: list[float], centre: float) -> float:
    if len(values) < 2:
        return 0.0
    return math.sqrt(math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1))


def _log(value: float) -> float:
    return math.log(max(value, LOG_FLOOR))


def distribution(values: Sequence[float]) -> Distribution | None:
    """The Distribution of per-run values (>= 0); None for no values."""
    if not values:
        return None
    ordered = sorted(float(v) for v in values)
    logs = [_log(v) for v in ordered]
    centre, log_centre = math.fsum(ordered) / len(ordered), math.fsum(logs) / len(logs)
    kept = ordered
    if len(ordered) > MAX_VALUES:  # evenly spaced order statistics, both ends included
        step = (len(ordered) - 1) / (MAX_VALUES - 1)
        kept = [ordered[round(i * step)] for i in range(MAX_VALUES)]
    return Distribution(len(ordered), centre, _sd(ordered, centre), log_centre,
                        _sd(logs, log_centre), tuple(kept))


def log_shift(base: Distribution, current: Distribution) -> float:
    """The Hodges-Lehmann ratio: exp of the median of log(current) - log(base) over all pairs
    (the typical run now against the typical run then; one outlier run barely moves it)."""
    diffs = sorted(_log(c) - _log(b) for c in current.values for b in base.values)
    middle = len(diffs) // 2
    shift = diffs[middle] if len(diffs) % 2 else (diffs[middle - 1] + diffs[middle]) / 2
    return math.exp(shift)


def rank_test_greater(base: Distribution, current: Distribution) -> tuple[float, float]:
    """(U, one-sided p) of the Mann-Whitney test of "current runs are larger than base runs":
    U counts the (current, base) pairs in which the current run is larger, ties counting 1/2.
    Under "nothing changed" every ordering of the runs is equally likely, whatever their
    distribution, so p is exact (up to MAX_VALUES kept and EXACT_RANK_LIMIT; beyond, the normal
    approximation with the tie correction). Ties are counted at the smaller U (conservative)."""
    b, c = base.values, current.values
    pairs = len(b) * len(c)
    u = 0.0
    for value in c:
        below = bisect.bisect_left(b, value)
        u += below + 0.5 * (bisect.bisect_right(b, value) - below)
    if pairs <= EXACT_RANK_LIMIT:
        return u, _u_tail(len(c), len(b))[min(math.floor(u), pairs)]
    pooled = sorted([*b, *c])
    ties = sum(t ** 3 - t for t in _run_lengths(pooled))
    n, m, total = len(c), len(b), len(b) + len(c)
    variance = n * m / 12 * ((total + 1) - ties / (total * (total - 1)))
    if variance <= 0:
        return u, 0.5
    z = (u - 0.5 - n * m / 2) / math.sqrt(variance)
    return u, 0.5 * math.erfc(z / math.sqrt(2))


def _run_lengths(ordered: list[float]) -> list[int]:
    lengths, count = [], 1
    for left, right in zip(ordered, ordered[1:]):
        if left == right:
            count += 1
        else:
            lengths.append(count)
            count = 1
    return lengths + [count]


@functools.lru_cache(maxsize=64)
def _u_tail(n: int, m: int) -> tuple[float, ...]:
    """P(U >= u) for u = 0..n*m: the exact null distribution of the Mann-Whitney U of n values
    against m. counts(j, i)[u] orderings of j current and i base values have U = u: the
    largest of them is a current value, beating all i base ones (counts(j-1, i) shifted by i),
    or a base value, beating none (counts(j, i-1))."""
    previous = [[1] for _ in range(n + 1)]  # i = 0 base values: U is 0
    for i in range(1, m + 1):
        current = [[1]]  # j = 0 current values: U is 0
        for j in range(1, n + 1):
            shifted = [0] * i + current[j - 1]
            other = previous[j]
            size = max(len(shifted), len(other))
            current.append([(shifted[u] if u < len(shifted) else 0)
                            + (other[u] if u < len(other) else 0) for u in range(size)])
        previous = current
    counts = previous[n] + [0] * (n * m + 1 - len(previous[n]))
    total = math.comb(n + m, n)
    tail, running = [], 0
    for count in reversed(counts):
        running += count
        tail.append(running / total)
    return tuple(reversed(tail))
