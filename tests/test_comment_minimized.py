"""A sticky comment someone hid ("minimized"): ci-eval asks GraphQL (IssueComment.isMinimized;
REST comments carry no such state), updates it in place, never shows it again and never posts a
second one, and says so in a notice. Through the real CLI against tests/fake_github.py, which
answers that GraphQL query in GraphQL's wire format."""

from __future__ import annotations

import json

import pytest
from fake_github import fake_github, github_pr_7  # noqa: F401 - the fixtures
from test_github_gate import REPO, actions_env

from ci_eval.render.compare import COMMENT_MARKER


@pytest.fixture
def github(github_pr_7):
    return github_pr_7


def post(cli, tmp_path, github, text, *args):
    (tmp_path / "body.md").write_text(f"{COMMENT_MARKER}\n{text}\n")
    return cli("comment", "--body", str(tmp_path / "body.md"), "--json", *args, cwd=tmp_path,
               env=actions_env(tmp_path, github))


def test_a_hidden_comment_is_updated_in_place_left_hidden_and_said(cli, github, tmp_path):
    first = post(cli, tmp_path, github, "report 1")
    assert json.loads(first.stdout)["action"] == "created"
    [comment] = github.comments_on(REPO, 7)
    assert json.loads(post(cli, tmp_path, github, "report 2").stdout)["minimized"] == ""
    github.minimize(comment["id"], "OUTDATED")
    done = post(cli, tmp_path, github, "report 3")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout[done.stdout.index("{\n"):])  # after the notice
    assert answer["action"] == "updated" and answer["minimized"] == "outdated"
    assert "::notice title=ci-eval comment::the ci-eval comment on pull request #7 is hidden " \
           "(minimized as outdated): it was updated in place and stays hidden" in done.stdout
    [updated] = github.comments_on(REPO, 7)
    assert updated["id"] == comment["id"] and updated["body"].endswith("report 3\n")
    # never un-hidden: the fake would show it again on an unminimizeComment mutation
    assert updated.get("minimized") == "OUTDATED"
    assert github.graphql and not any("unminimize" in q.lower() for q in github.graphql)


def test_the_in_progress_note_on_a_hidden_comment_says_so(cli, github, tmp_path):
    cid = github.add_comment(REPO, 7, "github-actions[bot]", f"{COMMENT_MARKER}\nreport")
    github.minimize(cid, "resolved")
    done = cli("comment", "--in-progress", cwd=tmp_path, env=actions_env(tmp_path, github))
    assert done.returncode == 0, done.stderr
    assert "(minimized as resolved): it was updated in place" in done.stdout
    [noted] = github.comments_on(REPO, 7)
    assert "is under way" in noted["body"] and noted["minimized"] == "resolved"


def test_when_graphql_cannot_say_the_comment_is_still_updated(cli, github, tmp_path):
    github.add_token("ghp_person", "alice")  # GET /user answers: no GraphQL for the identity
    cid = github.add_comment(REPO, 7, "alice", f"{COMMENT_MARKER}\nold")
    github.minimize(cid)
    github.fail("POST", "/graphql", 502, times=None)
    env = actions_env(tmp_path, github) | {"GITHUB_TOKEN": "ghp_person"}
    (tmp_path / "body.md").write_text(f"{COMMENT_MARKER}\nnew\n")
    done = cli("comment", "--body", str(tmp_path / "body.md"), "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["minimized"] is None and "hidden" not in done.stdout
    assert github.comments_on(REPO, 7)[0]["body"] == f"{COMMENT_MARKER}\nnew\n"
    assert len(github.calls("POST", "/graphql")) == 1  # one try, no retries for it
