"""jest and jest-junit at pinned versions, installed once into the test cache (npm) and reused,
for the test that checks ci-eval's jest ids against what a real jest prints
(tests/test_junit_real_jest.py). `.ci/run` installs them before the suite
(`python3 tests/real_jest.py install`, ~1 min), so no test reaches the network; a test finding
none skips, loudly.

    folder = real_jest.installed()     # the npm prefix (node_modules/ under it), or None
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

CACHE = Path(os.environ.get("CI_EVAL_TESTS_CACHE", Path.home() / ".cache" / "ci-eval-tests"))
PINS = ("jest@30.5.2", "jest-junit@16.0.0")
PREFIX = CACHE / "jest"
STAMP = ".ci-eval-pins"


def installed() -> Path | None:
    stamp = PREFIX / STAMP
    if stamp.is_file() and stamp.read_text().split() == list(PINS):
        return PREFIX
    return None


def install() -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".jest.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed():
            return PREFIX
        partial = CACHE / f".jest.{os.getpid()}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        try:
            subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix",
                            str(partial), *PINS], check=True, timeout=900)
            (partial / STAMP).write_text(" ".join(PINS) + "\n")
            shutil.rmtree(PREFIX, ignore_errors=True)
            partial.rename(PREFIX)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return PREFIX


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python3 tests/real_jest.py install")
    print(install())
