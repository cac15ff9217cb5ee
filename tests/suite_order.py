"""The order the suite runs in: the long tests first, shared between the workers.

With `-n 2`, a long test that starts late is a tail one core runs alone. tests/long_tests.txt
lists the long ones, longest first. `--dist worksteal` (the README's command) gives each worker
an equal contiguous share of the collection and lets an idle worker take the end of another's
share, so each share here starts with its part of the long ones (dealt round robin, longest
first) and the rest keep pytest's order behind them. A listed file moves whole and stays on one
worker, as do the entries of one line: the module- and session-scoped fixtures they share are
built once. Without xdist (one worker) the long tests simply run first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

LONG_TESTS = Path(__file__).with_name("long_tests.txt")
SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")


def long_test_units(path: Path = LONG_TESTS) -> list[list[str]]:
    """The lines of long_tests.txt, each a list of entries that run on the same worker."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return [line.split("#", 1)[0].split() for line in lines if line.split("#", 1)[0].strip()]


def unit_of(nodeid: str, units: list[list[str]]) -> int | None:
    """The index of the first unit with an entry naming this test (file, test or test id)."""
    for rank, entries in enumerate(units):
        if any(nodeid == e or nodeid.startswith((e + "::", e + "[")) for e in entries):
            return rank
    return None


def long_tests_first(items: list, units: list[list[str]], workers: int) -> list:
    """items reordered: `workers` equal contiguous shares, each starting with its long tests."""
    long: dict[int, list] = {}
    rest = []
    for item in items:
        rank = unit_of(item.nodeid, units)
        (rest if rank is None else long.setdefault(rank, [])).append(item)
    shares: list[list] = [[] for _ in range(workers)]
    for number, rank in enumerate(sorted(long)):
        shares[number % workers].extend(long[rank])
    ordered: list = []
    for index, share in enumerate(shares):
        size = len(items) * (index + 1) // workers - len(ordered)  # worksteal's equal split
        fill = max(0, size - len(share))
        ordered += share + rest[:fill]
        rest = rest[fill:]
    return ordered + rest


def mark_slow(items: list, units: list[list[str]]) -> None:
    """Mark `slow` every test an entry of `units` names (the fast tier, -m "not slow", leaves
    them out; a run without -m runs them all)."""
    for item in items:
        if unit_of(item.nodeid, units) is not None:
            item.add_marker(pytest.mark.slow)
