"""verify's check runs share one pool (-j): the negatives of a task are judged at once, tasks
report in their order, and the verdicts are those of -j 1."""

from __future__ import annotations

import json
import time

from harness_helpers import cli, write_task

SLOW_CHECKS = ('import time\ntime.sleep(3)\n'
               'from ci_eval.checks import file_equals, main\n'
               'main(file_equals("greet.txt", "hello\\n"))\n')


def test_the_runs_of_one_task_overlap(tmp_path):
    negatives = {f"wrong-{n}.sh": f"echo no{n} > greet.txt\n" for n in range(3)}
    write_task(tmp_path, checks=SLOW_CHECKS, negatives=negatives)
    started = time.monotonic()
    proc = cli("verify", "--json", "-j", "7", cwd=tmp_path)
    wall = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    task = json.loads(proc.stdout)["tasks"][0]
    assert task["valid"] and task["states_checked"] == 5
    # 7 check runs of at least 3 s each: run one after another they take 21 s or more
    assert task["seconds"] >= 21
    assert wall < task["seconds"] / 2, (wall, task["seconds"])


def test_verdicts_and_their_order_are_those_of_one_job(tmp_path):
    write_task(tmp_path, negatives={"hallo.sh": "echo hallo > greet.txt\n",
                                    "actually-right.sh": "echo hello > greet.txt\n"})
    write_task(tmp_path, "task-002-already-passes", files={"greet.txt": "hello\n"},
               negatives={"a.sh": "echo a > greet.txt\n"})
    flaky = ("import os, sys\n"
             "sys.exit(0 if os.environ['CI_EVAL_WORKSPACE'].endswith('-0') else 1)\n")
    write_task(tmp_path, "task-003-flaky", checks=flaky)
    write_task(tmp_path, "task-004-fine", negatives={"b.sh": "echo b > greet.txt\n"})
    reports = {}
    for jobs in ("1", "4"):
        proc = cli("verify", "--json", "-j", jobs, cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        reports[jobs] = [{k: v for k, v in t.items() if k != "seconds"}
                         for t in json.loads(proc.stdout)["tasks"]]
    assert reports["4"] == reports["1"]
    assert [t["task"] for t in reports["4"]] == ["task-001-greet", "task-002-already-passes",
                                                  "task-003-flaky", "task-004-fine"]
    problems = {t["task"]: t["problems"] for t in reports["4"]}
    assert problems["task-001-greet"] == [
        "negatives/actually-right.sh: checks pass, expected fail"]
    assert problems["task-002-already-passes"] == [
        "untouched repo-state: checks pass, expected fail"]
    assert "nondeterministic checks" in problems["task-003-flaky"][0]
    assert problems["task-004-fine"] == []
    lines = cli("verify", "-j", "4", cwd=tmp_path).stdout.splitlines()
    assert [line.split()[1] for line in lines[:4]] == [
        "task-001-greet:", "task-002-already-passes:", "task-003-flaky:", "task-004-fine:"]


def test_a_state_whose_workspace_cannot_be_built_is_one_problem(tmp_path):
    broken = "--- a/nothere.txt\n+++ b/nothere.txt\n@@ -1 +1 @@\n-x\n+y\n"
    write_task(tmp_path, negatives={"broken.patch": broken, "fine.sh": "echo no > greet.txt\n"})
    proc = cli("verify", "--json", "-j", "3", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    task = json.loads(proc.stdout)["tasks"][0]
    assert len(task["problems"]) == 1, task["problems"]
    assert task["problems"][0].startswith("negatives/broken.patch: workspace setup failed")
    assert task["states_checked"] == 3
