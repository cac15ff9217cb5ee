"""A pytest plugin: each test's outcome, written as JSON to a path the harness chose.

    python -m pytest -p ci_eval.run.checks.pytest_report --ci-eval-report /run/.../reports/pytest-1.json

(ci_eval.checks hands it to pytest as an object, in the process of ci_eval/run/checks/pytest_session.py.)

Test outcomes are read from this file, never from pytest's printed output: the code under test
shares pytest's stdout and can print "PASSED" for any test id. The file is written once, at the
end of the session, to a folder outside the workspace; a session that never ends (os._exit, a
kill) leaves no file, which the reader takes as "no evidence that the tests ran". Code under test
runs in this same process and could patch pytest itself: the tamper sentinel (two tests with
random ids, one that must fail; pytest_session.py) tells a wholesale forgery apart, and
docs/isolation.md says what stays possible.

Outcomes per node id: PASSED, FAILED, ERROR (setup, teardown or collection failed), SKIPPED,
XFAIL, XPASS. The file: {"version": 1, "exit_status": N, "tests": {node id: outcome}}.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets

from ci_eval import strict_json
from ci_eval.run.checks.report_file import read_report_file

REPORT_VERSION = 1
_outcomes: dict[str, str] = {}
# report file name -> sha256 of its bytes, for each report ci_eval.checks read and accepted:
# the checks program hands this to the harness on its verdict pipe, and the harness reads only
# these, unchanged (code under test can write more files in the reports folder, or rewrite one)
ACCEPTED: dict[str, str] = {}


def pytest_addoption(parser):
    parser.addoption("--ci-eval-report", metavar="PATH", default=None,
                     help="write each test's outcome as JSON to PATH (ci-eval)")


def pytest_runtest_logreport(report):
    node = report.nodeid
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if _outcomes.get(node) == "FAILED" and not report.failed:
            return  # a subtest of it failed: pytest reports each subtest first, then the test
        if xfail:
            _outcomes[node] = "XFAIL" if report.skipped else "XPASS"
        elif report.passed:
            _outcomes[node] = "PASSED"
        elif report.failed:
            _outcomes[node] = "FAILED"
        else:
            _outcomes[node] = "SKIPPED"
    elif report.when == "setup":
        if report.failed:
            _outcomes[node] = "ERROR"
        elif report.skipped:
            _outcomes[node] = "XFAIL" if xfail else "SKIPPED"
    elif report.when == "teardown" and report.failed:
        _outcomes[node] = "ERROR"


def pytest_collectreport(report):
    if report.failed and report.nodeid:
        _outcomes[report.nodeid] = "ERROR"


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("--ci-eval-report")
    if path:
        # session.exitstatus: what the session exits with (the sentinels' own plugin may have
        # given back a "no tests collected" that they hid)
        write_report(path, int(session.exitstatus), _outcomes)


def write_report(path, exit_status: int, outcomes: dict[str, str]) -> None:
    """The report file, replaced in one step."""
    data = {"version": REPORT_VERSION, "exit_status": exit_status, "tests": dict(outcomes)}
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(tmp, path)


# --- reading (the harness and ci_eval.checks) ---------------------------------------------------

MAX_REPORT_BYTES = 8 * 1024 * 1024
OUTCOMES = ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS")


class ReportError(ValueError):
    """A report file that is not what this plugin writes (too big, not JSON, wrong shape)."""


def read_report(path) -> tuple[int, dict[str, str]] | None:
    """(pytest's exit status, node id -> outcome) from a report file; None when there is no
    file (the session never finished). ReportError for anything else than what the plugin
    writes (a link, a FIFO, too big, not JSON, another shape)."""
    data = read_report_file(path, MAX_REPORT_BYTES, ReportError, "test report")
    if data is None:
        return None
    try:
        parsed = strict_json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReportError(f"the test report is not valid JSON ({exc})") from None
    tests = parsed.get("tests") if isinstance(parsed, dict) else None
    status = parsed.get("exit_status") if isinstance(parsed, dict) else None
    if (not isinstance(tests, dict) or not isinstance(status, int) or isinstance(status, bool)
            or not all(isinstance(k, str) and v in OUTCOMES for k, v in tests.items())):
        raise ReportError("the test report does not have the expected shape")
    return status, tests


def accept_report(path) -> None:
    """Take note of a report ci_eval.checks read and judged (see ACCEPTED)."""
    data = read_report_file(path, MAX_REPORT_BYTES, ReportError, "test report")
    if data is not None:
        ACCEPTED[os.path.basename(path)] = hashlib.sha256(data).hexdigest()


def accepted_report(name: str, data: bytes, accepted: dict[str, str] | None) -> str:
    """Why the harness must not read a report ("" when it may): one ci_eval.checks did not
    accept, or one changed since. accepted None: no list to hold it to (the docker runner's
    container sends none yet)."""
    if accepted is None:
        return ""
    if name not in accepted:
        return "not written by ci_eval.checks (ignored)"
    if hashlib.sha256(data).hexdigest() != accepted[name]:
        return "changed after ci_eval.checks read it (ignored)"
    return ""


# --- the tamper sentinel ------------------------------------------------------------------------

TAMPERED = "test outcomes were tampered with"


def sentinel_ids(folder: str) -> tuple[str, str]:
    """(must fail, must pass): two node ids in a folder below `folder` (outside the workspace),
    drawn at random for one session, so that no code written before it can know them."""
    location = f"{folder.rstrip('/')}/{secrets.token_hex(6)}/test_{secrets.token_hex(4)}.py"
    return (f"{location}::test_{secrets.token_hex(6)}",
            f"{location}::test_{secrets.token_hex(6)}")


def sentinel_problem(exit_status: int, outcomes: dict[str, str], must_fail: str,
                     must_pass: str) -> str:
    """Why the report shows tampering ("" when the must-fail test FAILED and the must-pass one
    PASSED, as an untouched pytest reports them). A session that never got to run tests (a
    usage or internal error: exit 3, 4) has neither, and is no pass either."""
    failing, passing = outcomes.get(must_fail), outcomes.get(must_pass)
    if failing == "FAILED" and passing == "PASSED":
        return ""
    if failing is None and passing is None and exit_status not in (0, 1):
        return ""
    if failing is None or passing is None:
        return (f"{TAMPERED}: ci-eval's sentinel tests are missing from the report (a session "
                "that ended early, e.g. by pytest.exit(), leaves them out)")
    return (f"{TAMPERED}: ci-eval's sentinel test that must fail reported {failing}, the one "
            f"that must pass {passing}")
