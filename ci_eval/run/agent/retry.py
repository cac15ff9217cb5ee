"""When to try an infrastructure error again (pure): exponential backoff, bounded and jittered,
so runs that hit a rate limit together do not come back together."""

from __future__ import annotations

import random

BACKOFF_BASE_SECONDS = 2.0
BACKOFF_CAP_SECONDS = 60.0
RETRYABLE_INFRA = ("rate_limit", "overloaded", "network")  # a bad key or setup will not heal


def backoff_delay(failed_attempt: int, rng: random.Random, *, base: float = BACKOFF_BASE_SECONDS,
                  cap: float = BACKOFF_CAP_SECONDS) -> float:
    """Seconds to wait after attempt `failed_attempt` (1, 2, ...) failed: base * 2^(n-1), at
    most cap, times a jitter from 0.5 to 1.5."""
    step = min(cap, base * 2 ** (failed_attempt - 1))
    return step * rng.uniform(0.5, 1.5)
