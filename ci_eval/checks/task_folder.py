"""The folders the harness gives a checks.py: the pristine task folder (the files it puts back,
the hidden tests it adds) and where test reports go. The tests it declares: declared.py."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ci_eval.run.checks.restore import add_file, restore

REPORT_DIR_ENV = "CI_EVAL_REPORT_DIR"  # set by the harness: a folder outside the workspace

_private_report_dir: list[Path] = []


def task_dir() -> Path:
    """The pristine task folder (set by the harness; falls back to the caller's folder)."""
    if os.environ.get("CI_EVAL_TASK_DIR"):
        return Path(os.environ["CI_EVAL_TASK_DIR"])
    return Path(sys.argv[0]).resolve().parent


def restore_pristine(paths: Iterable[str]) -> None:
    """Put files back as repo-state/ had them, so an agent cannot weaken tests or fixtures.
    A path that repo-state/ does not have is removed (e.g. a conftest.py the agent added), and
    so is what Python would load instead of a restored NAME.py: its cached bytecode, a package
    NAME/ or an extension module NAME.*.so that repo-state/ does not have (run/checks/restore.py)."""
    paths = list(paths)
    if paths and not (task_dir() / "repo-state").is_dir():
        # a task pinned to an upstream commit: "not in repo-state/" would remove every path
        raise RuntimeError("restore: this task has no repo-state/ (pinned to an upstream "
                           "commit?): keep the files in the task folder and use restore_from")
    for rel in paths:
        restore(rel, task_dir() / "repo-state")


def restore_from(folder: str, paths: Iterable[str]) -> None:
    """Put files back as the task folder's `folder` has them (restore_pristine's rules: a path
    it does not have is removed): a pinned-commit task's tests (e.g. the files a SWE-bench
    test_patch makes, which `ci-eval import swe-bench` keeps in test-files/)."""
    for rel in paths:
        restore(rel, task_dir() / folder)


def add_hidden_tests(name: str, dest: str = "tests") -> str:
    """Copy the task's hidden_tests/<name> (never shown to the agent) into the workspace's
    `dest` folder; returns its workspace path, the prefix of its test ids."""
    target = Path(dest) / name
    add_file(task_dir() / "hidden_tests" / name, target)
    return target.as_posix()


def report_dir() -> Path:
    """Where pytest reports go: the harness's folder outside the workspace, else (checks.py run
    by hand) a private temp folder."""
    if os.environ.get(REPORT_DIR_ENV):
        return Path(os.environ[REPORT_DIR_ENV])
    if not _private_report_dir:
        _private_report_dir.append(Path(tempfile.mkdtemp(prefix="ci-eval-report-")))
        # removed at exit: every ci-eval-* folder left in the temp folder is one more folder
        # each later sandbox has to cover
        atexit.register(shutil.rmtree, _private_report_dir[0], True)
    return _private_report_dir[0]
