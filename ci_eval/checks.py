"""Helpers for task authors' checks.py: small deterministic verifiers with readable reasons.

A typical checks.py:

    from ci_eval.checks import file_equals, regex_match, run_tests, main

    main(
        regex_match("setup.cfg", r"max-line-length\\s*=\\s*100"),
        lambda: run_tests(fail_to_pass=["tests/test_x.py::test_new"], restore=["tests/"]),
    )

checks.py runs with cwd = the agent's workspace and the task folder available as
CI_EVAL_TASK_DIR. Exit 0 = pass, exit 1 = fail; anything else (an uncaught exception, a crash,
exit 2+) is an infrastructure error, never a pass or a fail.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    reason: str

    def __bool__(self) -> bool:
        return self.ok


def passed(reason: str = "ok") -> CheckResult:
    return CheckResult(True, reason)


def failed(reason: str) -> CheckResult:
    return CheckResult(False, reason)


def _tail(text: str, limit: int = 800) -> str:
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def file_equals(path: str | os.PathLike, expected: str | os.PathLike) -> CheckResult:
    """`path` (in the workspace) equals `expected`: a pathlib.Path names a file, a str is text."""
    target = Path(path)
    if not target.is_file():
        return failed(f"{target}: file is missing")
    expected_text = Path(expected).read_text() if isinstance(expected, os.PathLike) else expected
    actual = target.read_text(errors="replace")
    if actual == expected_text:
        return passed(f"{target}: contents as expected")
    for number, (got, want) in enumerate(
        zip(actual.splitlines(), expected_text.splitlines()), start=1
    ):
        if got != want:
            return failed(f"{target}:{number}: expected {want!r}, found {got!r}")
    return failed(
        f"{target}: expected {len(expected_text.splitlines())} lines, "
        f"found {len(actual.splitlines())}"
    )


def regex_match(path: str | os.PathLike, pattern: str, flags: int = re.MULTILINE) -> CheckResult:
    """Some part of the file at `path` matches `pattern` (re.search, MULTILINE by default)."""
    target = Path(path)
    if not target.is_file():
        return failed(f"{target}: file is missing")
    if re.search(pattern, target.read_text(errors="replace"), flags):
        return passed(f"{target}: matches {pattern!r}")
    return failed(f"{target}: no match for {pattern!r}")


def shell_exit_zero(cmd: str, timeout: float = 10, *, env: dict | None = None) -> CheckResult:
    """`cmd` run by bash in the workspace exits 0 within `timeout` seconds."""
    try:
        proc = subprocess.run(
            ["bash", "-c", cmd], capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return failed(f"`{cmd}` did not finish within {timeout:g}s")
    if proc.returncode == 0:
        return passed(f"`{cmd}` exited 0")
    output = _tail(proc.stderr or proc.stdout, 400)
    return failed(f"`{cmd}` exited {proc.returncode}: {output}")


def task_dir() -> Path:
    """The pristine task folder (set by the harness; falls back to the caller's folder)."""
    if os.environ.get("CI_EVAL_TASK_DIR"):
        return Path(os.environ["CI_EVAL_TASK_DIR"])
    return Path(sys.argv[0]).resolve().parent


def restore_pristine(paths: Iterable[str]) -> None:
    """Put files back as repo-state/ had them, so an agent cannot weaken tests or fixtures.
    A path that repo-state/ does not have is removed (e.g. a conftest.py the agent added)."""
    source_root = task_dir() / "repo-state"
    for rel in paths:
        source = source_root / rel
        target = Path(rel)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        if source.is_dir():
            shutil.copytree(source, target)
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def add_hidden_tests(name: str, dest: str = "tests") -> str:
    """Copy the task's hidden_tests/<name> (never shown to the agent) into the workspace's
    `dest` folder; returns its workspace path, the prefix of its test ids."""
    target = Path(dest) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(task_dir() / "hidden_tests" / name, target)
    return target.as_posix()


# `python -m pytest` would put the workspace first on sys.path while pytest is imported.
_PYTEST_LAUNCHER = (
    "import sys\n"
    "sys.path.remove('')\n"
    "import pytest\n"
    "sys.path.append('')\n"
    "sys.exit(pytest.console_main())\n"
)

OUTCOMES = ("PASSED", "FAILED", "ERROR", "XFAIL", "XPASS", "SKIPPED")


def parse_pytest_outcomes(output: str, test_ids: Iterable[str] | None = None) -> dict[str, str]:
    """Node id -> outcome, from the `-rA` short test summary. With `test_ids`, those ids are
    matched whole (a parametrized id may hold spaces, a failure line appends ` - message`);
    without, every summarized id is returned, cut at the first ` - `."""
    wanted = None if test_ids is None else list(test_ids)
    outcomes = {}
    for line in output.splitlines():
        word, _, rest = line.partition(" ")
        if word not in OUTCOMES:
            continue
        if wanted is None:
            node_id = rest.partition(" - ")[0].strip()
            if "::" in node_id:
                outcomes[node_id] = word
            continue
        for test_id in wanted:
            if rest == test_id or rest.startswith(test_id + " - "):
                outcomes[test_id] = word
    return outcomes


def run_tests(
    fail_to_pass: Iterable[str] = (),
    pass_to_pass: Iterable[str] = (),
    *,
    restore: Iterable[str] = (),
    args: Iterable[str] = (),
    plugins: Iterable[str] = (),
    project_config: bool = False,
    timeout: float = 120,
) -> CheckResult:
    """Run pytest on the named tests; every one must PASS (skipped, xfail or missing fails).

    fail_to_pass: tests the fix must make pass; pass_to_pass: tests that must keep passing.
    restore: paths put back from repo-state/ first (tests, fixtures; files that setup.sh or a
    repo-state patch made cannot be restored). Installed pytest plugins are not auto-loaded
    (faster, and the machine's plugins cannot change the verdict); name the ones the tests need
    in `plugins` (e.g. "asyncio"). The workspace's conftest.py and ini files (pytest.ini,
    pyproject.toml, setup.cfg, tox.ini) are ignored, so an agent cannot rewrite outcomes with a
    hook; pass project_config=True when the tests need them (and `restore` them). pytest itself
    is imported with the workspace off sys.path (a workspace `pytest.py` cannot stand in for it);
    the workspace is then appended, so tests still import its modules. The exit code of pytest
    is cross-checked with the parsed statuses; no evidence that the tests ran is a failure.
    """
    fail_to_pass, pass_to_pass = list(fail_to_pass), list(pass_to_pass)
    wanted = fail_to_pass + pass_to_pass
    if not wanted:
        raise ValueError("run_tests needs at least one test id")
    if importlib.util.find_spec("pytest") is None:
        # A missing tool is an infrastructure error (a crash), never a failed check.
        raise RuntimeError("pytest is not installed for the interpreter running the checks")
    restore_pristine(restore)
    plugin_args = [arg for name in plugins for arg in ("-p", name)]
    config_args = [] if project_config else ["--noconftest", "-c", os.devnull, "--rootdir", "."]
    cmd = [sys.executable, "-c", _PYTEST_LAUNCHER, "-rA", "-p", "no:cacheprovider", "-q",
           *config_args, *plugin_args, *args, *wanted]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              check=False)
    except subprocess.TimeoutExpired:
        return failed(f"tests did not finish within {timeout:g}s")
    outcomes = parse_pytest_outcomes(proc.stdout, wanted)
    if not outcomes:
        output = _tail(proc.stdout + proc.stderr, 400)
        return failed(f"no evidence the tests ran (pytest exit {proc.returncode}): {output}")
    problems = []
    for test_id in wanted:
        outcome = outcomes.get(test_id, "NOT RUN")
        if outcome != "PASSED":
            kind = "fail_to_pass" if test_id in fail_to_pass else "pass_to_pass"
            problems.append(f"{test_id} {outcome} ({kind})")
    if problems:
        return failed("; ".join(problems))
    if proc.returncode != 0:
        return failed(f"pytest exited {proc.returncode} although the named tests passed")
    return passed(f"{len(wanted)} tests passed")


Check = CheckResult | Callable[[], CheckResult]


def main(*checks: Check) -> None:
    """Evaluate checks in order (callables lazily); exit 1 with reasons on stderr if any failed."""
    failures = []
    for check in checks:
        result = check() if callable(check) else check
        if not isinstance(result, CheckResult):
            raise TypeError(f"a check returned {type(result).__name__}, expected CheckResult")
        if not result.ok:
            failures.append(result.reason)
    for reason in failures:
        print(f"FAIL: {reason}", file=sys.stderr)
    if failures:
        sys.exit(1)
    sys.exit(0)
