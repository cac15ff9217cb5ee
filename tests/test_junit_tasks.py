"""Tasks beyond Python (issue #25, item 1): a JavaScript golden task whose checks run node's own
test runner and read each test's outcome from the JUnit report it writes to a path ci-eval chose
outside the workspace (ci_eval.checks.run_junit_tests, ci_eval/run/checks/junit_report.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from ci_eval.importers.base import file_patch
from ci_eval.run.checks.junit_report import MAX_DEPTH, JUnitError, parse_junit

pytestmark = pytest.mark.skipif(shutil.which("node") is None,
                                reason="node is not installed (.ci/run installs nodejs)")

UNITS = ("'use strict';\n"
         "const FACTORS = { s: 1, m: 60 };\n"
         "function seconds(text) {\n"
         "  const match = /^(\\d+)([smh])$/.exec(text);\n"
         "  if (!match) throw new Error('bad duration: ' + text);\n"
         "  return Number(match[1]) * FACTORS[match[2]];\n"
         "}\n"
         "module.exports = { seconds };\n")
FIXED = UNITS.replace("{ s: 1, m: 60 }", "{ s: 1, m: 60, h: 3600 }")
WRONG = UNITS.replace("{ s: 1, m: 60 }", "{ s: 1, m: 60, h: 60 }")
TESTS = ("'use strict';\n"
         "const { describe, test } = require('node:test');\n"
         "const assert = require('node:assert');\n"
         "const { seconds } = require('../src/units.js');\n"
         "describe('seconds', () => {\n"
         "  test('reads hours', () => assert.strictEqual(seconds('2h'), 7200));\n"
         "  test('reads minutes', () => assert.strictEqual(seconds('3m'), 180));\n"
         "  test('refuses words', () => assert.throws(() => seconds('soon')));\n"
         "});\n")
HOURS, MINUTES, WORDS = "seconds > reads hours", "seconds > reads minutes", "seconds > refuses words"
SKIPPED = TESTS.replace("test('reads hours', ()", "test('reads hours', { skip: true }, ()")
# The code under test forges the report: it finds the destination in its runner's command line
# and puts an all-passing JUnit file there in one rename (node keeps writing to the old file),
# and leaves another in the workspace where a careless harness would look.
FORGED_XML = ("<?xml version=\"1.0\"?><testsuites><testsuite name=\"seconds\">"
              "<testcase name=\"reads hours\"/><testcase name=\"reads minutes\"/>"
              "<testcase name=\"refuses words\"/></testsuite></testsuites>")
FORGER = UNITS + (
    "const fs = require('fs');\n"
    f"const forged = {json.dumps(FORGED_XML)};\n"
    "fs.writeFileSync('junit.xml', forged);\n"
    "for (const pid of [process.pid, process.ppid]) {\n"
    "  const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\\0');\n"
    "  for (const arg of argv) {\n"
    "    const dest = arg.startsWith('--test-reporter-destination=') && arg.split('=')[1];\n"
    "    if (dest) { fs.writeFileSync(dest + '.tmp', forged); fs.renameSync(dest + '.tmp', dest); }\n"
    "  }\n"
    "}\n")
# Issue #31 item 2: every declared test PASSED plus one undeclared failure, so that the report
# agrees with node's exit 1 (a wrong fix fails "reads hours" for real).
UNDECLARED_XML = FORGED_XML.replace(
    "</testsuite>", "<testcase name=\"forged\"><failure message=\"x\"/></testcase></testsuite>")
FORGER_UNDECLARED = WRONG + FORGER[len(UNITS):].replace(
    f"const forged = {json.dumps(FORGED_XML)};", f"const forged = {json.dumps(UNDECLARED_XML)};")
# ... or the forged report put beside the real one, or the real one hard-linked to keep a hand
# on it after the runner is done
FORGER_BESIDE = WRONG + FORGER[len(UNITS):].replace(
    "fs.writeFileSync(dest + '.tmp', forged); fs.renameSync(dest + '.tmp', dest);",
    "fs.writeFileSync(require('path').dirname(dest) + '/junit.xml', forged);")
FORGER_LINK = WRONG + FORGER[len(UNITS):].replace(
    "fs.writeFileSync(dest + '.tmp', forged); fs.renameSync(dest + '.tmp', dest);",
    "fs.writeFileSync(dest, forged); fs.linkSync(dest, 'kept.xml');")
CHECKS = ("from ci_eval.checks import declared_tests, main, run_junit_tests\n\n"
          "NODE_TEST = ['node', '--test', '--test-reporter=junit',\n"
          "             '--test-reporter-destination={report}', 'test/']\n\n"
          "main(lambda: run_junit_tests(NODE_TEST, *declared_tests()))\n")


def _patch(before: str, after: str, path: str = "src/units.js") -> str:
    return file_patch({path: before.encode()}, {path: after.encode()})


def units_task(make_task, root, negatives=None):
    return make_task(
        root, "task-001-js-hours",
        prompt="seconds('2h') throws: hours are missing.\n",
        checks=CHECKS,
        metadata={"fail_to_pass": [HOURS], "pass_to_pass": [MINUTES, WORDS]},
        repo_state={"src/units.js": UNITS, "test/units.test.js": TESTS},
        solution={"fix.patch": _patch(UNITS, FIXED)},
        negatives=negatives)


def test_verify_shows_the_table_and_refuses_wrong_skipped_and_forged(cli, repo_root, make_task):
    units_task(make_task, repo_root, negatives={
        "wrong-factor.patch": _patch(UNITS, WRONG),
        "skip-the-test.patch": _patch(TESTS, SKIPPED, "test/units.test.js"),
        "forge-the-report.patch": _patch(UNITS, FORGER),
        "forge-an-undeclared-failure.patch": _patch(UNITS, FORGER_UNDECLARED),
        "forge-beside-the-report.patch": _patch(UNITS, FORGER_BESIDE),
        "forge-and-link-the-report.patch": _patch(UNITS, FORGER_LINK)})
    result = cli("verify", cwd=repo_root, timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ok      task-001-js-hours: ")
    assert lines[1].split() == ["BASE", "GOLDEN", "TEST"]
    assert [line.split(None, 2) for line in lines[2:5]] == [
        ["FAIL", "PASS", HOURS], ["PASS", "PASS", MINUTES], ["PASS", "PASS", WORDS]]


def _checks_on(task, tmp_path, source: dict[str, str]):
    """checks.py run by hand on a workspace holding `source`: (exit code, what it said)."""
    workspace = tmp_path / "workspace"
    shutil.copytree(task / "repo-state", workspace)
    for rel, text in source.items():
        (workspace / rel).write_text(text)
    env = {**os.environ, "CI_EVAL_TASK_DIR": str(task),
           "PYTHONPATH": os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(
               os.path.abspath(__file__))), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(task / "checks.py")], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    return done.returncode, done.stderr, workspace


@pytest.mark.parametrize("source, reason", [
    ({"src/units.js": FIXED}, None),
    ({"src/units.js": WRONG}, f"{HOURS} FAILED (fail_to_pass)"),
    ({"test/units.test.js": SKIPPED}, f"{HOURS} SKIPPED (fail_to_pass)"),
    ({"src/units.js": FORGER}, "node exited 1 but its JUnit report shows no failing test"),
    ({"src/units.js": FORGER_UNDECLARED}, "node exited 1 although the named tests passed"),
    ({"src/units.js": FORGER_BESIDE}, "the JUnit report's folder holds 'junit.xml' besides"),
    ({"src/units.js": FORGER_LINK}, "the JUnit report is not a plain file with one link"),
], ids=["fixed", "wrong", "skipped", "forged", "undeclared", "beside", "linked"])
def test_the_reasons(make_task, repo_root, tmp_path, source, reason):
    task = units_task(make_task, repo_root)
    code, said, workspace = _checks_on(task, tmp_path, source)
    if reason is None:
        assert code == 0, said
        return
    assert code == 1, said
    assert reason in said
    if source.get("src/units.js") == FORGER:
        assert (workspace / "junit.xml").read_text() == FORGED_XML  # it wrote, it did not count


def test_a_runner_that_writes_no_report_is_no_evidence(make_task, repo_root, tmp_path):
    task = units_task(make_task, repo_root)
    (task / "checks.py").write_text(
        "from ci_eval.checks import declared_tests, main, run_junit_tests\n\n"
        "main(lambda: run_junit_tests(['node', '--test', 'test/'], *declared_tests(),\n"
        "                             report_env='JUNIT_REPORT_PATH'))\n")
    code, said, _ = _checks_on(task, tmp_path, {"src/units.js": FIXED})
    assert code == 1
    assert "no evidence the tests ran (node exit 0, no JUnit report)" in said


def test_a_command_without_the_report_path_is_the_authors_error(make_task, repo_root, tmp_path):
    task = units_task(make_task, repo_root)
    (task / "checks.py").write_text(CHECKS.replace("{report}", "out.xml"))
    code, said, _ = _checks_on(task, tmp_path, {"src/units.js": FIXED})
    assert code != 0 and "FAIL:" not in said  # a broken checks.py, never a run's fail
    assert 'ValueError: run_junit_tests: put "{report}" in the command or name report_env' in said


# --- the parser's limits (hostile reports) ------------------------------------------------------


@pytest.mark.parametrize("document, refusal", [
    ((b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
      b'<testsuites><testcase name="&b;"/></testsuites>'), "document type or entity declaration"),
    (b'<testsuites><testcase name="x"/></testsuites><!doctype late>', "document type"),
    ('<?xml version="1.0" encoding="UTF-16"?><testsuites/>'.encode("utf-16"), "not UTF-8"),
    (b'<?xml version="1.0" encoding="latin-1"?><testsuites/>', "declares encoding 'latin-1'"),
    (b"<testsuites>" + b"<testsuite>" * (MAX_DEPTH + 1), f"deeper than {MAX_DEPTH}"),
    (b"<html><testcase name='x'/></html>", "root is <html>"),
    (b"<testsuites><testcase name='x'/>", "not well-formed"),
], ids=["entities", "late-doctype", "utf-16", "latin-1", "depth", "root", "truncated"])
def test_hostile_reports_are_refused(document, refusal):
    with pytest.raises(JUnitError, match=refusal.replace("(", r"\(")):
        parse_junit(document)


def test_a_duplicate_id_keeps_its_worst_outcome_and_outcomes_map_as_pytests():
    outcomes = parse_junit(
        b"<testsuites><testsuite name='s'><testcase name='a'><failure/></testcase>"
        b"<testcase name='a'/><testcase name='b'><error/></testcase>"
        b"<testcase name='c'><skipped/></testcase></testsuite>"
        b"<testcase classname='pkg.T' name='d'/></testsuites>")
    assert outcomes == {"s > a": "FAILED", "s > b": "ERROR", "s > c": "SKIPPED", "d": "PASSED"}
    assert parse_junit(b"<testsuite name='pytest'><testcase classname='tests.test_x' "
                       b"name='test_y'/></testsuite>", classname=True) == {
        "tests.test_x::test_y": "PASSED"}


def test_a_rubric_tests_criterion_reads_the_junit_outcomes(cli, repo_root, make_task):
    task = units_task(make_task, repo_root)
    (task / "rubric.yaml").write_text(
        "pass_threshold: 100\ncriteria:\n"
        "  - {id: hours, kind: tests, tests: ['seconds > reads hours'], weight: 1,"
        " rationale: the bug}\n")
    result = cli("verify", "--json", cwd=repo_root, timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    rubric = {row["state"]: row for row in json.loads(result.stdout)["tasks"][0]["rubric"]}
    assert rubric["solution/"]["score"] == 100 and rubric["solution/"]["verdict"] == "PASS"
    assert rubric["untouched repo-state"]["score"] == 0


# Issue #36, item 12: jest + jest-junit. Its default naming gives "parseDuration > parseDuration
# hours reads hours" where jest prints "parseDuration › hours › reads hours". This is the report
# jest 29.7 + jest-junit 16.0 wrote (failure texts cut) for two files, each with a
# `describe('parseDuration')` holding a test 'reads seconds', under the naming classname="jest"
# sets (JEST_ENV), with jest's own printout of the failures: `● parseDuration › hours › reads
# hours` and `● parseDuration › reads seconds`.
JEST_REPORT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="4" failures="2" errors="0" time="4.21">
  <testsuite name="test/a.test.js" errors="0" failures="1" skipped="0" tests="3">
    <testcase classname="parseDuration › hours" name="reads hours" time="0.067">
      <failure>Error: expect(received).toBe(expected)</failure>
    </testcase>
    <testcase classname="parseDuration" name="reads seconds" time="0.001">
    </testcase>
    <testcase classname="" name="top level" time="0.037">
    </testcase>
  </testsuite>
  <testsuite name="test/b.test.js" errors="0" failures="1" skipped="0" tests="1">
    <testcase classname="parseDuration" name="reads seconds" time="0.002">
      <failure>Error: expect(received).toBe(expected)</failure>
    </testcase>
  </testsuite>
</testsuites>
"""


def test_jest_ids_are_the_file_and_what_jest_prints():
    from ci_eval.run.checks.junit_report import JEST_ENV

    assert parse_junit(JEST_REPORT.encode(), classname="jest") == {
        "test/a.test.js > parseDuration › hours › reads hours": "FAILED",
        "test/a.test.js > parseDuration › reads seconds": "PASSED",
        "test/a.test.js > top level": "PASSED",
        "test/b.test.js > parseDuration › reads seconds": "FAILED",  # not merged with a's
    }
    assert JEST_ENV == {"JEST_JUNIT_SUITE_NAME": "{filepath}",
                        "JEST_JUNIT_CLASSNAME": "{classname}", "JEST_JUNIT_TITLE": "{title}",
                        "JEST_JUNIT_ANCESTOR_SEPARATOR": " › "}


def test_jest_naming_reaches_the_runner_and_env_extends_the_environment(make_task, repo_root,
                                                                        tmp_path):
    """classname="jest" hands jest-junit its naming; env= adds to the checks' environment
    (issue #36, item 13: it once replaced it, PATH included). A node script stands in for jest
    here: it writes a report named by those variables, and fails unless PATH is kept."""
    runner = ("const fs = require('fs');\n"
              "const e = process.env;\n"
              "if (!e.PATH || e.EXTRA !== 'yes') process.exit(7);\n"
              "const name = e.JEST_JUNIT_SUITE_NAME === '{filepath}' ? 'test/a.test.js' : 'x';\n"
              "const sep = e.JEST_JUNIT_ANCESTOR_SEPARATOR;\n"
              "fs.writeFileSync(e.JEST_JUNIT_OUTPUT_FILE, `<testsuites><testsuite name=\"${name}\">"
              "<testcase classname=\"seconds${sep}units\" name=\"reads hours\"/>"
              "</testsuite></testsuites>`);\n")
    task = units_task(make_task, repo_root)
    (task / "repo-state" / "fake-jest.js").write_text(runner)
    (task / "checks.py").write_text(
        "from ci_eval.checks import main, run_junit_tests\n\n"
        "main(lambda: run_junit_tests(['node', 'fake-jest.js'],\n"
        "    ['test/a.test.js > seconds › units › reads hours'],\n"
        "    report_env='JEST_JUNIT_OUTPUT_FILE', classname='jest', env={'EXTRA': 'yes'}))\n")
    code, said, _ = _checks_on(task, tmp_path, {"src/units.js": FIXED})
    assert code == 0, said
