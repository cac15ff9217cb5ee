"""The baseline-refresh PR: baselines recorded, a branch pushed to a local bare remote, the PR
opened through PyGithub against the loopback fake -- and updated, not duplicated, next time."""

from __future__ import annotations

import json
import subprocess

import pytest
from fake_github import FakeGitHub

from ci_eval.errors import UserError
from ci_eval.github import client, pulls

REPO = "acme/widgets"
GIT_ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
          "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(cwd, *args) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), **GIT_ID})
    return done.stdout.strip()


@pytest.fixture
def checkout(tmp_path, repo_root, make_task):
    """A repo with two tasks on main, pushed to a bare remote; and the fake GitHub that knows
    the remote (a PR can only be opened for a branch that was pushed)."""
    make_task(repo_root, "task-001-alpha")
    make_task(repo_root, "task-002-beta")
    (repo_root / ".gitignore").write_text("/results/\n")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(remote))
    git(repo_root, "init", "--quiet", "-b", "main")
    git(repo_root, "add", "-A")
    git(repo_root, "commit", "--quiet", "-m", "tasks")
    git(repo_root, "push", "--quiet", str(remote), "main")
    with FakeGitHub(git_remote=str(remote)) as fake:
        fake.add_token("ghs_bot", "github-actions[bot]", installation=True)
        yield repo_root, remote, fake


def env_for(fake):
    return {"GITHUB_API_URL": fake.url, "GITHUB_TOKEN": "ghs_bot", "GITHUB_REPOSITORY": REPO,
            "GITHUB_REF_NAME": "main", "GITHUB_SERVER_URL": "", **GIT_ID}


def dispatch(cli, root, remote, fake, k: int):
    """What baseline.yml does: shards of results, then propose-baseline."""
    ran = cli("run", "--agent", "reference", "-k", str(k), "--out", "results/shard-1", "--fresh",
              cwd=root)
    assert ran.returncode == 0, ran.stderr
    return cli("propose-baseline", "--remote", remote, cwd=root, env=env_for(fake))


def test_baseline_pr_opened_then_updated_not_duplicated(checkout, cli):
    root, remote, fake = checkout
    head_before = git(root, "rev-parse", "HEAD")
    first = dispatch(cli, root, remote, fake, 3)
    assert first.returncode == 0, first.stderr
    assert "opened pull request #1" in first.stdout
    pulls_now = fake.pulls_of(REPO)
    assert len(pulls_now) == 1
    pr = pulls_now[0]
    assert pr["head"]["ref"] == "ci-eval/baseline-refresh" and pr["base"]["ref"] == "main"
    assert "| task-001-alpha | — (new) | 1.00 (3/3) | — | — → gated |" in pr["body"]
    assert "wrote baseline.json: 2 added" in pr["body"]
    assert str(root) not in pr["body"]  # the runner's absolute path means nothing there
    branch_commit = git(remote, "rev-parse", "refs/heads/ci-eval/baseline-refresh")
    assert git(root, "rev-parse", "HEAD") == head_before  # the checkout's branch is untouched
    assert git(root, "diff", "--name-only", head_before, branch_commit) == "baseline.json"
    pushed = json.loads(git(remote, "show", f"{branch_commit}:baseline.json"))
    assert pushed["tasks"]["task-001-alpha"]["runs"] == 3

    second = dispatch(cli, root, remote, fake, 4)
    assert second.returncode == 0, second.stderr
    assert "updated pull request #1" in second.stdout
    assert len(fake.pulls_of(REPO)) == 1
    assert "1.00 (4/4)" in fake.pulls_of(REPO)[0]["body"]
    assert git(remote, "rev-parse", "refs/heads/ci-eval/baseline-refresh") != branch_commit
    assert len(fake.calls("POST", r"/pulls$")) == 1


def test_not_permitted_to_create_pull_requests_names_the_setting(checkout, cli,
                                                                 assert_bad_input):
    root, remote, fake = checkout
    fake.deny("POST", r"/repos/acme/widgets/pulls$",
              "GitHub Actions is not permitted to create or approve pull requests.")
    line = assert_bad_input(dispatch(cli, root, remote, fake, 2),
                            '"Allow GitHub Actions to create and approve pull requests"',
                            "Settings → Actions → General → Workflow permissions")
    assert "github-token" in line


def test_unchanged_baseline_opens_nothing(checkout, cli):
    root, remote, fake = checkout
    ran = cli("run", "--agent", "reference", "-k", "3", "--out", "results", cwd=root)
    assert ran.returncode == 0
    assert cli("baseline", "update", "--all", cwd=root).returncode == 0
    git(root, "add", "baseline.json")
    git(root, "commit", "--quiet", "-m", "baseline")
    result = cli("propose-baseline", "--remote", remote, cwd=root, env=env_for(fake))
    assert result.returncode == 0, result.stderr
    assert "did not change; no pull request" in result.stderr
    assert fake.pulls_of(REPO) == []


def test_commit_paths_covers_moves_and_deletions(tmp_path):
    """What an archive PR needs: a folder moved elsewhere is one commit of both sides."""
    root = tmp_path / "r"
    (root / "tasks" / "task-001-a").mkdir(parents=True)
    (root / "tasks" / "task-001-a" / "prompt.md").write_text("p\n")
    git(tmp_path, "init", "--quiet", "-b", "main", str(root))
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "init")
    (root / "archive").mkdir()
    (root / "tasks" / "task-001-a").rename(root / "archive" / "task-001-a")
    commit = pulls.commit_paths(root, ["tasks/task-001-a", "archive"], "archive task-001")
    changed = git(root, "diff", "--no-renames", "--name-status", "HEAD", commit).splitlines()
    assert sorted(changed) == ["A\tarchive/task-001-a/prompt.md", "D\ttasks/task-001-a/prompt.md"]
    assert git(root, "status", "--porcelain")  # the index and working tree are left as they were
    assert git(root, "rev-parse", "HEAD") != commit


def test_open_or_update_maps_the_refusal(tmp_path):
    with FakeGitHub() as fake:
        fake.add_token("t", "github-actions[bot]", installation=True)
        fake.deny("POST", r"/pulls$", "GitHub Actions is not permitted to create or approve "
                  "pull requests.")
        proposal = pulls.Proposal("b", "main", "t", "body", ["x"], "m")
        with pytest.raises(UserError, match="Allow GitHub Actions to create and approve"):
            pulls.open_or_update(client.make_client("t", fake.url), REPO, proposal, "0" * 40)


def test_pull_request_target_prefers_options_then_the_workflow_then_the_branch(tmp_path):
    not_a_repo = tmp_path / "plain"
    not_a_repo.mkdir()
    target = pulls.pull_request_target
    assert target(not_a_repo, "o/opt", "opt-base", repository_env="o/env", ref_name="env-base",
                  required=True) == ("o/opt", "opt-base")
    assert target(not_a_repo, None, None, repository_env="o/env", ref_name="env-base",
                  required=True) == ("o/env", "env-base")
    assert target(not_a_repo, None, None, repository_env=None, ref_name=None,
                  required=False) == (None, None)  # a dry run needs neither
    with pytest.raises(UserError) as info:
        target(not_a_repo, None, "main", repository_env=None, ref_name=None, required=True)
    assert info.value.field == "--repo"
    with pytest.raises(UserError) as info:
        target(not_a_repo, "o/r", None, repository_env=None, ref_name=None, required=True)
    assert info.value.field == "--base" and "no base branch" in info.value.message


@pytest.mark.parametrize("command", [["propose-baseline"], ["propose-archive"]])
def test_a_pull_request_without_a_repository_is_refused(command, repo_root, cli,
                                                         assert_bad_input):
    env = {"GITHUB_REPOSITORY": "", "GITHUB_REF_NAME": "", "GITHUB_EVENT_PATH": ""}
    result = cli(*command, "--root", repo_root, "--base", "main", env=env)
    assert_bad_input(result, "--repo", "no repository (set GITHUB_REPOSITORY")
