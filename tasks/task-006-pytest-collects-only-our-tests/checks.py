"""Plain `python -m pytest --strict-markers` runs exactly the 5 tests in tests/ and passes."""

import os
import subprocess
import sys
from pathlib import Path

from ci_eval.checks import (
    failed,
    file_equals,
    main,
    parse_pytest_outcomes,
    passed,
    restore_pristine,
    task_dir,
)

os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
EXPECTED = {
    f"tests/test_inventory.py::{name}"
    for name in (
        "test_add_and_count",
        "test_remove_too_many",
        "test_unknown_sku_is_zero",
        "test_many_skus",
        "test_round_trip_through_many_operations",
    )
}
KEEP = ["third_party/tinyjson/__init__.py", "third_party/tinyjson/tests/test_speedups.py",
        "legacy/test_inventory.py"]


def kept_folders():
    for rel in KEEP:
        result = file_equals(rel, task_dir() / "repo-state" / rel)
        if not result.ok:
            return failed(f"third_party/ and legacy/ must stay as they are: {result.reason}")
    return passed("third_party/ and legacy/ untouched")


def plain_pytest_runs_our_suite():
    restore_pristine(["tests/test_inventory.py"])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "--strict-markers"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    outcomes = parse_pytest_outcomes(proc.stdout)
    tail = (proc.stdout + proc.stderr).strip()[-400:]
    if proc.returncode != 0:
        return failed(f"`python -m pytest --strict-markers` exited {proc.returncode}: {tail}")
    ran = set(outcomes)
    if ran != EXPECTED:
        missing, extra = sorted(EXPECTED - ran), sorted(ran - EXPECTED)
        return failed(f"plain pytest should run exactly the 5 tests in tests/; missing {missing}, "
                      f"unexpected {extra}")
    not_passed = {k: v for k, v in outcomes.items() if v != "PASSED"}
    if not_passed:
        return failed(f"tests did not pass: {not_passed}")
    return passed("plain pytest runs the 5 tests in tests/ with markers registered")


def ci_command_selects_fast_tests():
    if not Path("tests/test_inventory.py").exists():
        return failed("tests/test_inventory.py is missing")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "-m", "not slow",
         "--strict-markers"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    ran = set(parse_pytest_outcomes(proc.stdout))
    fast = {t for t in EXPECTED if not t.endswith(("test_many_skus", "many_operations"))}
    if proc.returncode != 0 or ran != fast:
        return failed(f"CI command `-m 'not slow' --strict-markers` exited {proc.returncode} and ran "
                      f"{sorted(ran)}; expected the 3 fast tests: "
                      f"{(proc.stdout + proc.stderr).strip()[-300:]}")
    return passed("CI command runs the 3 fast tests")


main(kept_folders, plain_pytest_runs_our_suite, ci_command_selects_fast_tests)
