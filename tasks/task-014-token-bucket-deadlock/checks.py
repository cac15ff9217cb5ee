"""TokenBucket.try_acquire never blocks, refills with elapsed time, never over-issues tokens.

The probe runs in a subprocess with a hard timeout; each call runs in a daemon thread that must
finish within a second, so a deadlock is reported as such instead of hanging the checks.
"""

import subprocess
import sys

from ci_eval.checks import failed, main, passed

PROBE = r'''
import sys, threading
from ratelimit import TokenBucket

class FakeClock:
    def __init__(self):
        self.now = 0.0
    def __call__(self):
        return self.now

def call(fn, what):
    box = []
    t = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    t.start()
    t.join(1.0)
    if t.is_alive():
        print(f"{what} blocks (still running after 1 s): deadlock")
        sys.stdout.flush()
        import os; os._exit(1)
    if not box:
        print(f"{what} raised an exception"); sys.exit(1)
    return box[0]

def expect(value, want, what):
    if value is not want:
        print(f"{what}: returned {value!r}, expected {want!r}"); sys.exit(1)

clock = FakeClock()
bucket = TokenBucket(rate=2, capacity=3, clock=clock)
for i in range(3):
    expect(call(bucket.try_acquire, "try_acquire on a full bucket"), True, f"token {i + 1} of 3")
expect(call(bucket.try_acquire, "try_acquire on an empty bucket"), False, "4th token, no time passed")
expect(call(bucket.try_acquire, "try_acquire on an empty bucket"), False, "5th token, no time passed")
clock.now += 0.25   # half a token
expect(call(bucket.try_acquire, "try_acquire"), False, "after 0.25 s at 2 tokens/s")
clock.now += 0.25   # one token in total
expect(call(bucket.try_acquire, "try_acquire"), True, "after 0.5 s at 2 tokens/s")
expect(call(bucket.try_acquire, "try_acquire"), False, "right after using the refilled token")
clock.now += 100    # refill is capped at capacity
got = [call(bucket.try_acquire, "try_acquire") for _ in range(5)]
if got != [True, True, True, False, False]:
    print(f"after a long pause: {got}, expected capacity (3) tokens and then False"); sys.exit(1)
clock.now += 1
expect(call(lambda: bucket.try_acquire(2), "try_acquire(2)"), True, "2 tokens after 1 s")
expect(call(lambda: bucket.try_acquire(1), "try_acquire(1)"), False, "no token left")

# many threads, no time passing: exactly `capacity` successes, never more
shared = TokenBucket(rate=1, capacity=200, clock=FakeClock())
wins = []
def worker():
    n = 0
    for _ in range(100):
        if shared.try_acquire():
            n += 1
    wins.append(n)
sys.setswitchinterval(1e-6)
threads = [threading.Thread(target=worker, daemon=True) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join(5)
if any(t.is_alive() for t in threads):
    print("concurrent try_acquire calls deadlock"); import os; os._exit(1)
if sum(wins) != 200:
    print(f"8 threads took {sum(wins)} tokens from a bucket of 200 (no refill)"); sys.exit(1)
print("ok")
'''


def check_bucket():
    try:
        proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                              timeout=30, check=False)
    except subprocess.TimeoutExpired:
        return failed("the TokenBucket probe did not finish within 30 s")
    if proc.returncode != 0:
        return failed(f"TokenBucket: {(proc.stdout + proc.stderr).strip()[-400:]}")
    return passed("try_acquire never blocks, refills correctly, never over-issues")


main(check_bucket)
