"""pytest plugin for task-005's checks (loaded with -p): one pytest run probes the agent's test
against three workers.

Every collected test function `test_x` is replaced by three items, each a run of the same test
with a different worker (the mode is set for the item's setup, call and teardown, so a worker
made in a fixture is probed too):

test_x@slow-worker: every job takes 50 ms in the worker thread and time.sleep() returns at once,
       so a test that waits by sleeping asserts before the worker is done; a synchronised test
       still passes. The test's clocks (time.monotonic, time.time, time.perf_counter) jump a
       minute at each reading, so a test that polls until a deadline gives up first, as it would
       on a machine slower than its deadline (threading and queue keep their own clock: joins
       and queue waits are unaffected).
test_x@catches-lost-jobs: the worker handles the previous job again instead of the current one
       (a, b, c are handled as a, a, b): the last job is lost, as many handler calls happen as jobs
       were submitted (so a test that waits for N calls does not hang). The item passes only if
       the test FAILS against this worker.
test_x@catches-lost-jobs-when-slow: both at once: a slow worker (as slow-worker, clocks and
       sleep included) that loses the last job. The item passes only if the test FAILS: a test
       that asserts before the worker is done and accepts what it finds (a prefix of the expected
       results) passes the other three.
test_x@catches-reordered-jobs: the first two submitted jobs are queued in swapped order (a, b, c
       are handled as b, a, c): every job is handled exactly once, only the order is wrong, so a
       test that compares the results as a set or sorted does not catch it. The item passes only
       if the test FAILS. A first job is held until a second one is submitted or close() is
       called (which queues it before stopping).

A skip or xfail of the agent's test is kept (the item is then not PASSED).
"""

import functools
import time

import pytest

_real_sleep = time.sleep
MODES = {
    "slow-worker": "slow",
    "catches-lost-jobs": "lose",
    "catches-reordered-jobs": "reorder",
    "catches-lost-jobs-when-slow": "slow-lose",
}
SLOW = ("slow", "slow-lose")
CLOCKS = ("monotonic", "time", "perf_counter")
_real_clocks = {name: getattr(time, name) for name in CLOCKS}
_state = {"mode": ""}


def pytest_configure(config):
    import worker as worker_module

    original_init = worker_module.Worker.__init__

    def probed_init(self, handler, *args, **kwargs):
        mode = _state["mode"]
        calls = []

        def probed(job):
            calls.append(job)
            if mode in SLOW:
                _real_sleep(0.05)
            if mode in ("lose", "slow-lose"):
                return handler(calls[-2] if len(calls) > 1 else job)
            return handler(job)

        original_init(self, probed, *args, **kwargs)
        if mode == "reorder":
            reorder_first_two(self)

    worker_module.Worker.__init__ = probed_init


@pytest.hookimpl(hookwrapper=True)
def pytest_pycollect_makeitem(collector, name, obj):
    outcome = yield
    items = outcome.get_result()
    if not items:
        return
    items = list(items) if isinstance(items, (list, tuple)) else [items]
    probed = []
    for item in items:
        if not isinstance(item, pytest.Function):
            probed.append(item)
            continue
        for suffix, mode in MODES.items():
            call = item.obj if mode == "slow" else expect_failure(item.obj, suffix)
            probed.append(pytest.Function.from_parent(
                collector, name=f"{item.name}@{suffix}", callspec=getattr(item, "callspec", None),
                callobj=call,  # no originalname: the node id is built from the new name
            ))
    outcome.force_result(probed)


def expect_failure(test, suffix):
    @functools.wraps(test)
    def probe(*args, **kwargs):
        try:
            test(*args, **kwargs)
        except (pytest.skip.Exception, pytest.xfail.Exception):
            raise
        except (Exception, pytest.fail.Exception):
            return  # the test caught the broken worker
        what = {"catches-lost-jobs": "loses a job (a, b, c handled as a, a, b)",
                "catches-lost-jobs-when-slow": "is slow and loses a job (a, b, c handled as a, "
                                               "a, b, 50 ms each)"}.get(
            suffix, "reorders jobs (a, b, c handled as b, a, c)")
        pytest.fail(f"the test passes although the worker {what}", pytrace=False)

    return probe


def _mode_of(item) -> str:
    return MODES.get(item.name.rsplit("@", 1)[-1], "") if "@" in item.name else ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _state["mode"] = _mode_of(item)
    if _state["mode"] in SLOW:
        time.sleep = lambda seconds: None
        for name in CLOCKS:
            setattr(time, name, _jumping(_real_clocks[name]))
    try:
        yield
    finally:
        _state["mode"] = ""
        time.sleep = _real_sleep
        for name in CLOCKS:
            setattr(time, name, _real_clocks[name])


def _jumping(clock):
    """A clock that is a minute further on at each reading."""
    readings = [0]

    def read():
        readings[0] += 1
        return clock() + 60.0 * readings[0]

    return read


def reorder_first_two(worker):
    submit, close = worker.submit, worker.close
    held = []
    submitted = [0]

    def reordering_submit(job):
        submitted[0] += 1
        if submitted[0] == 1:
            held.append(job)
            return None
        result = submit(job)
        while held:
            submit(held.pop())
        return result

    def flushing_close(*args, **kwargs):
        while held:
            submit(held.pop())
        return close(*args, **kwargs)

    worker.submit = reordering_submit
    worker.close = flushing_close
