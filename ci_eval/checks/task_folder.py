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

from ci_eval.run.checks.restore import restore
from ci_eval.run.checks.step_guard import guarded_step

REPORT_DIR_ENV = "CI_EVAL_REPORT_DIR"  # set by the harness: a folder outside the workspace

_private_report_dir: list[Path] = []
_hidden_files: list[tuple[Path, Path]] = []  # (pristine file, workspace path)


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
    """The task's hidden_tests/<name> (never shown to the agent), laid into the workspace's
    `dest` folder for each check step (run_tests, run_pytest, run_junit_tests, shell_exit_zero,
    `with step():`) from the pristine copy, and gone again when the step ends, so that code an
    earlier step ran cannot rewrite it (run/checks/step_guard.py); returns its workspace path,
    the prefix of its test ids."""
    source, target = task_dir() / "hidden_tests" / name, Path(dest) / name
    if not source.is_file():
        raise FileNotFoundError(f"add_hidden_tests: the task has no hidden_tests/{name}")
    if (source, target) not in _hidden_files:
        _hidden_files.append((source, target))
    return target.as_posix()


def hidden_files() -> list[tuple[Path, Path]]:
    """The (pristine file, workspace path) pairs add_hidden_tests named (for this task)."""
    folder = task_dir() / "hidden_tests"
    return [(source, target) for source, target in _hidden_files if folder in source.parents]


def step():
    """One check step run by checks.py's own code (`with step(): subprocess.run(...)`): what
    earlier steps left running is ended, the hidden tests are laid in from the pristine copy,
    and when it ends whatever it left running is ended and what it changed in the workspace is
    put back. The helpers (run_tests, run_junit_tests, shell_exit_zero) run in one each.
    `.problem` of the value it gives is set when a change could not be undone."""
    return guarded_step(hidden_files())


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
