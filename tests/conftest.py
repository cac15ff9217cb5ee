"""Shared fixtures: task folders on disk, and the real CLI as a subprocess.

    def test_something(repo_root, make_task, cli):
        make_task(repo_root, "task-001-demo", metadata={"difficulty": 4})
        result = cli("list", "--json", cwd=repo_root)
        assert result.returncode == 0

- `repo_root`: an empty repo root (tmp dir) holding an empty tasks/ folder.
- `make_task(root, name="task-001-example", *, prompt=..., checks=..., metadata=...,
  repo_state=..., solution=..., negatives=None, files=None) -> Path` writes a valid task folder
  under root/tasks/ by default (checks fail on the untouched repo-state, pass after solution/);
  every part can be replaced, broken or left out (None). See its docstring.
- `valid_metadata()`: a fresh dict of valid metadata.json content.
- `cli(*args, cwd=None, env=None, input=None, timeout=60) -> CompletedProcess` runs
  `python -m ci_eval ARGS` for real (text mode, stdout/stderr captured, never raises on exit code)
  with this checkout first on PYTHONPATH; cwd defaults to a fresh tmp dir.
- `main_cli(*args, cwd=None) -> CompletedProcess`: the same through ci_eval.main.main() in this
  process (fast; for large matrices of cases). Unexpected errors end as exit 2 (OSError) or 3, as in the CLI.
- `assert_bad_input(result, *needles)`: exit 2, no traceback, exactly one stderr line, holding
  every needle.
"""

from __future__ import annotations

import compileall
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from suite_order import SLOW_TESTS, long_test_units, long_tests_first, mark_slow

REPO_ROOT = Path(__file__).resolve().parents[1]
# Tests that start `python -m ci_eval` with the inherited environment must run this checkout,
# not the ci-eval the interpreter has installed (a worktree's venv may point at another one).
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(REPO_ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
# Every `python -m ci_eval` child of the suite imports this checkout's ci_eval: with nothing
# having written its bytecode (a fresh clone, an editable install, PYTHONDONTWRITEBYTECODE=1) each
# child compiled every module it imports from source again (about 0.1 CPU s a start). Compiled
# once here, as pip does for an installed ci-eval; the folders init and new-task copy stay source.
compileall.compile_dir(REPO_ROOT / "ci_eval", quiet=2,
                       rx=re.compile(r"[/\\](templates|tasks[/\\]template)([/\\]|$)"))
# pytest keeps its assert-rewritten test modules (tests/__pycache__/*-pytest-*.pyc) only where
# bytecode may be written: under PYTHONDONTWRITEBYTECODE=1 each worker rewrote every test file
# again at each start (about 12 CPU s). Allowed while the test files are collected; the tests run
# with the caller's setting again (pytest_collection_finish).
_DONT_WRITE_BYTECODE = sys.dont_write_bytecode
sys.dont_write_bytecode = False
# tests/fixtures holds sample projects with tests of their own (importer sources): not ours to run
collect_ignore = ["fixtures"]

DEFAULT_PROMPT = "Write the answer to the question in README.md into answer.txt.\n"
DEFAULT_CHECKS = (
    'from ci_eval.checks import file_equals, main\n\nmain(file_equals("answer.txt", "42\\n"))\n'
)
DEFAULT_SOLUTION = "#!/bin/sh\nprintf '42\\n' > answer.txt\n"
DEFAULT_REPO_STATE = {"README.md": "What is six times seven? Answer in answer.txt.\n"}
DEFAULT_METADATA = {
    "difficulty": 2,
    "area": "demo",
    "tags": ["example"],
    "created": "2026-01-15",
}


def valid_metadata_dict() -> dict:
    return json.loads(json.dumps(DEFAULT_METADATA))


def _write_tree(base: Path, files: dict) -> None:
    """files: relative path -> str | bytes (written) or None (deleted, file or folder)."""
    for rel, content in files.items():
        target = base / rel
        if content is None:
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


_DEFAULT = object()


def _make_task(
    root: Path,
    name: str = "task-001-example",
    *,
    prompt: str | bytes | None = DEFAULT_PROMPT,
    checks: str | None = DEFAULT_CHECKS,
    metadata: dict | str | bytes | None = _DEFAULT,
    repo_state: dict | None = _DEFAULT,
    solution: str | dict | None = DEFAULT_SOLUTION,
    negatives: dict | None = None,
    files: dict | None = None,
) -> Path:
    """Write root/tasks/NAME and return its path. Defaults give a valid task.

    prompt / checks: file content, None = no file.
    metadata: dict = merged over the valid defaults (DEFAULT_METADATA); str / bytes = written
        verbatim (bad JSON, or exact content such as a dict missing a required key:
        `json.dumps({...})`); None = no metadata.json.
    repo_state: {relative path: content} under repo-state/; None = no repo-state/ folder.
    solution: str = solution/solve.sh content; dict = {relative path: content} under solution/;
        None = no solution/ folder.
    negatives: {relative path: content} under negatives/ (default: no negatives/).
    files: {path relative to the task folder: str | bytes | None}, applied last; None deletes.
    """
    task = Path(root) / "tasks" / name
    task.mkdir(parents=True, exist_ok=True)
    if prompt is not None:
        _write_tree(task, {"prompt.md": prompt})
    if checks is not None:
        _write_tree(task, {"checks.py": checks})
    if metadata is _DEFAULT:
        metadata = {}
    if isinstance(metadata, dict):
        merged = valid_metadata_dict()
        merged.update(metadata)
        _write_tree(task, {"metadata.json": json.dumps(merged, indent=2) + "\n"})
    elif metadata is not None:
        _write_tree(task, {"metadata.json": metadata})
    if repo_state is _DEFAULT:
        repo_state = dict(DEFAULT_REPO_STATE)
    if repo_state is not None:
        (task / "repo-state").mkdir(exist_ok=True)
        _write_tree(task / "repo-state", repo_state)
    if solution is not None:
        (task / "solution").mkdir(exist_ok=True)
        entries = {"solve.sh": solution} if isinstance(solution, str) else solution
        _write_tree(task / "solution", entries)
        script = task / "solution" / "solve.sh"
        if script.is_file():
            script.chmod(0o755)
    if negatives is not None:
        (task / "negatives").mkdir(exist_ok=True)
        _write_tree(task / "negatives", negatives)
    if files:
        _write_tree(task, files)
    return task


@pytest.fixture(scope="session")
def make_task():
    """The task-folder builder; see _make_task for the arguments."""
    return _make_task


@pytest.fixture
def valid_metadata():
    """A function returning a fresh dict of valid metadata.json content."""
    return valid_metadata_dict


def copy_of(built: Path, target: Path) -> Path:
    """A copy of a repo root a module-scoped fixture built once (runs and all), for a test that
    may change it: copying costs milliseconds where building it ran the CLI."""
    shutil.copytree(built, target, symlinks=True)
    return target


@pytest.fixture
def repo_root(tmp_path: Path) -> Path:
    """An empty repo root with an empty tasks/ folder (no ci-eval.yaml, no baseline.json)."""
    root = tmp_path / "repo"
    (root / "tasks").mkdir(parents=True)
    return root


def _cli_env(extra: dict | None) -> dict:
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.pop("GITHUB_ACTIONS", None)
    if env.get("MUTANT_UNDER_TEST") == "stats":
        # scripts/mutation.sh, mutmut's stats pass: mutmut's own recorder would read its config
        # from the child's cwd; the child records its hits with scripts/mutation_stats instead
        # (CI_EVAL_MUTATION_HITS, which it keeps), and turns the pass back on for itself
        del env["MUTANT_UNDER_TEST"]
    env.update(extra or {})
    return env


@pytest.fixture(scope="session")  # stateless: a module-scoped fixture may build with it too
def cli(tmp_path_factory):
    """Run the real CLI: cli("list", "--json", cwd=root) -> subprocess.CompletedProcess."""

    def run(
        *args: object,
        cwd: Path | str | None = None,
        env: dict | None = None,
        input: str | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess:
        workdir = cwd if cwd is not None else tmp_path_factory.mktemp("cwd")
        return subprocess.run(
            [sys.executable, "-m", "ci_eval", *(str(a) for a in args)],
            check=False,
            cwd=workdir,
            env=_cli_env(env),
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run


@pytest.fixture
def main_cli(monkeypatch, capsys):
    """Run ci_eval.main.main(ARGS) in-process: main_cli("list", cwd=root) -> CompletedProcess."""
    from ci_eval.main import main

    def run(*args: object, cwd: Path | str | None = None) -> subprocess.CompletedProcess:
        argv = [str(a) for a in args]
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors, --help, --version
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["ci-eval", *argv], code, out, err)

    return run


@pytest.fixture
def assert_bad_input():
    from harness_helpers import assert_bad_input as check

    return check


# --- no silent skips in CI -------------------------------------------------------------------
# Isolation tests skip on machines without namespaces. CI's machine has them, so .ci/run sets
# CI_EVAL_NO_SKIPS=1 and every skip there is a failure: the sandbox is never left untested by a
# suite that still goes green.
NO_SKIPS_ENV = "CI_EVAL_NO_SKIPS"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get(NO_SKIPS_ENV) == "1" and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.longrepr = f"skipped with {NO_SKIPS_ENV}=1 (this machine must run it): {reason}"


# --- the long tests first (tests/suite_order.py); the slow tier ------------------------------------
def pytest_configure(config):
    config.addinivalue_line("markers", "slow: left out of the fast tier, pytest -m 'not slow' "
                            "(tests/slow_tests.txt and tests/long_tests.txt)")


def pytest_collection_finish(session):
    sys.dont_write_bytecode = _DONT_WRITE_BYTECODE


def pytest_collection_modifyitems(config, items):
    long_units = long_test_units()
    mark_slow(items, long_units + long_test_units(SLOW_TESTS))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    items[:] = long_tests_first(items, long_units, max(workers, 1))
