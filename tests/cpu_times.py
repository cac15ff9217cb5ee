"""A pytest plugin: CPU seconds per test and wall seconds, one JSON line per test in
$CPU_TIMES_OUT.<worker>.jsonl (default /tmp/cpu-times). On a loaded machine wall time says little;
CPU time compares tests with each other and a change before and after. Load it with
`PYTHONPATH=tests python3 -m pytest -n 2 --dist worksteal -p cpu_times`, then
`python3 tests/cpu_times.py` prints the table per file and the longest tests (tests/long_tests.txt).

CPU is counted through a cgroup v2 of each worker's own (made under the cgroup2 mount, needs root):
every process the test starts is counted wherever it forks, the sandboxed checks that the harness
does not wait for included ("source": "cgroup"). Without one it falls back to RUSAGE_SELF +
RUSAGE_CHILDREN ("source": "rusage"), which counts only children that were waited for: a
sandbox's double-forked descendants are lost (a test of the bundled tasks read 5.5 CPU s there
against 90 s through the cgroup). Docker containers run in dockerd's cgroups: neither counts them.
"""

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


def _cgroup2_mount() -> Path | None:
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    return next((Path(line.split()[1]) for line in mounts if line.split()[2:3] == ["cgroup2"]),
                None)


class CpuClock:
    """CPU seconds of this process and everything it starts: a cgroup of its own, or rusage."""

    def __init__(self, name: str):
        self.group: Path | None = None
        self.home: Path | None = None
        mount = _cgroup2_mount()
        if mount is None:
            return
        try:
            here = Path("/proc/self/cgroup").read_text().splitlines()
            current = next(line.split("::", 1)[1] for line in here if line.startswith("0::"))
            group = mount / f"ci-eval-cpu-times-{name}-{os.getpid()}"
            group.mkdir(exist_ok=True)
            (group / "cgroup.procs").write_text(str(os.getpid()))
        except (OSError, StopIteration):
            return
        self.group, self.home = group, mount / current.lstrip("/")

    @property
    def source(self) -> str:
        return "cgroup" if self.group else "rusage"

    def seconds(self) -> float:
        if self.group:
            stat = (self.group / "cpu.stat").read_text().split()
            return int(stat[stat.index("usage_usec") + 1]) / 1e6
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    def close(self) -> None:
        """Back to the cgroup it came from; the group goes once no process is left in it."""
        if self.group:
            try:
                (self.home / "cgroup.procs").write_text(str(os.getpid()))
                self.group.rmdir()
            except OSError:
                pass


_clock: CpuClock | None = None


def pytest_configure(config):
    global _clock
    _clock = CpuClock(os.environ.get("PYTEST_XDIST_WORKER", "main"))


def pytest_unconfigure(config):
    if _clock:
        _clock.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, started = _clock.seconds(), time.monotonic()
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{OUT}.{worker}.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": item.nodeid, "cpu": _clock.seconds() - cpu,
                                 "source": _clock.source,
                                 "wall": time.monotonic() - started}) + "\n")


def _cpu(row: dict) -> float:
    return row["cpu"] if "cpu" in row else row["self"] + row["children"]  # older files: rusage


def report(prefix: str, top: int = 25) -> None:
    rows = [json.loads(line) for name in glob.glob(prefix + ".*.jsonl")
            for line in Path(name).read_text(encoding="utf-8").splitlines()]
    files = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for row in rows:
        totals = files[row["id"].split("::")[0]]
        totals[0] += 1
        totals[1] += _cpu(row)
        totals[2] += row["wall"]
    cpu = sum(_cpu(row) for row in rows)
    sources = sorted({row.get("source", "rusage") for row in rows})
    print(f"{len(rows)} tests, {cpu:.0f} CPU s ({'/'.join(sources)}), "
          f"{sum(r['wall'] for r in rows):.0f} wall s summed")
    print("| file | tests | CPU s | wall s |\n|---|---|---|---|")
    for name, (count, seconds, wall) in sorted(files.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {count} | {seconds:.1f} | {wall:.0f} |")
    print("\nlongest tests (CPU s, wall s):")
    for row in sorted(rows, key=lambda r: -_cpu(r))[:top]:
        print(f"{_cpu(row):8.1f} {row['wall']:8.1f}  {row['id']}")


if __name__ == "__main__":
    report(sys.argv[1] if len(sys.argv) > 1 else OUT)
