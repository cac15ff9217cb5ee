"""The comment controls of the report (gate --comment, --comment-key; the action's `comment` and
`comment-key` inputs), through the real CLI against the loopback GitHub API."""

from __future__ import annotations

import pytest
from conftest import copy_of
from fake_github import fake_github, github_pr_7  # noqa: F401 - the fixtures
from test_github_gate import BROKEN_SOLUTION, REPO, actions_env, write_baseline

from ci_eval.github.comment_policy import COMMENT_POLICIES, may_create


@pytest.fixture(scope="module")
def passing_once(tmp_path_factory, make_task, cli):
    """One task, a 40/40 baseline, 3 passing runs: the gate passes, nothing changed."""
    repo_root = tmp_path_factory.mktemp("passing") / "repo"
    (repo_root / "tasks").mkdir(parents=True)
    make_task(repo_root, "task-001-steady")
    write_baseline(repo_root, ["task-001-steady"])
    assert cli("run", "--agent", "reference", "-k", "3", cwd=repo_root).returncode == 0
    return repo_root


@pytest.fixture
def passing(passing_once, tmp_path):
    """passing_once's repo, a copy of its own for each test."""
    return copy_of(passing_once, tmp_path / "repo")


@pytest.fixture
def github(github_pr_7):
    return github_pr_7


def gate(cli, root, tmp_path, github, *args):
    return cli("gate", *args, cwd=root, env=actions_env(tmp_path, github))


def test_the_policy_table():
    assert COMMENT_POLICIES == ("always", "on-change", "on-failure", "off")
    assert may_create("off", failed=True, changed=True) is None
    assert [may_create(p, failed=False, changed=False) for p in COMMENT_POLICIES[:3]] == [
        True, False, False]
    assert [may_create(p, failed=False, changed=True) for p in COMMENT_POLICIES[:3]] == [
        True, True, False]
    assert [may_create(p, failed=True, changed=True) for p in COMMENT_POLICIES[:3]] == [
        True, True, True]


def test_a_quiet_pass_posts_nothing_until_asked_and_an_existing_comment_is_kept_current(
        passing, cli, github, tmp_path):
    for policy in ("on-change", "on-failure", "off"):
        done = gate(cli, passing, tmp_path, github, "--comment", policy)
        assert done.returncode == 0, done.stderr
        assert github.comments_on(REPO, 7) == [], policy
    assert "no comment (--comment on-failure" not in done.stderr  # off says nothing at all
    assert gate(cli, passing, tmp_path, github, "--comment", "always").returncode == 0
    [first] = github.comments_on(REPO, 7)
    (passing / "tasks" / "task-001-steady" / "solution" / "solve.sh").write_text(BROKEN_SOLUTION)
    assert cli("run", "--agent", "reference", "-k", "3", "--fresh", cwd=passing).returncode == 0
    done = gate(cli, passing, tmp_path, github, "--comment", "off")
    assert done.returncode == 1 and github.comments_on(REPO, 7) == [first]  # off: untouched
    done = gate(cli, passing, tmp_path, github, "--comment", "on-failure")
    assert done.returncode == 1
    [updated] = github.comments_on(REPO, 7)
    assert updated["id"] == first["id"] and "regressed" in updated["body"]


def test_on_failure_creates_the_comment_when_the_gate_fails(passing, cli, github, tmp_path):
    (passing / "tasks" / "task-001-steady" / "solution" / "solve.sh").write_text(BROKEN_SOLUTION)
    assert cli("run", "--agent", "reference", "-k", "3", "--fresh", cwd=passing).returncode == 0
    done = gate(cli, passing, tmp_path, github, "--comment", "on-failure")
    assert done.returncode == 1
    [posted] = github.comments_on(REPO, 7)
    assert "❌ ci-eval: 1 of 1 task(s) fail the gate" in posted["body"]


def test_two_keys_keep_two_comments(passing, cli, github, tmp_path):
    assert gate(cli, passing, tmp_path, github).returncode == 0
    assert gate(cli, passing, tmp_path, github, "--comment-key", "docs").returncode == 0
    assert gate(cli, passing, tmp_path, github, "--comment-key", "docs").returncode == 0
    assert gate(cli, passing, tmp_path, github).returncode == 0
    comments = github.comments_on(REPO, 7)
    assert len(comments) == 2
    bodies = sorted(c["body"].splitlines()[0] for c in comments)
    assert bodies == ["<!-- ci-eval-report -->", "<!-- ci-eval-report:docs -->"]


def test_a_bad_key_is_refused_before_anything_is_posted(passing, cli, github, tmp_path,
                                                        assert_bad_input):
    assert_bad_input(gate(cli, passing, tmp_path, github, "--comment-key", "a b"),
                     "--comment-key", "expected a key")
    assert github.comments_on(REPO, 7) == []
