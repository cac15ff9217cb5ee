"""A pytest plugin: CPU seconds per test, its own and its waited-for children's (the CLI runs as
a subprocess, checks in sandboxes below it), and wall seconds, one JSON line per test in
$CPU_TIMES_OUT.<worker>.jsonl (default /tmp/cpu-times). On a loaded machine wall time says little;
CPU time compares tests with each other and a change before and after. Load it with
`PYTHONPATH=tests python3 -m pytest -n 2 --dist worksteal -p cpu_times`, then
`python3 tests/cpu_times.py` prints the table per file and the longest tests (tests/long_tests.txt)."""

from __future__ import annotations

import collections
import glob
import json
import os
import resource
import sys
import time
from pathlib import Path

import pytest

OUT = os.environ.get("CPU_TIMES_OUT", "/tmp/cpu-times")


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    own, children, started = *_cpu(), time.monotonic()
    yield
    own_after, children_after = _cpu()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{OUT}.{worker}.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": item.nodeid, "self": own_after - own,
                                 "children": children_after - children,
                                 "wall": time.monotonic() - started}) + "\n")


def report(prefix: str, top: int = 25) -> None:
    rows = [json.loads(line) for name in glob.glob(prefix + ".*.jsonl")
            for line in Path(name).read_text(encoding="utf-8").splitlines()]
    files = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for row in rows:
        totals = files[row["id"].split("::")[0]]
        totals[0] += 1
        totals[1] += row["self"] + row["children"]
        totals[2] += row["wall"]
    cpu = sum(row["self"] + row["children"] for row in rows)
    print(f"{len(rows)} tests, {cpu:.0f} CPU s, {sum(r['wall'] for r in rows):.0f} wall s summed")
    print("| file | tests | CPU s | wall s |\n|---|---|---|---|")
    for name, (count, seconds, wall) in sorted(files.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {count} | {seconds:.1f} | {wall:.0f} |")
    print("\nlongest tests (CPU s, wall s):")
    for row in sorted(rows, key=lambda r: -(r["self"] + r["children"]))[:top]:
        print(f"{row['self'] + row['children']:8.1f} {row['wall']:8.1f}  {row['id']}")


if __name__ == "__main__":
    report(sys.argv[1] if len(sys.argv) > 1 else OUT)
