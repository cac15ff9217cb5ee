"""jest and jest-junit at pinned versions, installed once into the test cache (npm) and reused,
for the test that checks ci-eval's jest ids against what a real jest prints
(tests/test_junit_real_jest.py). `.ci/run` installs them before the suite
(`python3 tests/real_jest.py install`, ~1 min), so no test reaches the network; a test finding
none skips, loudly.

    folder = real_jest.installed()     # the npm prefix (node_modules/ under it), or None
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cache_folder import CACHE, built_once, ready

PINS = ("jest@30.5.2", "jest-junit@16.0.0")
PREFIX = CACHE / "jest"
STAMP_TEXT = " ".join(PINS) + "\n"


def installed() -> Path | None:
    return ready(PREFIX, STAMP_TEXT)


def install() -> Path:
    def fill(partial: Path) -> None:
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix",
                        str(partial), *PINS], check=True, timeout=900)

    return built_once(PREFIX, STAMP_TEXT, fill)


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python3 tests/real_jest.py install")
    print(install())
