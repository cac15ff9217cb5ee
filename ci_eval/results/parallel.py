"""Many results files read on every core: an ordered map over forked processes (load_runs).

Worth it only when there is much to read: forking and sending back the per-run rows cost a few
milliseconds, while 1,000 tasks x 100 runs are ~500 MB of JSON lines and seconds of per-line
Python. What comes back is what the plain map gives, in the same order, and an exception raised
for an item is raised when the caller reaches that item; so the refusal is the one a sequential
read gives (the first bad file in sorted order), and the caller's checks between files (one
agent across files) run in the same order.

Only with the fork start method and a single thread (forking a threaded process can copy a held
lock); otherwise, and below the size threshold, the map is the plain one.
"""

from __future__ import annotations

import multiprocessing
import os
import threading

MIN_BYTES = 16 * 1024 * 1024  # below this, reading costs less than a pool's start
MAX_PROCESSES = 8


def processes_worth(total_bytes: int, items: int, cores: int) -> int:
    """How many processes to read `items` files of `total_bytes` with: 1 means in this one."""
    if items < 2 or total_bytes < MIN_BYTES:
        return 1
    return max(1, min(MAX_PROCESSES, cores, items))


def usable_cores() -> int:
    """The cores this process may run on, or 1 when forking here is not safe or not possible."""
    if "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        return 1
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def ordered_map(function, items: list, processes: int):
    """function(item) for each item, in order; in `processes` forked processes when > 1.
    Leaving the loop early (an exception) stops the pool."""
    if processes <= 1:
        yield from map(function, items)
        return
    chunk = max(1, len(items) // (processes * 8))
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        yield from pool.imap(function, items, chunksize=chunk)
