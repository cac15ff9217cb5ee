"""The pytest process of a checks session (ci_eval.checks.run_pytest starts it, as
`python -s -c "...import ci_eval.run.checks.pytest_session as session; session.main()" ARGS`).
DESIGN.md, "Trust model": test outcomes come from a report the harness chose, and nothing the
test runner or interpreter loads comes from a place the agent could write.

Nothing in it may come from a place the agent could write in the harness's stead:
- the workspace is off sys.path until pytest, this module and the report plugin are imported, and
  until every `-p NAME` plugin is loaded: a `*.dist-info/entry_points.txt` in the workspace would
  otherwise name the module that `-p ci_eval.run.checks.pytest_report` (or a task's `-p` plugin) loads.
  The report plugin is handed to pytest as an object, not looked up by name. The workspace goes
  on sys.path (last, as `python -m pytest` has the current folder) when the initial conftest.py
  files load, before any test module is imported;
- modules of the workspace, and of anywhere outside the interpreter's installation, are compiled
  from their source (bytecode.ignore_bytecode), and pytest reads no rewritten-test cache of
  theirs: a planted `__pycache__` is never loaded, whatever its header says;
- the interpreter runs with -s (no user site-packages: ~/.local is writable by earlier steps of
  the checks) and pytest with `-p no:cacheprovider` (no `.pytest_cache`), no plugin autoload.

Hidden tests: `--ci-eval-pristine JSON` (workspace path -> the task's pristine hidden_tests/
file, taken out of argv before pytest parses it) makes each such test module compile from the
pristine bytes read when this process starts (serve_pristine), before any code under test runs
here: whatever a process of this step writes to the file on disk, pytest runs the pristine test.

The tamper sentinel: `--ci-eval-must-fail NODEID --ci-eval-must-pass NODEID` add two tests at the
end of the session, after every collected test (and after a session stopped by -x or by
collection errors), whose ids ci_eval.checks chose at random for this session: plain test
functions of a module kept in memory, at a file outside the workspace that does not exist. Code under test that rewrites outcomes wholesale (a patched
TestReport, a makereport hook, a report written by hand) also turns the must-fail one into a
pass or leaves both out; ci_eval.checks then fails the run (pytest_report.sentinel_problem).
They do not change the session's exit status or its "no tests collected".
"""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest
from _pytest.assertion import rewrite

from ci_eval.run.checks import pytest_report
from ci_eval.run.checks.bytecode import ignore_bytecode


def sentinel_tests(session, must_fail: str, must_pass: str) -> list[pytest.Function]:
    """The two sentinel tests, plain test functions of a module that lives only in memory at
    the (non-existent) file their ids name: to code under test they look like any other test,
    and they get the fixtures and hooks a test at the root of the project gets."""
    location = must_fail.rsplit("::", 1)[0]
    fail_name, pass_name = must_fail.rsplit("::", 1)[1], must_pass.rsplit("::", 1)[1]
    source = f"def {fail_name}():\n    assert False\n\n\ndef {pass_name}():\n    pass\n"
    module = types.ModuleType(Path(location).stem)
    module.__file__ = location
    exec(compile(source, location, "exec"), module.__dict__)  # noqa: S102 - our own two tests
    collector = pytest.Module.from_parent(session, path=Path(location), nodeid=location)
    collector._obj = module  # never imported from disk
    return [pytest.Function.from_parent(collector, name=name, callobj=getattr(module, name))
            for name in (pass_name, fail_name)]


class SessionPlugin:
    """The session's plugin besides the report: the workspace on sys.path, the sentinel."""

    def __init__(self) -> None:
        self.sentinels: list[pytest.Function] = []
        self.must_fail = ""
        self.ran: set[str] = set()
        self.real_collected = 0

    def pytest_addoption(self, parser) -> None:
        parser.addoption("--ci-eval-must-fail", metavar="NODEID", default=None,
                         help="a sentinel test that must fail (ci-eval)")
        parser.addoption("--ci-eval-must-pass", metavar="NODEID", default=None,
                         help="a sentinel test that must pass (ci-eval)")

    @pytest.hookimpl(tryfirst=True)
    def pytest_load_initial_conftests(self) -> None:
        sys.path.append("")

    # old-style wrappers (hookwrapper=True): tasks' checks may run on pytest 7
    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection_modifyitems(self, session, config, items):
        yield
        self.real_collected = len(items)
        must_fail, must_pass = (config.getoption("--ci-eval-must-fail"),
                                config.getoption("--ci-eval-must-pass"))
        if must_fail and must_pass:
            self.sentinels = sentinel_tests(session, must_fail, must_pass)
            self.must_fail = must_fail
            items.extend(self.sentinels)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_logreport(self, report):
        sentinel = next((s for s in self.sentinels if s.nodeid == report.nodeid), None)
        if sentinel is not None:
            self.ran.add(report.nodeid)
            if report.nodeid == self.must_fail and report.when == "call" and report.failed:
                # the session counts this failure next (towards -x too): net, it counts nothing
                sentinel.session.testsfailed -= 1
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session):
        outcome = yield
        if outcome.excinfo and isinstance(outcome.excinfo[1], (session.Failed,
                                                               session.Interrupted)):
            self._run_left_over(session)  # then the session ends as it would have

    def _run_left_over(self, session) -> None:
        """The sentinels a stopped session did not reach (-x, collection errors)."""
        left = [s for s in self.sentinels if s.nodeid not in self.ran]
        if not left:
            return
        session._setupstate.teardown_exact(None)
        for index, item in enumerate(left):
            following = left[index + 1] if index + 1 < len(left) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus) -> None:
        if exitstatus == pytest.ExitCode.OK and self.sentinels and self.real_collected == 0:
            session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED


class _PristineSource:
    """A test file's path whose bytes are the pristine copy's (what _rewrite_test reads)."""

    def __init__(self, path, source: bytes) -> None:
        self.path, self.source = path, source

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def read_bytes(self) -> bytes:
        return self.source


def serve_pristine(pristine: dict[str, str]) -> None:
    """Hidden test modules (workspace path -> pristine file) are compiled from the pristine
    bytes, read now, before any code under test runs in this process: a process of this step
    that rewrites the file on disk before pytest imports it changes nothing."""
    sources = {}
    for target, source in pristine.items():
        with open(source, "rb") as handle:
            sources[os.path.abspath(target)] = handle.read()
    rewrite_test = rewrite._rewrite_test

    def rewrite_pristine(fn, config):
        source = sources.get(os.path.abspath(fn))
        return rewrite_test(fn if source is None else _PristineSource(fn, source), config)

    rewrite._rewrite_test = rewrite_pristine


def _take_option(name: str) -> str | None:
    """The value of `name VALUE` in sys.argv, taken out of it (pytest never sees it)."""
    if name not in sys.argv:
        return None
    where = sys.argv.index(name)
    value = sys.argv[where + 1]
    del sys.argv[where:where + 2]
    return value


def main() -> None:
    pristine = _take_option("--ci-eval-pristine")
    if pristine:
        serve_pristine(json.loads(pristine))
        sys.argv.append("--assert=rewrite")  # the pristine bytes reach pytest through it
    untrusted = ignore_bytecode(os.getcwd())
    read_pyc = rewrite._read_pyc

    def read_trusted_pyc(source, pyc, trace=lambda _message: None):
        # a test module or conftest.py of the workspace is rewritten from its source
        return None if untrusted(str(source)) else read_pyc(source, pyc, trace)

    rewrite._read_pyc = read_trusted_pyc
    sys.exit(pytest.main(plugins=[pytest_report, SessionPlugin()]))
