"""Helpers for task authors' checks.py: small deterministic verifiers with readable reasons.

A typical checks.py:

    from ci_eval.checks import file_equals, regex_match, run_tests, main

    main(
        regex_match("setup.cfg", r"max-line-length\\s*=\\s*100"),
        lambda: run_tests(fail_to_pass=["tests/test_x.py::test_new"], restore=["tests/"]),
    )

checks.py runs with cwd = the agent's workspace and the task folder available as
CI_EVAL_TASK_DIR, in a sandbox (docs/isolation.md). Exit 0 = pass, exit 1 = fail (an
AssertionError is a fail with its message); a crash, a kill or a timeout after the agent's code ran
is that run's fail, with the reason.

Everything in the workspace was written by the agent: these helpers never follow a symlink there
and cap what they read. Test outcomes come from a structured report that pytest writes outside
the workspace (ci_eval/run/pytest_report.py), never from the text the code under test can print.
Nothing that agent code started outlives the step that ran it: run_pytest, shell_exit_zero and
main (between checks) end every process left behind (ci_eval/run/strays.py), so a daemon cannot
rewrite a test after a later step restored it.
"""

from __future__ import annotations

import atexit
import importlib.util
import itertools
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import ci_eval
from ci_eval import strict_json
from ci_eval.grading.rubric import RUBRIC_FILE, task_grading
from ci_eval.grading.testids import judge_tests
from ci_eval.output import UntrustedFile, read_capped
from ci_eval.run.junit_run import run_junit
from ci_eval.run.pytest_report import (
    ReportError,
    read_report,
    sentinel_ids,
    sentinel_problem,
    write_report,
)
from ci_eval.run.restore import add_file, conftests_on_the_way, pristine_ini, restore
from ci_eval.run.strays import descendants, end_strays, run_step

READ_CAP_BYTES = 16 * 1024 * 1024  # the most a helper reads of one workspace file
REPORT_DIR_ENV = "CI_EVAL_REPORT_DIR"  # set by the harness: a folder outside the workspace


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


def file_equals(path: str | os.PathLike, expected: str | os.PathLike, *,
                ignore_trailing_newlines: bool = False,
                universal_newlines: bool = False) -> CheckResult:
    """`path` (in the workspace) equals `expected`: a pathlib.Path names a file, a str is text.
    ignore_trailing_newlines=True compares both without the newlines they end in;
    universal_newlines=True reads \r\n and \r as \n in both, as Python's text mode does (the
    fixture-task format's file_equals, for tasks imported from it, does both)."""
    target = Path(path)
    actual = _workspace_text(target, universal_newlines)
    if not isinstance(actual, str):
        return actual
    expected_text = (Path(expected).read_bytes().decode("utf-8", errors="replace")
                     if isinstance(expected, os.PathLike) else expected)
    if universal_newlines:
        expected_text = _universal(expected_text)
    if ignore_trailing_newlines:
        actual, expected_text = actual.rstrip("\n"), expected_text.rstrip("\n")
    if actual == expected_text:
        return passed(f"{target}: contents as expected")
    return failed(f"{target}{first_difference(actual, expected_text)}")


def first_difference(actual: str, expected: str) -> str:
    """Where two different texts first differ, as ":LINE: what" (or ": what"): the line's
    content, its line ending, a missing or extra newline at the end, missing or extra lines."""
    got_lines = actual.splitlines(keepends=True)
    want_lines = expected.splitlines(keepends=True)
    for number, (got, want) in enumerate(zip(got_lines, want_lines), start=1):
        if got == want:
            continue
        got_body, want_body = got.rstrip("\r\n"), want.rstrip("\r\n")
        if got_body != want_body:
            return f":{number}: expected {want_body!r}, found {got_body!r}"
        got_end, want_end = got[len(got_body):], want[len(want_body):]
        if not got_end:
            return f":{number}: expected a newline at the end of the file, found none"
        if not want_end:
            return f":{number}: expected no newline at the end of the file, found {got_end!r}"
        return f":{number}: expected the line to end in {want_end!r}, found {got_end!r}"
    if len(got_lines) < len(want_lines):
        missing = want_lines[len(got_lines)]
        return (f": expected {len(want_lines)} lines, found {len(got_lines)} (missing from "
                f"line {len(got_lines) + 1}: {missing.rstrip(chr(13) + chr(10))!r})")
    extra = got_lines[len(want_lines)]
    return (f": expected {len(want_lines)} lines, found {len(got_lines)} (extra from line "
            f"{len(want_lines) + 1}: {extra.rstrip(chr(13) + chr(10))!r})")


def regex_match(path: str | os.PathLike, pattern: str, flags: int = re.MULTILINE, *,
                universal_newlines: bool = False) -> CheckResult:
    """Some part of the file at `path` matches `pattern` (re.search, MULTILINE by default);
    universal_newlines=True reads \r\n and \r as \n first, as Python's text mode does."""
    target = Path(path)
    text = _workspace_text(target, universal_newlines)
    if not isinstance(text, str):
        return text
    if re.search(pattern, text, flags):
        return passed(f"{target}: matches {pattern!r}")
    return failed(f"{target}: no match for {pattern!r}")


def _universal(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _workspace_text(target: Path, universal_newlines: bool = False) -> str | CheckResult:
    """A workspace file's text, or the failed CheckResult saying why it cannot be read: missing,
    a symlink (never followed: it could point at a file the agent must not quote), not a regular
    file, or larger than READ_CAP_BYTES."""
    try:
        data = read_capped(target, READ_CAP_BYTES)
    except UntrustedFile as exc:
        return failed(f"{target}: {str(exc).split(': ', 1)[-1]}")
    if data is None:
        return failed(f"{target}: file is missing")
    text = data.decode("utf-8", errors="replace")
    return _universal(text) if universal_newlines else text


def shell_exit_zero(cmd: str | list[str], timeout: float = 10, *, env: dict | None = None,
                    shell: str = "bash") -> CheckResult:
    """`cmd` run by `shell` (bash; "sh" for the POSIX shell) in the workspace exits 0 within
    `timeout` seconds; a list is an argv run as it is, without a shell (the fixture-task format's
    `argv`). Whatever it left running is ended when it is done."""
    argv = list(cmd) if isinstance(cmd, (list, tuple)) else [shell, "-c", cmd]
    if isinstance(cmd, (list, tuple)):
        cmd = shlex.join(cmd)
    try:
        step = run_step(argv, timeout=timeout, env=env)
    except (FileNotFoundError, PermissionError) as exc:
        return failed(f"`{cmd}` could not be started: {exc.strerror or exc}")
    if step.code is None:
        return failed(f"`{cmd}` did not finish within {timeout:g}s")
    if step.code == 0:
        return passed(f"`{cmd}` exited 0")
    output = _tail(step.stderr or step.stdout, 400)
    return failed(f"`{cmd}` exited {step.code}: {output}")


def task_dir() -> Path:
    """The pristine task folder (set by the harness; falls back to the caller's folder)."""
    if os.environ.get("CI_EVAL_TASK_DIR"):
        return Path(os.environ["CI_EVAL_TASK_DIR"])
    return Path(sys.argv[0]).resolve().parent


def restore_pristine(paths: Iterable[str]) -> None:
    """Put files back as repo-state/ had them, so an agent cannot weaken tests or fixtures.
    A path that repo-state/ does not have is removed (e.g. a conftest.py the agent added), and
    so is what Python would load instead of a restored NAME.py: its cached bytecode, a package
    NAME/ or an extension module NAME.*.so that repo-state/ does not have (run/restore.py)."""
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


# The pytest process (ci_eval/run/pytest_session.py, which says what it shuts out), run as
# `python -s -c _PYTEST_LAUNCHER CI_EVAL_FOLDER ARGS...`: never `python -m pytest`, which would put
# the workspace first on sys.path while pytest is imported. ci_eval comes from the folder the
# checks imported it from (an editable install's finder may point at another checkout).
_PYTEST_LAUNCHER = (
    "import sys\n"
    "if '' in sys.path: sys.path.remove('')\n"
    "sys.path.insert(0, sys.argv.pop(1))\n"
    "import ci_eval.run.pytest_session as session\n"
    "sys.path.pop(0)\n"
    "session.main()\n"
)
_CI_EVAL_FOLDER = str(Path(ci_eval.__file__).resolve().parents[1])
_COLLECT_ONLY = ("--collect-only", "--co")


@dataclass(frozen=True)
class PytestRun:
    """One pytest session: its exit code (None when it timed out), the outcome of each test from
    the structured report (None when there is no evidence the tests ran, with `problem` saying
    why), and the tail of what it printed (for reasons only: never parsed for outcomes)."""

    exit_code: int | None
    outcomes: dict[str, str] | None
    output: str
    problem: str = ""


_report_numbers = itertools.count(1)
_private_report_dir: list[Path] = []


def run_pytest(args: Iterable[str] = (), *, plugins: Iterable[str] = (),
               project_config: bool = False, workspace_config: bool = False,
               timeout: float = 120, cwd: str | os.PathLike | None = None) -> PytestRun:
    """Run pytest in the workspace with `args` and read each test's outcome from its structured
    report. Installed plugins are not auto-loaded (name the ones the tests need in `plugins`,
    e.g. "asyncio"). By default the workspace's conftest.py and ini files are ignored, so an
    agent cannot rewrite outcomes with a hook. project_config=True uses the project's pytest
    configuration as repo-state/ has it (the pristine ini file, via -c) and the conftest.py files
    on the way to the named tests as repo-state/ has them (an agent's conftest.py is removed, an
    edited one put back). workspace_config=True runs pytest as plain `python -m pytest` would,
    with whatever configuration the folder holds: for tasks whose deliverable IS that
    configuration (the outcomes still come from the report, never from the printed text).
    Nothing of the agent's loads in the harness's stead (ci_eval/run/pytest_session.py: no
    bytecode cache, no entry point, no user site-packages), and two sentinel tests with ids drawn
    for this session, one that must fail, tell a forged report apart ("test outcomes were
    tampered with"); they are left out of `outcomes`. cwd: where pytest runs (default: here)."""
    args = list(args)
    report = _report_dir() / f"pytest-{os.getpid()}-{next(_report_numbers)}.json"
    if workspace_config:
        config_args = []
    elif project_config:
        restore_pristine(conftests_on_the_way(args))
        # confcutdir: no conftest.py from above the workspace (/tmp, HOME: earlier steps write)
        config_args = ["-c", pristine_ini(task_dir() / "repo-state"), "--rootdir", ".",
                       "--confcutdir", "."]
    else:
        config_args = ["--noconftest", "-c", os.devnull, "--rootdir", "."]
    plugin_args = [arg for name in plugins for arg in ("-p", name)]
    sentinels = () if any(arg in _COLLECT_ONLY for arg in args) else sentinel_ids(str(report.parent))
    sentinel_args = (["--ci-eval-must-fail", sentinels[0], "--ci-eval-must-pass", sentinels[1]]
                     if sentinels else [])
    cmd = [sys.executable, "-s", "-c", _PYTEST_LAUNCHER, _CI_EVAL_FOLDER,
           "--ci-eval-report", str(report), *sentinel_args, "-rA", "-p", "no:cacheprovider",
           "-q", *config_args, *plugin_args, *args]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    step = run_step(cmd, timeout=timeout, env=env, cwd=cwd)  # nothing it started outlives it
    if step.code is None:
        return PytestRun(None, None, "", f"tests did not finish within {timeout:g}s")
    output = _tail(step.stdout + step.stderr, 400)
    try:
        found = read_report(report)
    except ReportError as exc:
        return PytestRun(step.code, None, output, f"{exc} (pytest exit {step.code})")
    if found is None:
        return PytestRun(step.code, None, output,
                         f"no evidence the tests ran (pytest exit {step.code}, no report)")
    status, outcomes = found
    problem = sentinel_problem(status, outcomes, *sentinels) if sentinels else ""
    if not problem and status != step.code:
        problem = f"pytest exited {step.code} but its report says {status}"
    if problem:
        report.unlink(missing_ok=True)  # withdrawn: the harness reads the reports left
        return PytestRun(step.code, None, output, problem)
    if sentinels:
        outcomes = {test: outcome for test, outcome in outcomes.items() if test not in sentinels}
        write_report(report, status, outcomes)  # the harness reads the tests' outcomes only
    return PytestRun(step.code, outcomes, output)


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
    repo-state patch made cannot be restored). plugins, project_config, timeout: see
    run_pytest. Outcomes come from the structured report; a test id it does not list is NOT RUN;
    no report at all is "no evidence the tests ran"; pytest's exit code is cross-checked with
    the report and with the outcomes.
    """
    fail_to_pass, pass_to_pass = list(fail_to_pass), list(pass_to_pass)
    wanted = fail_to_pass + pass_to_pass
    if not wanted:
        raise ValueError("run_tests needs at least one test id")
    if importlib.util.find_spec("pytest") is None:
        # A missing tool is an infrastructure problem of the machine, never a failed check.
        raise RuntimeError("pytest is not installed for the interpreter running the checks")
    restore_pristine(restore)
    run = run_pytest([*args, *wanted], plugins=plugins, project_config=project_config,
                     timeout=timeout)
    verdict = judge_tests(fail_to_pass, pass_to_pass, run.outcomes, exit_code=run.exit_code,
                          problem=run.problem)
    if verdict.passed:
        return passed(verdict.reason)
    return failed(f"{verdict.reason}: {run.output}" if run.output else verdict.reason)


def run_junit_tests(
    argv: Iterable[str],
    fail_to_pass: Iterable[str] = (),
    pass_to_pass: Iterable[str] = (),
    *,
    report_env: str | None = None,
    restore: Iterable[str] = (),
    classname: bool = False,
    env: dict | None = None,
    timeout: float = 120,
) -> CheckResult:
    """Run a task's own test command (any runner) and read each test's outcome from the JUnit
    XML report it writes to a path ci-eval chose outside the workspace: "{report}" in argv, or
    the variable named by report_env, e.g.
    run_junit_tests(["node", "--test", "--test-reporter=junit",
    "--test-reporter-destination={report}"], fail_to_pass=["parse > reads units"]).
    Test ids and the report's limits: ci_eval/run/junit_report.py. The rules of run_tests hold:
    skipped, errored and missing fail; no report is "no evidence the tests ran"; an exit code
    that disagrees with the report fails. restore: paths put back from repo-state/ first."""
    fail_to_pass, pass_to_pass = list(fail_to_pass), list(pass_to_pass)
    if not fail_to_pass + pass_to_pass:
        raise ValueError("run_junit_tests needs at least one test id")
    restore_pristine(restore)
    run = run_junit(argv, _report_dir(), report_env=report_env, env=env, classname=classname,
                    timeout=timeout)
    verdict = judge_tests(fail_to_pass, pass_to_pass, run.outcomes, problem=run.problem)
    if verdict.passed:
        return passed(verdict.reason)
    return failed(f"{verdict.reason}: {run.output}" if run.output else verdict.reason)


def declared_tests() -> tuple[list[str], list[str]]:
    """The task's fail_to_pass and pass_to_pass ids, as its metadata.json or rubric.yaml
    declares them (ValueError when it declares none)."""
    folder = task_dir()
    metadata = strict_json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
    rubric = folder / RUBRIC_FILE
    tests, _ = task_grading(metadata, rubric.read_text(encoding="utf-8") if rubric.is_file()
                            else None, metadata_source=folder / "metadata.json",
                            rubric_source=rubric)
    if tests is None:
        raise ValueError(f"{folder.name} declares no fail_to_pass / pass_to_pass tests")
    return list(tests.fail_to_pass), list(tests.pass_to_pass)


def run_declared_tests(**options) -> CheckResult:
    """run_tests over the tests the task declares (declared_tests()), with run_tests' options."""
    fail_to_pass, pass_to_pass = declared_tests()
    return run_tests(fail_to_pass, pass_to_pass, **options)


def _report_dir() -> Path:
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


Check = CheckResult | Callable[[], CheckResult]


def main(*checks: Check) -> None:
    """Evaluate checks in order (callables lazily); exit 1 with reasons on stderr if any failed.
    What a check left running (agent code it ran through its own subprocess calls) is ended
    before the next one starts (ci_eval/run/strays.py)."""
    failures = []
    before = descendants()
    for check in checks:
        try:
            result = check() if callable(check) else check
        finally:
            end_strays(before)
        if not isinstance(result, CheckResult):
            raise TypeError(f"a check returned {type(result).__name__}, expected CheckResult")
        if not result.ok:
            failures.append(result.reason)
    for reason in failures:
        print(f"FAIL: {reason}", file=sys.stderr)
    if failures:
        sys.exit(1)
    sys.exit(0)
