"""results/parallel.py and load_runs on several processes: the same runs, the same refusal (the
first bad file in sorted order), the same agent check between files, as the sequential read."""

from __future__ import annotations

import json
import multiprocessing
import pickle
import subprocess
import sys

import pytest
from test_stream import record, write

from ci_eval.errors import UserError
from ci_eval.results import parallel, stream
from ci_eval.results.summary import summarize_results


def _folder(tmp_path, tasks: int = 12):
    folder = tmp_path / "results"
    for number in range(1, tasks + 1):
        task = f"task-{number:03d}-x"
        write(folder, *(record(run, task=task, status="fail" if run % 3 == 0 else "pass",
                               reason="FAIL: x" if run % 3 == 0 else "")
                        for run in range(1, 6)), name=task)
    return folder


def _refusal(folder, processes: int) -> str:
    with pytest.raises(UserError) as caught:
        stream.load_runs(folder, processes=processes)
    return str(caught.value)


def test_rows_read_on_three_processes_summarize_as_those_read_here(tmp_path):
    folder = _folder(tmp_path)
    here = stream.load_runs(folder, processes=1)
    forked = stream.load_runs(folder, processes=3)
    assert list(forked) == list(here) == sorted(here)
    assert summarize_results(forked) == summarize_results(here)
    assert forked["task-003-x"].rows == here["task-003-x"].rows


def test_the_first_bad_file_in_sorted_order_is_the_one_named(tmp_path):
    folder = _folder(tmp_path)
    write(folder, record(1, task="task-005-x", cost_usd=-1), name="task-005-x")
    write(folder, "not json", json.dumps(record(2, task="task-009-x")), name="task-009-x")
    message = _refusal(folder, 1)
    assert "task-005-x.jsonl:1" in message and "cost_usd" in message
    assert _refusal(folder, 2) == _refusal(folder, 4) == message


def test_the_agent_check_between_files_comes_before_a_later_bad_file(tmp_path):
    folder = _folder(tmp_path)
    write(folder, record(1, task="task-004-x", agent="noop"), name="task-004-x")
    write(folder, "{", name="task-010-x")
    message = _refusal(folder, 1)
    assert "results mix agents" in message and "task-004-x.jsonl:1" in message
    assert _refusal(folder, 3) == message
    assert multiprocessing.active_children() == []  # the refusal stopped the readers


def test_a_user_error_survives_pickling_with_its_path_and_field():
    error = UserError("expected a number", path="results/t.jsonl:3", field="cost_usd")
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.path, copy.field, copy.message) == (
        str(error), error.path, error.field, error.message)


@pytest.mark.parametrize("total, items, cores, expected", [
    (parallel.MIN_BYTES - 1, 1000, 8, 1),   # too little to read
    (parallel.MIN_BYTES, 1, 8, 1),          # one file: nothing to share out
    (parallel.MIN_BYTES, 1000, 1, 1),       # one core
    (parallel.MIN_BYTES, 1000, 2, 2),
    (parallel.MIN_BYTES, 3, 8, 3),          # no more processes than files
    (10 * parallel.MIN_BYTES, 1000, 64, parallel.MAX_PROCESSES),
])
def test_processes_worth_reading_with(total, items, cores, expected):
    assert parallel.processes_worth(total, items, cores) == expected


def test_ordered_map_keeps_order_and_raises_at_the_item():
    assert list(parallel.ordered_map(abs, [-3, 2, -1, 0] * 10, 2)) == [3, 2, 1, 0] * 10
    seen = []
    with pytest.raises(TypeError):
        for value in parallel.ordered_map(abs, [-1, -2, "x", -4], 2):
            seen.append(value)
    assert seen == [1, 2]


def test_usable_cores_counts_the_affinity_unless_a_thread_runs():
    """In a fresh interpreter (one thread): the cores it may run on; with a second thread
    running, 1 (forking a threaded process can copy a held lock)."""
    program = ("import os, threading; from ci_eval.results import parallel\n"
               "alone = parallel.usable_cores()\n"
               "stop = threading.Event(); t = threading.Thread(target=stop.wait); t.start()\n"
               "print(alone, parallel.usable_cores(), len(os.sched_getaffinity(0))); stop.set()\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    alone, threaded, cores = map(int, out)
    assert (alone, threaded) == (cores, 1)
