"""A folder of the tests' cache (~/.cache/ci-eval-tests) built once and reused: what .ci/run
prepares from the registries (jest, the Harbor verifier's tools, the SWE-bench wheels) so no
test reaches the network.

    folder = built_once(CACHE / "jest", "jest@30.5.2 ...", fill)   # fill(partial) builds it
    ready(folder, stamp_text)                                        # folder, or None

fill builds into a per-process partial folder under a lock (two xdist workers may ask at once);
the partial gets a stamp naming what it holds and is renamed into place, so a folder is either
whole or absent, and one whose stamp names other pins is built again."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

CACHE = Path(os.environ.get("CI_EVAL_TESTS_CACHE", Path.home() / ".cache" / "ci-eval-tests"))
STAMP = ".prepared"


def ready(folder: Path, stamp_text: str) -> Path | None:
    stamp = folder / STAMP
    return folder if stamp.is_file() and stamp.read_text() == stamp_text else None


def built_once(folder: Path, stamp_text: str, fill: Callable[[Path], None]) -> Path:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready(folder, stamp_text):
            return folder
        partial = folder.parent / f".{folder.name}.{os.getpid()}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        try:
            fill(partial)
            (partial / STAMP).write_text(stamp_text)
            shutil.rmtree(folder, ignore_errors=True)
            partial.rename(folder)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return folder
