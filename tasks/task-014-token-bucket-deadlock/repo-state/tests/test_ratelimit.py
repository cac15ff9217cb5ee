from ratelimit import TokenBucket


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_starts_full():
    bucket = TokenBucket(rate=1, capacity=3, clock=FakeClock())
    assert all(bucket.try_acquire() for _ in range(3))
