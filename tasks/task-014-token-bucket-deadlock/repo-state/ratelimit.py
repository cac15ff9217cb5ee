"""A thread-safe token bucket rate limiter."""

import threading
import time


class TokenBucket:
    """`rate` tokens per second, at most `capacity` stored. `clock` returns seconds (monotonic)."""

    def __init__(self, rate: float, capacity: float, clock=time.monotonic) -> None:
        self.rate = rate
        self.capacity = capacity
        self._clock = clock
        self._tokens = capacity
        self._last = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        with self._lock:
            now = self._clock()
            self._tokens = min(self.capacity, self._tokens + (now - self._last) * self.rate)
            self._last = now

    def try_acquire(self, tokens: float = 1) -> bool:
        with self._lock:
            if self._tokens < tokens:
                self._refill()
            if self._tokens >= tokens:
                self._tokens -= tokens
                return True
            return False
