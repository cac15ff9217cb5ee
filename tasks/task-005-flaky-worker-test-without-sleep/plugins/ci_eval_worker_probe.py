"""pytest plugin for task-005's checks (loaded with -p, mode from CI_EVAL_WORKER_PROBE).

slow:  every job takes 50 ms in the worker thread, and time.sleep() returns at once, so a test
       that waits by sleeping asserts before the worker is done; a synchronised test still passes.
lose:  the worker handles the previous job again instead of the current one (a, b, c are handled
       as a, a, b): the last job is lost, as many handler calls happen as jobs were submitted (so a
       test that waits for N calls does not hang), and a meaningful test must fail.
"""

import os
import time

_real_sleep = time.sleep


def pytest_configure(config):
    mode = os.environ.get("CI_EVAL_WORKER_PROBE", "")
    import worker as worker_module

    original_init = worker_module.Worker.__init__

    def probed_init(self, handler, *args, **kwargs):
        calls = []

        def probed(job):
            calls.append(job)
            if mode == "slow":
                _real_sleep(0.05)
            if mode == "lose":
                return handler(calls[-2] if len(calls) > 1 else job)
            return handler(job)

        original_init(self, probed, *args, **kwargs)

    worker_module.Worker.__init__ = probed_init
    if mode == "slow":
        time.sleep = lambda seconds: None
