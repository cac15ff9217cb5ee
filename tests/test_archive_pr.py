"""`ci-eval propose-archive` (the action's gc mode) against the loopback GitHub API and a local bare
remote: the archive PR opened once, updated by a run on another date (found by its marker, on its
own branch), never duplicated; closed when nothing is eligible any more; other PRs left alone."""

from __future__ import annotations

import datetime as dt
import json
import subprocess

import pytest
from fake_github import FakeGitHub
from test_gc import write_task

from ci_eval.render.gc import PR_MARKER
from ci_eval.results import history
from ci_eval.results.history import RunSummary, TaskRecord
from ci_eval.verdict import baseline as bl

REPO = "acme/widgets"
TOKEN = "ghs_bot"
GIT_ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
          "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
CREATED = {"task-001-old-steady": "2026-01-05", "task-002-young": "2026-10-01",
           "task-003-old-flaky": "2026-01-05"}


def git(cwd, *args) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), **GIT_ID})
    return done.stdout.strip()


def record(folder, first: str, count: int, *, failing: dict[str, int] | None = None) -> None:
    """`count` summaries on consecutive days from `first`: every task 5/5, except 4/5 for a
    task on the day index `failing` names."""
    for i in range(count):
        date = (dt.date.fromisoformat(first) + dt.timedelta(days=i)).isoformat()
        tasks = {name: TaskRecord(name, 5, 4 if (failing or {}).get(name) == i else 5, 0, 5)
                 for name in CREATED}
        history.write_summary(folder, RunSummary(date=date, recorded_at=f"{date}T10:00:00Z",
                                                 commit="abcd", agent="reference",
                                                 ci_eval_version="0.1.0", tasks=tasks))


@pytest.fixture
def project(tmp_path):
    """A repository on main with three tasks and their baselines, pushed to a bare remote; ten
    recorded runs in a history folder outside it (as the action fetches them to $RUNNER_TEMP);
    the fake GitHub that knows the remote."""
    root = tmp_path / "repo"
    hashes = {name: write_task(root, name, day) for name, day in CREATED.items()}
    entries = {name: bl.BaselineEntry(task=name, passes=5, runs=5, recorded="2026-07-01",
                                      prompt_hash=digest) for name, digest in hashes.items()}
    bl.save_baseline(root / "baseline.json", bl.Baseline(agent="reference", entries=entries))
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(remote))
    git(root, "init", "--quiet", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "tasks")
    git(root, "push", "--quiet", str(remote), "main")
    hist = tmp_path / "history"
    record(hist, "2026-11-20", 10, failing={"task-003-old-flaky": 8})
    with FakeGitHub(git_remote=str(remote)) as fake:
        fake.add_token(TOKEN, "github-actions[bot]", installation=True)
        yield root, remote, hist, fake


def env_for(fake) -> dict:
    return {"GITHUB_API_URL": fake.url, "GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO,
            "GITHUB_REF_NAME": "main", "GITHUB_SERVER_URL": "", "CI_EVAL_BACKOFF_SCALE": "0",
            **GIT_ID}


def propose(cli, root, remote, hist, fake, today, *args):
    return cli("propose-archive", "--history", hist, "--today", today, "--remote", remote,
               *args, cwd=root, env=env_for(fake))


def fresh_checkout(root) -> None:
    """What the next scheduled run starts from: main as committed."""
    git(root, "checkout", "--quiet", "--", ".")
    git(root, "clean", "--quiet", "-fd")


def test_archive_pr_opened_once_then_updated_on_another_date_never_duplicated(project, cli):
    root, remote, hist, fake = project
    head = git(root, "rev-parse", "HEAD")
    first = propose(cli, root, remote, hist, fake, "2026-12-01")
    assert first.returncode == 0, first.stderr
    assert "opened the archive pull request #1" in first.stdout
    assert "branch ci-eval/gc-2026-12-01" in first.stdout
    [pr] = fake.pulls_of(REPO)
    assert pr["head"]["ref"] == "ci-eval/gc-2026-12-01" and pr["base"]["ref"] == "main"
    assert pr["title"] == "ci-eval: archive 1 task that passed every run (2026-12-01)"
    body = pr["body"]
    assert body.startswith(PR_MARKER)
    row = next(line for line in body.splitlines() if line.startswith("| `task-001-old-steady`"))
    assert "(10/10 pass)" in row and "██████████" in row and "2026-01-05 | 10 months 26 days |" in row
    assert "`task-003-old-flaky`: history: failed a run on 2026-11-28 (4/5)" in body
    assert "`task-002-young`: age: created 2026-10-01, 2 months old" in body

    # the branch: the task moved to archive/, its baseline entry dropped, the log line
    branch = git(remote, "rev-parse", "refs/heads/ci-eval/gc-2026-12-01")
    assert git(remote, "rev-parse", f"{branch}^") == head
    changed = git(remote, "diff", "--no-renames", "--name-status", head, branch).splitlines()
    assert sorted(changed) == sorted([
        "A\tarchive/ARCHIVE-LOG.md", "A\tarchive/task-001-old-steady/checks.py",
        "A\tarchive/task-001-old-steady/metadata.json",
        "A\tarchive/task-001-old-steady/prompt.md",
        "A\tarchive/task-001-old-steady/solution/solve.sh", "M\tbaseline.json",
        "D\ttasks/task-001-old-steady/checks.py", "D\ttasks/task-001-old-steady/metadata.json",
        "D\ttasks/task-001-old-steady/prompt.md",
        "D\ttasks/task-001-old-steady/solution/solve.sh"])
    pushed = json.loads(git(remote, "show", f"{branch}:baseline.json"))
    assert sorted(pushed["tasks"]) == ["task-002-young", "task-003-old-flaky"]
    assert ("2026-12-01 — Archived task-001-old-steady (10/10 pass, 10 months 26 days old)"
            in git(remote, "show", f"{branch}:archive/ARCHIVE-LOG.md"))
    assert git(root, "rev-parse", "HEAD") == head  # the checkout's branch did not move

    # a week later: one more recorded run; the open PR is found by its marker and updated
    fresh_checkout(root)
    record(hist, "2026-12-07", 1)
    second = propose(cli, root, remote, hist, fake, "2026-12-08")
    assert second.returncode == 0, second.stderr
    assert "updated the archive pull request #1" in second.stdout
    [pr] = fake.pulls_of(REPO)
    assert pr["title"] == "ci-eval: archive 1 task that passed every run (2026-12-08)"
    assert "ci-eval entropy GC — 2026-12-08" in pr["body"]
    assert pr["head"]["ref"] == "ci-eval/gc-2026-12-01"  # its own branch, force-pushed
    moved = git(remote, "rev-parse", "refs/heads/ci-eval/gc-2026-12-01")
    assert moved != branch and git(remote, "rev-parse", f"{moved}^") == head
    assert "2026-12-08 — Archived" in git(remote, "show", f"{moved}:archive/ARCHIVE-LOG.md")
    assert "refs/heads/ci-eval/gc-2026-12-08" not in git(remote, "for-each-ref")
    assert len(fake.calls("POST", r"/pulls$")) == 1


def test_nothing_eligible_any_more_closes_the_open_archive_pr(project, cli):
    root, remote, hist, fake = project
    assert propose(cli, root, remote, hist, fake, "2026-12-01").returncode == 0
    fresh_checkout(root)
    record(hist, "2026-12-07", 1, failing={"task-001-old-steady": 0})
    closed = propose(cli, root, remote, hist, fake, "2026-12-08")
    assert closed.returncode == 0, closed.stderr
    assert "closed the archive pull request #1" in closed.stdout
    [pr] = fake.pulls_of(REPO)
    assert pr["state"] == "closed"
    assert pr["body"].startswith(PR_MARKER + "\n> Closed by ci-eval GC on 2026-12-08")
    assert "failed a run on 2026-12-07 (4/5)" in pr["body"]
    again = propose(cli, root, remote, hist, fake, "2026-12-09")
    assert again.returncode == 0 and "nothing to archive; no pull request" in again.stdout
    assert len(fake.pulls_of(REPO)) == 1 and len(fake.calls("POST", r"/pulls$")) == 1


def test_pull_requests_that_only_look_like_the_archive_pr_are_left_alone(project, cli):
    root, remote, hist, fake = project
    fake.add_pull(REPO, 1, head="ci-eval/gc-2026-01-01", head_repo="mallory/widgets",
                  body=f"{PR_MARKER} from a fork")
    fake.add_pull(REPO, 2, head="feature", body=f"quoting {PR_MARKER}")
    fake.add_pull(REPO, 3, head="ci-eval/gc-2026-02-01", base="release", body=PR_MARKER)
    result = propose(cli, root, remote, hist, fake, "2026-12-01", "--json")
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)["outcome"]
    assert outcome["action"] == "opened" and outcome["number"] == 4
    assert outcome["archived"] == ["task-001-old-steady"]
    assert [p["body"] for p in fake.pulls_of(REPO)[:3]] == [
        f"{PR_MARKER} from a fork", f"quoting {PR_MARKER}", PR_MARKER]
    assert fake.calls("PATCH", r"/pulls/\d+$") == []


def test_dry_run_prints_the_plan_and_calls_nothing(project, cli):
    root, _remote, hist, fake = project
    result = cli("propose-archive", "--history", hist, "--today", "2026-12-01", "--dry-run",
                 cwd=root, env={"GITHUB_REPOSITORY": "", "GITHUB_TOKEN": ""})
    assert result.returncode == 0, result.stderr
    assert "would archive: task-001-old-steady" in result.stdout
    assert "ci-eval: archive 1 task that passed every run (2026-12-01)" in result.stdout
    assert fake.requests == []
    assert (root / "tasks" / "task-001-old-steady").is_dir()
    assert not git(root, "status", "--porcelain")


def test_fewer_than_ten_runs_opens_nothing(project, cli, tmp_path):
    root, remote, _hist, fake = project
    short = tmp_path / "short"
    record(short, "2026-11-20", 9)
    result = propose(cli, root, remote, short, fake, "2026-12-01")
    assert result.returncode == 0, result.stderr
    assert "the rule needs the last 10: 1 missing" in result.stdout
    assert "nothing to archive; no pull request" in result.stdout
    assert fake.pulls_of(REPO) == [] and not git(root, "status", "--porcelain")


def test_not_permitted_names_the_setting_and_bad_input(project, cli, assert_bad_input):
    root, remote, hist, fake = project
    fake.deny("POST", r"/pulls$", "GitHub Actions is not permitted to create or approve pull "
              "requests.")
    assert_bad_input(propose(cli, root, remote, hist, fake, "2026-12-01"),
                     '"Allow GitHub Actions to create and approve pull requests"')
    fresh_checkout(root)
    assert_bad_input(cli("propose-archive", "--history", hist, "--today", "2026-12-01",
                         cwd=root, env={**env_for(fake), "GITHUB_REPOSITORY": ""}),
                     "--repo", "no repository")
    assert_bad_input(propose(cli, root, remote, root / "missing", fake, "2026-12-01"),
                     "--history", "history folder not found")
    assert_bad_input(propose(cli, root, remote, hist, fake, "12/01/2026"), "--today",
                     "expected a date YYYY-MM-DD")
    fake.fail("GET", r"/pulls$", 404, message="Not Found", times=None)
    assert_bad_input(propose(cli, root, remote, hist, fake, "2026-12-01"), "GitHub refused",
                     "HTTP 404")
