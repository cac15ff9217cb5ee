"""Which files of the checks' reports folder the scoring reads (run/checks/scoring.py, in
process): the JSON reports, never a dot-file (a runner's own report on its way to a JSON one,
run/checks/junit_run.py, or anything else hidden there)."""

from __future__ import annotations

import json

from ci_eval.run.checks.pytest_report import REPORT_VERSION, write_report
from ci_eval.run.checks.scoring import _test_outcomes


def test_dot_files_in_the_reports_folder_are_never_read(tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    write_report(reports / "pytest-1.json", 1, {"test_a.py::test_x": "FAILED"})
    # a JUnit run's XML, left behind as junit_run names it: not JSON, so read it would be a note
    (reports / ".junit-4242-1.xml").write_text('<?xml version="1.0"?><testsuites/>')
    # a well-formed report under a dot name: read, it would add an outcome
    (reports / ".pytest-2.json").write_text(json.dumps(
        {"version": REPORT_VERSION, "exit_status": 0, "tests": {"test_b.py::test_y": "PASSED"}}))
    assert _test_outcomes(reports) == ({"test_a.py::test_x": "FAILED"}, "")


def test_a_later_session_wins_and_an_unreadable_report_is_a_note(tmp_path):
    """The same reader without dot-files: what the test above relies on being read."""
    reports = tmp_path / "reports"
    reports.mkdir()
    write_report(reports / "pytest-1.json", 1, {"test_a.py::test_x": "FAILED"})
    write_report(reports / "pytest-2.json", 0, {"test_a.py::test_x": "PASSED",
                                                "test_b.py::test_y": "PASSED"})
    (reports / "pytest-3.json").write_text("not json")
    outcomes, note = _test_outcomes(reports)
    assert outcomes == {"test_a.py::test_x": "PASSED", "test_b.py::test_y": "PASSED"}
    assert note.startswith("pytest-3.json: the test report is not valid JSON")
