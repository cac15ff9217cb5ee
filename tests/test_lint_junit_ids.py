"""The `junit-ids` rule (issue 36 item 12): jest run through run_junit_tests without
classname="jest" is named by validate's lint and by verify."""

from __future__ import annotations

import ast

from ci_eval.tasks.lint import lint_source
from ci_eval.tasks.lint_junit import checks_py_jest_problems, unstable_jest_ids

HEAD = "from ci_eval.checks import main, run_junit_tests\n"


def rules(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in lint_source(source) if f.rule == "junit-ids"]


def test_jest_without_the_naming_is_found_in_every_spelling():
    for argv in ('["npx", "jest", "--ci"]', '["node_modules/.bin/jest"]',
                 '["node", "node_modules/jest/bin/jest.js", "--ci"]', '("jest",)'):
        source = HEAD + f"main(lambda: run_junit_tests({argv}, ['a > b'], " \
                        "report_env='JEST_JUNIT_OUTPUT_FILE'))\n"
        assert rules(source) == [(2, "junit-ids")], argv
    aliased = ("from ci_eval.checks import main, run_junit_tests as rj\n"
               "main(lambda: rj(['npx', 'jest'], ['a > b'], classname=True))\n")
    assert rules(aliased) == [(2, "junit-ids")]


def test_the_naming_or_another_runner_is_fine():
    fine = [HEAD + "main(lambda: run_junit_tests(['npx', 'jest'], ['f > a › b'], "
                   "report_env='JEST_JUNIT_OUTPUT_FILE', classname='jest'))\n",
            HEAD + "main(lambda: run_junit_tests(['node', '--test', '--test-reporter=junit', "
                   "'--test-reporter-destination={report}'], ['a > b']))\n",
            HEAD + "main(lambda: run_junit_tests(['npx', 'jest-junit-merge'], ['a > b']))\n"]
    for source in fine:
        assert rules(source) == [], source


def test_verify_names_it_with_the_line(tmp_path):
    checks = tmp_path / "checks.py"
    checks.write_text(HEAD + "\nmain(lambda: run_junit_tests(['npx', 'jest'], ['a > b']))\n")
    [problem] = checks_py_jest_problems(checks)
    assert problem.startswith("checks.py:3: run_junit_tests runs jest without classname=")
    checks.write_text("def broken(:\n")
    assert checks_py_jest_problems(checks) == []
    assert checks_py_jest_problems(tmp_path / "missing.py") == []
    assert unstable_jest_ids(ast.parse("run_junit_tests()\n")) == []
