"""The test side of mutmut's stats pass (scripts/mutation.sh loads it with `-p`): what a test's
child Pythons ran counts as reached by that test.

mutmut records, per test, the mutated functions that ran in its own process
(see mutation_child_hits). For each test of the stats pass (MUTANT_UNDER_TEST=stats) this plugin
gives the test a folder of its own, named in CI_EVAL_MUTATION_HITS for every child the test
starts with the inherited environment (conftest's `cli` fixture keeps it); after the test's
teardown it adds the functions its children recorded there to mutmut's
tests_by_mangled_function_name (and their callers to function_dependencies, as mutmut's own
recorder does), before mutmut saves them. In every other pytest run mutmut makes (listing, the
clean run, each mutant) it does nothing.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from mutation_child_hits import HITS_ENV
from mutmut.configuration import config
from mutmut.state import state
from mutmut.utils.format_utils import strip_prefix


class ChildHits:
    """One hits folder at a time in HITS_ENV, from the first test's setup to the end: what runs
    between two tests counts for the next one, as mutmut counts its in-process hits."""

    def __init__(self) -> None:
        self.base: Path | None = None
        self.numbers = itertools.count(1)

    def next_folder(self) -> None:
        if self.base is None:
            self.base = Path(tempfile.mkdtemp(prefix="ci-eval-mutation-hits-"))
        folder = self.base / str(next(self.numbers))
        folder.mkdir()
        os.environ[HITS_ENV] = str(folder)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item) -> None:
        if os.environ.get("MUTANT_UNDER_TEST") == "stats" and HITS_ENV not in os.environ:
            self.next_folder()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item, nextitem):
        yield  # after the test's fixtures ended (and the children they started)
        folder = os.environ.get(HITS_ENV)
        if folder is None or self.base is None:
            return
        test = strip_prefix(item.nodeid, prefix="mutants/")
        for name, caller in read_hits(Path(folder)):
            state().tests_by_mangled_function_name[name].add(test)
            if caller is not None and config().track_dependencies:
                state().function_dependencies[name].add(caller)
        shutil.rmtree(folder, ignore_errors=True)
        self.next_folder()

    def pytest_unconfigure(self, config) -> None:
        if self.base is not None:
            os.environ.pop(HITS_ENV, None)
            shutil.rmtree(self.base, ignore_errors=True)


def read_hits(folder: Path) -> set[tuple[str, str | None]]:
    """The (function, caller) pairs in FOLDER/*.jsonl; a line cut short by a killed child is
    skipped (its writer appended whole lines, so only the last can be torn)."""
    hits: set[tuple[str, str | None]] = set()
    for path in folder.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                name, caller = json.loads(line)
            except ValueError:
                continue
            hits.add((name, caller))
    return hits


def pytest_configure(config) -> None:
    config.pluginmanager.register(ChildHits(), "ci-eval-mutation-child-hits")
