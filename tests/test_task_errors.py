"""A broken checks.py is the task's bug, never the agent's result (issue 37, items 1 and 3).

Through the CLI: a checks.py that ends without a verdict (empty, a forgotten main(...), one
that only prints) and one that crashes before anything the agent wrote could have steered it
(an import of a module that is not there, an odd exit) record `error` naming the task's bug:
never a pass, never the agent's fail, not retried. A crash after the agent's code ran or its
files were read stays the run's fail, and what the agent plants cannot turn that fail into an
error (docs/isolation.md, "Whose fault is a broken run").
"""

from __future__ import annotations

import pytest

from harness_helpers import cli, read_lines, write_task

NO_VERDICT = "task error: checks.py ran to its end without a verdict"
BROKEN = "task error: checks.py crashed before any code the task does not ship ran"


def _one_run(tmp_path, checks: str, *, agent: tuple[str, ...] = ("--agent", "noop"),
             files: dict | None = None) -> dict:
    write_task(tmp_path, checks=checks, files=files)
    proc = cli("run", "-k", "1", "--max-attempts", "3", *agent, cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    records = read_lines(tmp_path / "results" / "task-001-greet.jsonl")
    assert len(records) == 1, records  # an error of the task is not retried
    return records[0]


@pytest.mark.parametrize("checks", [
    "",
    "print('looks fine to me')\n",
    "import sys\nif len(sys.argv) > 5:\n    sys.exit(0)\n",  # the exit is never reached
])
def test_checks_without_a_verdict_are_an_error_of_the_task_even_for_a_right_answer(tmp_path,
                                                                                     checks):
    record = _one_run(tmp_path, checks, agent=("--agent", "reference"))  # solves the task
    assert record["status"] == "error" and record["passed"] is False, record
    assert record["reason"].startswith(NO_VERDICT), record["reason"]


@pytest.mark.parametrize("checks, reason", [
    ("import nonexistent_mod\n", "ModuleNotFoundError: No module named 'nonexistent_mod'"),
    ("from ci_eval.checks import main, passed\nimport nonexistent_mod\nmain(passed())\n",
     "(checks.py:2)"),
    ("import sys\nsys.exit(3)\n", "checks.py exited 3"),
    ("from ci_eval.checks import CheckResult, main\nmain(CheckResult(True))\n", "TypeError"),
])
def test_a_crash_before_anything_of_the_agent_ran_is_the_tasks_error(tmp_path, checks, reason):
    record = _one_run(tmp_path, checks)
    assert record["status"] == "error", record
    assert record["reason"].startswith(BROKEN) and reason in record["reason"], record["reason"]


def test_a_module_the_agent_plants_under_the_missing_name_changes_nothing(tmp_path):
    """The workspace is not on the checks' sys.path: the planted module is never imported,
    and the run is still the task's error, not a pass or a fail the agent chose."""
    repo = tmp_path / "repo"  # the agent's script outside it: the sandbox hides the repo
    write_task(repo, checks="import nonexistent_mod\nnonexistent_mod.judge()\n")
    agent = tmp_path / "agent.sh"
    agent.write_text("printf 'import sys\\ndef judge():\\n    sys.exit(0)\\n' > nonexistent_mod.py\n")
    cli("run", "-k", "1", "--agent-cmd", f"bash {agent}", cwd=repo)
    record = read_lines(repo / "results" / "task-001-greet.jsonl")[0]
    assert "nonexistent_mod.py" in record["diff"]
    assert record["status"] == "error" and record["reason"].startswith(BROKEN), record


CRASHES_AFTER_THE_AGENT = {
    # checks.py puts the workspace on sys.path: the agent decides what that import finds
    "workspace on sys.path": "import os, sys\nsys.path.insert(0, os.getcwd())\n"
                             "import nonexistent_mod\n",
    # a crash on the agent's malformed output is the agent's
    "reads the workspace": "import json\njson.loads(open('greet.txt').read())\n",
    "ran a process": "import subprocess, sys\nsubprocess.run(['true'])\nsys.exit(3)\n",
    "exec of text": "exec('raise ValueError(1)')\n",
}


@pytest.mark.parametrize("name", sorted(CRASHES_AFTER_THE_AGENT))
def test_a_crash_after_the_agent_could_have_steered_it_stays_the_runs_fail(tmp_path, name):
    record = _one_run(tmp_path, CRASHES_AFTER_THE_AGENT[name])
    assert record["status"] == "fail", record
    assert record["reason"].startswith("checks crashed"), record["reason"]


def test_an_agent_that_plants_a_crashing_module_on_the_checks_path_gets_a_fail(tmp_path):
    """checks.py imports the agent's module in-process; it raises: the agent's fail, as
    before, never an error that would leave the run out of the pass rate."""
    checks = ("import os, sys\nsys.path.insert(0, os.getcwd())\nimport answer\n"
              "from ci_eval.checks import main, passed\nmain(passed())\n")
    repo = tmp_path / "repo"
    write_task(repo, checks=checks, files={"answer.py": "ANSWER = 1\n"})
    agent = tmp_path / "agent.sh"
    agent.write_text("echo 'import nonexistent_mod' > answer.py\n")
    cli("run", "-k", "1", "--agent-cmd", f"bash {agent}", cwd=repo)
    record = read_lines(repo / "results" / "task-001-greet.jsonl")[0]
    assert record["status"] == "fail", record
    assert "ModuleNotFoundError" in record["reason"], record


@pytest.mark.parametrize("checks", [
    "from ci_eval.checks import file_equals, main\n\n"
    "def checks():\n    return main(file_equals('greet.txt', 'hello\\n'))\n",  # never called
    "from ci_eval.checks import file_equals\nfile_equals('greet.txt', 'hello\\n')\n",
    "import ci_eval.checks as c\nprint(c.passed())\n",
])
def test_validate_and_run_refuse_helpers_that_are_never_handed_a_verdict(tmp_path, checks):
    write_task(tmp_path, checks=checks)
    for command in (("validate",), ("run", "-k", "1", "--agent", "noop")):
        proc = cli(*command, cwd=tmp_path)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "never hands ci_eval.checks a verdict" in proc.stdout + proc.stderr
        assert "[verdict]" in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("checks", [
    "from ci_eval.checks import main, passed\n\ndef run():\n    main(passed())\n\n"
    "if __name__ == '__main__':\n    run()\n",
    "import sys\nfrom ci_eval.checks import file_equals\n"
    "sys.exit(0 if file_equals('greet.txt', 'hello\\n') else 1)\n",
    "from ci_eval import checks\nchecks.main(checks.file_equals('greet.txt', 'hello\\n'))\n",
])
def test_a_verdict_reached_through_a_function_or_sys_exit_is_valid(tmp_path, checks):
    write_task(tmp_path, checks=checks)
    proc = cli("validate", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = cli("run", "-k", "1", "--agent", "reference", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert read_lines(tmp_path / "results" / "task-001-greet.jsonl")[0]["status"] == "pass"


def test_verify_reports_checks_without_a_verdict_as_broken(tmp_path):
    write_task(tmp_path, checks="print('checked')\n")
    proc = cli("verify", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "without a verdict" in proc.stdout + proc.stderr


def test_grade_of_a_task_whose_checks_give_no_verdict_is_bad_input(tmp_path):
    """`ci-eval grade` judges a patch with the task's checks: checks that say nothing about it
    are the task's bug, exit 2 naming checks.py, never a FAIL of the patch."""
    write_task(tmp_path, checks="print('checked')\n")
    patch = tmp_path / "fix.patch"
    patch.write_text("--- a/greet.txt\n+++ b/greet.txt\n@@ -1 +1 @@\n-bye\n+hello\n")
    proc = cli("grade", "task-001-greet", "--patch", str(patch), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "checks.py" in proc.stderr and "without a verdict" in proc.stderr
    assert "Traceback" not in proc.stderr
