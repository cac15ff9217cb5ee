"""Issue 36 item 12 with a real jest (30.5.2) and jest-junit (16.0.0), installed once into the
test cache (tests/real_jest.py): under the naming classname="jest" sets (JEST_ENV), each test's
id is its file and exactly what jest prints for it (`● parseDuration › hours › reads hours`
under `FAIL test/units.test.js`), and two files' tests of the same describe and name stay two
ids."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
import real_jest

from ci_eval.run.checks.junit_report import JEST_ENV, JEST_IDS
from ci_eval.run.checks.junit_run import run_junit

UNITS = """describe('parseDuration', () => {
  describe('hours', () => {
    test('reads hours', () => { expect(1).toBe(2); });
    test('reads minutes', () => { expect(1).toBe(1); });
  });
});
"""
OTHER = """describe('parseDuration', () => {
  describe('hours', () => {
    test('reads hours', () => { expect(1).toBe(1); });
  });
  test('reads seconds', () => { expect(1).toBe(2); });
});
"""


@pytest.fixture
def jest_project(tmp_path):
    prefix = real_jest.installed()
    if prefix is None or shutil.which("node") is None:
        pytest.skip(f"jest is not installed at {real_jest.PREFIX} (python3 tests/real_jest.py "
                    "install; .ci/run does) or node is missing")
    project = tmp_path / "project"
    (project / "test").mkdir(parents=True)
    (project / "package.json").write_text('{"name": "durations", "private": true}\n')
    (project / "test" / "units.test.js").write_text(UNITS)
    (project / "test" / "other.test.js").write_text(OTHER)
    modules = prefix / "node_modules"
    argv = ["node", str(modules / "jest" / "bin" / "jest.js"), "--ci", "--runInBand",
            "--reporters=default", f"--reporters={modules / 'jest-junit'}"]
    return project, argv


def printed_failures(output: str) -> set[tuple[str, str]]:
    """(file, test) for each `● a › b › c` jest prints under its `FAIL file` line."""
    found, current = set(), None
    for line in output.splitlines():
        failed_file = re.match(r"\s*FAIL\s+(\S+)", line)
        if failed_file:
            current = failed_file.group(1)
        bullet = re.match(r"\s*● (.+?)\s*$", line)
        if bullet and current and " › " in bullet.group(1):
            found.add((current, bullet.group(1)))
    return found


def test_jest_ids_are_the_file_and_what_jest_prints(jest_project, tmp_path):
    project, argv = jest_project
    printed = subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=300,
                             env={**real_jest_env(), "JEST_JUNIT_OUTPUT_DIR": str(tmp_path)})
    assert printed.returncode == 1, printed.stdout + printed.stderr
    jest_says = printed_failures(printed.stdout + printed.stderr)
    assert jest_says == {("test/units.test.js", "parseDuration › hours › reads hours"),
                         ("test/other.test.js", "parseDuration › reads seconds")}, printed.stderr
    reports = tmp_path / "reports"
    reports.mkdir()
    run = run_junit(argv, reports, report_env="JEST_JUNIT_OUTPUT_FILE", env=JEST_ENV,
                    classname=JEST_IDS, cwd=project, timeout=300)
    assert run.exit_code == 1 and run.outcomes is not None, run
    assert run.outcomes == {
        "test/units.test.js > parseDuration › hours › reads hours": "FAILED",
        "test/units.test.js > parseDuration › hours › reads minutes": "PASSED",
        "test/other.test.js > parseDuration › hours › reads hours": "PASSED",
        "test/other.test.js > parseDuration › reads seconds": "FAILED"}
    failed = {tuple(i.split(" > ", 1)) for i, outcome in run.outcomes.items() if outcome == "FAILED"}
    assert failed == jest_says


def test_jest_junit_s_default_naming_matches_nothing_jest_prints(jest_project, tmp_path):
    """Why classname="jest" sets the naming: jest-junit's defaults repeat the describe and
    drop the file, so the two files' `reads hours` are one id."""
    project, argv = jest_project
    reports = tmp_path / "reports"
    reports.mkdir()
    run = run_junit(argv, reports, report_env="JEST_JUNIT_OUTPUT_FILE", classname=JEST_IDS,
                    cwd=project, timeout=300)
    assert run.outcomes is not None, run
    assert "parseDuration › hours › reads hours" not in {i.split(" > ", 1)[-1] for i in run.outcomes}
    assert len(run.outcomes) == 3, run.outcomes


def real_jest_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("JEST_JUNIT_")} | JEST_ENV
