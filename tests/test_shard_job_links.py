"""The comment links the job of a shard that crashed or failed (GitHub's jobs API,
GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs through PyGithub's WorkflowRun.jobs(),
served by tests/fake_github.py in its wire format), and falls back to the run's link whenever
the jobs cannot be listed: the report never fails for it."""

from __future__ import annotations

import json

import pytest
from fake_github import fake_github, github_pr_7  # noqa: F401 - the fixtures
from test_github_gate import REPO, actions_env
from test_report_plan import planned, planned_once  # noqa: F401 - the fixtures

from ci_eval.github.context import Context
from ci_eval.github.jobs import ShardJob, match_shard_jobs, shard_jobs

RUN_ID = 4242
RUN_URL = f"https://github.com/{REPO}/actions/runs/{RUN_ID}"


def test_jobs_are_matched_to_shards_by_the_name_eval_yml_gives_them():
    url = "https://github.com/acme/widgets/actions/runs/9/job/"
    jobs = [("plan", url + "1", "success"), ("shard 1/3", url + "2", "success"),
            ("shard 2/3", url + "3", "failure"), ("shard 2/3", url + "4", "success"),  # a re-run
            ("ci / shard 3/3", url + "5", "cancelled"),  # called as a reusable workflow
            ("shard 1/2", url + "6", "failure"),  # another plan's count
            ("shard 4/3", url + "7", "failure"), ("myshard 1/3", url + "8", "failure"),
            ("shard 1/3", "javascript:alert(1)", "failure"),  # not a page: the last good kept
            ("report", url + "9", None)]
    assert match_shard_jobs(jobs, 3) == {1: ShardJob(url + "2", "success"),
                                         2: ShardJob(url + "4", "success"),
                                         3: ShardJob(url + "5", "cancelled")}
    assert [j.failed for j in match_shard_jobs(jobs, 3).values()] == [False, False, True]
    assert match_shard_jobs([("shard 1/1", url + "1) ![x](https://evil", "failure")], 1) == {}


def test_outside_a_workflow_run_nothing_is_asked_and_nothing_said():
    """No run id (a local gate --plan): no run to link either, so no problem to print."""
    assert shard_jobs(Context(repository=REPO), 2) == ({}, "")
    assert shard_jobs(Context(run_id=str(RUN_ID)), 2) == ({}, "no repository (GITHUB_REPOSITORY)")


@pytest.fixture
def github(github_pr_7):
    return github_pr_7


def gate(cli, root, tmp_path, github, plan):
    env = {**actions_env(tmp_path, github), "GITHUB_RUN_ID": str(RUN_ID),
           "GITHUB_SERVER_URL": "https://github.com"}
    done = cli("gate", "--plan", plan, cwd=root, env=env)
    [posted] = github.comments_on(REPO, 7)
    return done, posted["body"]


def test_a_missing_shard_links_its_job_and_a_failed_one_is_named_in_the_footer(
        planned, cli, github, tmp_path):  # noqa: F811
    root, plan = planned
    plan_url, shard_1, shard_2, report = github.add_jobs(REPO, RUN_ID, [
        ("plan", "success"), ("shard 1/2", "success"), ("shard 2/2", "failure"),
        ("report", None)])
    done, body = gate(cli, root, tmp_path, github, plan)
    assert done.returncode == 1, done.stderr
    tasks = len(json.loads(plan)["shards"]["2"])
    assert (f"Shard 2/2 uploaded no results (its job failed or was cancelled before the upload): "
            f"its {tasks} task(s) are inconclusive: {shard_2}") in body
    assert f"[workflow run]({RUN_URL})" in body and f"[shard 2/2]({shard_2}) ended failure" in body
    assert shard_1 not in body and plan_url not in body and report not in body
    assert github.calls("GET", rf"/actions/runs/{RUN_ID}/jobs")


@pytest.mark.parametrize("answer", [403, 404, 500])
def test_when_the_jobs_cannot_be_listed_the_run_is_linked(answer, planned, cli, github,
                                                          tmp_path):  # noqa: F811
    root, plan = planned
    github.add_jobs(REPO, RUN_ID, [("shard 2/2", "failure")])
    github.fail("GET", rf"/actions/runs/{RUN_ID}/jobs", answer, times=None)
    done, body = gate(cli, root, tmp_path, github, plan)
    assert done.returncode == 1, done.stderr  # the gate's verdict, whatever GitHub answered
    assert f"are inconclusive: {RUN_URL}\n" in body and "/job/" not in body
    assert "shard jobs not listed, the comment links the workflow run instead" in done.stderr


def test_a_setup_broken_shard_links_its_job(repo_root, make_task, cli, github, tmp_path):
    make_task(repo_root, "task-001-alpha")
    output = tmp_path / "plan-output"
    assert cli("plan", "--shards", "1", "--github-output", cwd=repo_root,
               env={"GITHUB_OUTPUT": str(output)}).returncode == 0
    plan = output.read_text().split("plan<<", 1)[1].splitlines()[1]
    ran = cli("run", "--agent", "claude-code", "--shard", "1/1", "--out", "results/shard-1",
              "--setup-problem-file", "results/shard-1/setup-problem.json", cwd=repo_root,
              env={"HOME": str(tmp_path)})
    assert ran.returncode == 2
    [job] = github.add_jobs(REPO, RUN_ID, [("shard 1/1", "failure")])
    done, body = gate(cli, repo_root, tmp_path, github, plan)
    assert done.returncode == 1
    assert f"> shard 1/1 ([job]({job})): agent claude-code (claude-code): ANTHROPIC_API_KEY " \
           "is not set" in body, body
