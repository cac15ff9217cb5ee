"""eval.yml itself, run by act on this host (no Docker): plan -> 2 shards with the reference
agent -> report, against the loopback GitHub API; the comment that arrived and the jobs' results.

Each act run takes 15-40 s on the 2-core machine (3 jobs, 10-20 agent runs and their checks).
What act does not run: actions/setup-python, upload-artifact and download-artifact (remote
actions; replaced by tests/act_stubs through --local-repository, with setup-python "false" so
the host's Python is used), and actions/checkout (act copies the repository instead).
"""

from __future__ import annotations

import shutil

import act_helpers
from act_helpers import REPO_ROOT, REPOSITORY, commit_repo, job_results, pr_event, run_act
from test_github_gate import BROKEN_SOLUTION, write_baseline

from ci_eval.render.compare import COMMENT_MARKER
from ci_eval.results import history

api = act_helpers.api  # the loopback GitHub fixture, shared by the act tests

TASKS = ("task-001-alpha", "task-002-beta")


def project_repo(root, make_task, *, broken: bool):
    """A repository using ci-eval's own action.yml and eval.yml, with two small tasks."""
    shutil.copy(REPO_ROOT / "action.yml", root / "action.yml")
    (root / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(REPO_ROOT / ".github" / "workflows" / "eval.yml", root / ".github" / "workflows")
    for name in TASKS:
        make_task(root, name)
    write_baseline(root, list(TASKS))
    if broken:  # the change under test breaks task-002: every run fails its checks now
        (root / "tasks" / TASKS[1] / "solution" / "solve.sh").write_text(BROKEN_SOLUTION)
    commit_repo(root)
    return root


def assert_jobs(output: str, report: str):
    results = job_results(output)
    assert results.get("plan") == "succeeded", output[-4000:]
    shards = {job: r for job, r in results.items() if job.startswith("shard")}
    assert len(shards) == 2 and set(shards.values()) == {"succeeded"}, results
    assert results.get("report") == report, output[-4000:]


# pip-packages "pip": the extra-packages step runs for real, as a no-op install (already there),
# so the test never needs the network.
VARIABLES = {"CI_EVAL_SHARDS": "2", "CI_EVAL_PIP_PACKAGES": "pip"}


def test_eval_workflow_passes_and_comments(repo_root, make_task, api, tmp_path):
    repo = project_repo(repo_root, make_task, broken=False)
    done = run_act(repo, api, tmp_path / "act", event=pr_event(7), variables=VARIABLES)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert_jobs(done.stdout, "succeeded")
    [posted] = api.comments_on(REPOSITORY, 7)
    body = posted["body"]
    assert body.startswith(COMMENT_MARKER) and "✅ ci-eval: no regressions — 2 unchanged" in body
    assert "| task-001-alpha | unchanged | 1.00 (40/40) | 1.00 (5/5) |" in body
    assert "| task-002-beta | unchanged |" in body
    assert posted["user"] == "github-actions[bot]"
    uploaded = sorted(p.name for p in (tmp_path / "act" / "artifacts").iterdir()
                      if p.name != "cache")  # the stand-in Actions cache, no artifact
    assert uploaded == ["ci-eval-dashboard", "results-shard-1", "results-shard-2"]


def test_eval_workflow_with_a_regression_ends_red(repo_root, make_task, api, tmp_path):
    repo = project_repo(repo_root, make_task, broken=True)
    done = run_act(repo, api, tmp_path / "act", event=pr_event(7), variables=VARIABLES)
    assert done.returncode != 0
    assert_jobs(done.stdout, "failed")
    assert "::error title=ci-eval::task-002-beta regressed" in done.stdout
    [posted] = api.comments_on(REPOSITORY, 7)
    assert "❌ ci-eval: 1 of 2 task(s) fail the gate" in posted["body"]
    assert "| task-002-beta | regressed | 1.00 (40/40) | 0.00 (0/" in posted["body"]


def test_a_push_to_the_default_branch_uploads_the_run_summary(repo_root, make_task, api,
                                                             tmp_path):
    repo = project_repo(repo_root, make_task, broken=False)
    event = {"ref": "refs/heads/main", "after": "0" * 40,
             "repository": {"full_name": REPOSITORY, "default_branch": "main"}}
    done = run_act(repo, api, tmp_path / "act", event=event, variables=VARIABLES)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert_jobs(done.stdout, "succeeded")
    uploaded = tmp_path / "act" / "artifacts"
    assert sorted(p.name for p in uploaded.iterdir() if p.name != "cache") == [
        "ci-eval-dashboard", "ci-eval-history", "results-shard-1", "results-shard-2"]
    [summary_file] = (uploaded / "ci-eval-history").iterdir()
    summary = history.read_summary(summary_file)
    assert sorted(summary.tasks) == list(TASKS) and summary.agent == "reference"
    assert all(t.status == "pass" and t.gate == "unchanged" for t in summary.tasks.values())
    assert summary.ci_run and summary.ci_run["ref"] == "main"
    assert api.comments_on(REPOSITORY, 7) == []


def test_fork_pull_request_is_skipped_not_red(repo_root, make_task, api, tmp_path):
    repo = project_repo(repo_root, make_task, broken=True)
    done = run_act(repo, api, tmp_path / "act", event=pr_event(7, head_repo="mallory/widgets"),
                   variables=VARIABLES)
    assert done.returncode == 0, done.stdout[-4000:]
    assert job_results(done.stdout) == {"plan": "succeeded"}
    assert "ci-eval skipped: pull request #7 comes from the fork mallory/widgets" in done.stdout
    assert api.comments_on(REPOSITORY, 7) == []
