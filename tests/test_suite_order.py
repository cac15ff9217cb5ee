"""tests/suite_order.py: the long tests start first, one share of them per worker."""

from __future__ import annotations

from dataclasses import dataclass

from suite_order import LONG_TESTS, long_test_units, long_tests_first


@dataclass
class Item:
    nodeid: str


def ids(items) -> list[str]:
    return [item.nodeid for item in items]


ITEMS = [Item(n) for n in [
    "tests/a.py::test_1", "tests/a.py::test_2", "tests/b.py::test_x[1]", "tests/b.py::test_x[2]",
    "tests/b.py::test_y", "tests/c.py::test_1", "tests/d.py::test_1", "tests/e.py::test_1",
    "tests/f.py::test_1", "tests/g.py::test_1"]]
UNITS = [["tests/b.py::test_x"], ["tests/d.py::test_1"], ["tests/e.py", "tests/a.py"]]


def test_each_worker_s_share_starts_with_its_long_tests_and_the_rest_keep_their_order():
    ordered = ids(long_tests_first(ITEMS, UNITS, 2))
    # worksteal splits 10 tests 5 + 5: b's test_x (both parameters) and the a + e unit on one
    # worker, d on the other; a and e stay together, in pytest's order
    assert ordered == ["tests/b.py::test_x[1]", "tests/b.py::test_x[2]", "tests/a.py::test_1",
                       "tests/a.py::test_2", "tests/e.py::test_1",
                       "tests/d.py::test_1", "tests/b.py::test_y", "tests/c.py::test_1",
                       "tests/f.py::test_1", "tests/g.py::test_1"]
    assert sorted(ordered) == sorted(ids(ITEMS))


def test_one_worker_runs_the_long_tests_first_and_nothing_unlisted_moves():
    ordered = ids(long_tests_first(ITEMS, UNITS, 1))
    assert ordered[:3] == ["tests/b.py::test_x[1]", "tests/b.py::test_x[2]", "tests/d.py::test_1"]
    unlisted = [i for i in ids(ITEMS) if i not in ordered[:6]]
    assert ordered[6:] == unlisted
    assert ids(long_tests_first(ITEMS, [], 2)) == ids(ITEMS)


def test_the_list_parses_comments_and_names_files_that_exist(tmp_path):
    listed = tmp_path / "long.txt"
    listed.write_text("# header\n\ntests/a.py::test_1  # 120 s\ntests/b.py tests/c.py\n")
    assert long_test_units(listed) == [["tests/a.py::test_1"], ["tests/b.py", "tests/c.py"]]
    root = LONG_TESTS.parent.parent
    for unit in long_test_units():
        for entry in unit:
            assert (root / entry.split("::", 1)[0]).is_file(), f"long_tests.txt: {entry}"


def test_every_slow_entry_names_a_test_file_that_exists():
    from suite_order import SLOW_TESTS

    root = SLOW_TESTS.parents[1]
    for entry in (e for unit in long_test_units(SLOW_TESTS) for e in unit):
        assert (root / entry.split("::", 1)[0]).is_file(), entry


def test_the_fast_tier_leaves_out_the_slow_tests_and_a_plain_run_keeps_them(tmp_path):
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    tests = tmp_path / "tests"
    tests.mkdir()
    for helper in ("conftest.py", "harness_helpers.py", "suite_order.py"):  # what conftest loads
        shutil.copy(Path(__file__).with_name(helper), tests / helper)
    (tests / "slow_tests.txt").write_text("# slow\ntests/test_engine.py::test_b\n")
    (tests / "long_tests.txt").write_text("tests/test_long.py\n")
    (tests / "test_engine.py").write_text("def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    (tests / "test_long.py").write_text("def test_c():\n    pass\n")
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
           "tests"]
    fast = subprocess.run([*run, "-m", "not slow"], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert fast.returncode == 0 and "1 passed, 2 deselected" in fast.stdout, fast.stdout
    full = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert full.returncode == 0 and "3 passed" in full.stdout, full.stdout
