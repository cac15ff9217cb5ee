"""eval.yml run by act: a pull request that adds a task must prove it (`ci-eval verify`, the
action's mode verify in the plan job) before any agent run (issue 37, item 1).

The base commit holds two good tasks; the pull request adds a third. When that task's checks.py
gives no verdict, the plan job goes red on verify, no shard (no agent run) starts and the report
fails; a task that proves itself goes through to the shards.
"""

from __future__ import annotations

import act_helpers
from act_helpers import git, job_results, pr_event, run_act
from test_act_eval import TASKS, VARIABLES, project_repo

api = act_helpers.api  # the loopback GitHub fixture, shared by the act tests

NEW_TASK = "task-003-gamma"


def pull_request_adding(repo, make_task, checks: str | None) -> dict:
    base = git(repo, "rev-parse", "HEAD")
    make_task(repo, NEW_TASK, **({"checks": checks} if checks is not None else {}))
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "add a task")
    event = pr_event(7)
    event["pull_request"]["base"]["sha"] = base
    return event


def test_a_pull_request_adding_a_task_without_a_verdict_goes_red_on_verify(
        repo_root, make_task, api, tmp_path):
    repo = project_repo(repo_root, make_task, broken=False)
    event = pull_request_adding(repo, make_task, "print('looks fine to me')\n")
    done = run_act(repo, api, tmp_path / "act", event=event, variables=VARIABLES)
    output = done.stdout
    assert done.returncode != 0
    results = job_results(output)
    assert results.get("plan") == "failed", output[-4000:]
    assert not [job for job in results if job.startswith("shard")], results  # no agent run
    assert results.get("report") == "failed", output[-4000:]
    assert f"verifying the tasks the pull request adds or changes: {NEW_TASK}" in output
    assert "without a verdict" in output
    assert "does not prove itself" in output
    assert "Job succeeded" not in "\n".join(line for line in output.splitlines()
                                            if "shard" in line)


def test_a_pull_request_adding_a_task_that_proves_itself_goes_on_to_the_shards(
        repo_root, make_task, api, tmp_path):
    repo = project_repo(repo_root, make_task, broken=False)
    event = pull_request_adding(repo, make_task, None)
    done = run_act(repo, api, tmp_path / "act", event=event, variables=VARIABLES)
    results = job_results(done.stdout)
    assert results.get("plan") == "succeeded", done.stdout[-4000:]
    assert f"adds or changes: {NEW_TASK}" in done.stdout
    assert TASKS[0] not in done.stdout.split("adds or changes: ")[1].splitlines()[0]
    shards = {job: r for job, r in results.items() if job.startswith("shard")}
    assert shards and set(shards.values()) == {"succeeded"}, results
