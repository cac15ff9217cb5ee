"""The sticky comment through the real PyGithub client against the loopback fake GitHub API:
found by marker AND author over every page, updated in place, truncated, retried, 403 fallback."""

from __future__ import annotations

import json

import pytest
from fake_github import FakeGitHub, fake_github, github_pr_7  # noqa: F401 - the fixtures

from ci_eval.github import client, comment, retry
from ci_eval.render.compare import COMMENT_MARKER, MAX_COMMENT_CHARS

REPO = "acme/widgets"
BOT = "github-actions[bot]"


@pytest.fixture
def pr(github_pr_7):
    github_pr_7.add_token("ghp_alice", "alice")
    return github_pr_7


def gh(fake, token="ghs_bot"):
    return client.make_client(token, fake.url)


def body(text="report"):
    return f"{COMMENT_MARKER}\n### {text}\n"


def test_created_once_then_updated_in_place_across_pages(pr):
    for i in range(230):  # three pages of 100 of other people's comments first
        pr.add_comment(REPO, 7, "bob", f"comment {i}")
    first = comment.upsert_comment(gh(pr), REPO, 7, body("first"))
    assert first.action == "created"
    for i in range(30):
        pr.add_comment(REPO, 7, "carol", f"later {i}")
    second = comment.upsert_comment(gh(pr), REPO, 7, body("second"))
    third = comment.upsert_comment(gh(pr), REPO, 7, body("second"))
    assert (second.action, second.id) == ("updated", first.id)
    assert (third.action, third.id) == ("unchanged", first.id)
    ours = [c for c in pr.comments_on(REPO, 7) if COMMENT_MARKER in c["body"]]
    assert len(ours) == 1 and ours[0]["body"] == body("second") and ours[0]["user"] == BOT
    assert len(pr.calls("GET", r"/issues/7/comments\?page=3")) >= 2  # every page was read
    assert len(pr.calls("POST", r"/issues/7/comments$")) == 1


def test_another_authors_comment_quoting_the_marker_is_left_alone(pr):
    quoted = f"Why does the bot write `{COMMENT_MARKER}`?\n> {COMMENT_MARKER}\n"
    theirs = pr.add_comment(REPO, 7, "alice", quoted)
    result = comment.upsert_comment(gh(pr), REPO, 7, body())
    assert result.action == "created" and result.id != theirs
    by_id = {c["id"]: c for c in pr.comments_on(REPO, 7)}
    assert by_id[theirs]["body"] == quoted
    # and with alice's own (personal) token, alice's comment is hers to update
    mine = comment.upsert_comment(gh(pr, "ghp_alice"), REPO, 7, body("alice's"))
    assert (mine.action, mine.id) == ("updated", theirs)


def test_identity_get_user_for_personal_tokens_graphql_viewer_for_installation_tokens(pr):
    assert client.own_login(gh(pr, "ghp_alice")) == "alice"
    assert client.own_login(gh(pr)) == BOT
    assert pr.calls("POST", r"^/graphql$")


def test_body_over_the_limit_is_truncated_with_a_visible_note(pr):
    huge = body("big") + "x" * (MAX_COMMENT_CHARS + 5000)
    result = comment.upsert_comment(gh(pr), REPO, 7, huge)
    assert result.truncated
    posted = pr.comments_on(REPO, 7)[0]["body"]
    assert len(posted) <= MAX_COMMENT_CHARS and posted.startswith(COMMENT_MARKER)
    assert f"was {len(huge):,} characters" in posted and "Truncated" in posted
    # a body without the marker gets it, so the comment can be found again
    fitted, cut = comment.fit_body("plain")
    assert fitted.startswith(COMMENT_MARKER) and not cut


def test_a_502_then_success_creates_exactly_one_comment(pr):
    delays = []
    pr.fail("POST", r"/issues/7/comments$", 502, message="Bad Gateway")
    result = comment.upsert_comment(gh(pr), REPO, 7, body(), sleep=delays.append)
    assert result.action == "created" and delays == [1.0]
    assert len(pr.comments_on(REPO, 7)) == 1


def test_a_429_with_retry_after_is_waited_for(pr):
    delays = []
    pr.fail("GET", r"/issues/7/comments$", 429, headers={"Retry-After": "3"},
            message="Too Many Requests")
    comment.upsert_comment(gh(pr), REPO, 7, body(), sleep=delays.append)
    assert delays == [3.0]


def test_a_403_rate_limit_waits_until_the_reset(pr):
    delays = []
    pr.fail("GET", r"/issues/7/comments$", 403, message="API rate limit exceeded",
            headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1000010"})
    comment.upsert_comment(gh(pr), REPO, 7, body(), sleep=delays.append, clock=lambda: 1000000.0)
    assert delays == [11.0]  # 10 s to the reset, plus one for its whole-second granularity


def test_retries_are_bounded(pr):
    delays = []
    pr.fail("GET", r"/issues/7/comments$", 503, times=None)
    with pytest.raises(client.GitHubError, match="after 5 attempts"):
        comment.upsert_comment(gh(pr), REPO, 7, body(), sleep=delays.append)
    assert delays == [1.0, 2.0, 4.0, 8.0]
    pr.rules.clear()
    pr.fail("GET", r"/issues/7/comments$", 429, headers={"Retry-After": "3600"})
    with pytest.raises(client.GitHubError, match="asked to wait 3600 s"):
        comment.upsert_comment(gh(pr), REPO, 7, body(), sleep=delays.append)


def test_a_plain_403_is_not_retried(pr):
    delays = []
    pr.deny("POST", r"/issues/7/comments$")
    with pytest.raises(client.GitHubError) as caught:
        comment.upsert_comment(gh(pr), REPO, 7, body(), sleep=delays.append)
    assert caught.value.status == 403 and delays == []
    assert len(pr.calls("POST", r"/issues/7/comments$")) == 1


@pytest.mark.parametrize("status, headers, message, expected", [
    (502, {}, "", 1.0),
    (500, {}, "", 1.0),
    (0, {}, "ConnectionError", 1.0),
    (429, {}, "", 1.0),
    (429, {"Retry-After": "7"}, "", 7.0),
    (403, {"retry-after": "2"}, "", 2.0),
    (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "105"}, "", 6.0),
    (403, {}, "You have exceeded a secondary rate limit", 60.0),
    (403, {}, "Resource not accessible by integration", None),
    (404, {}, "", None),
    (422, {}, "Body is too long", None),
])
def test_retry_delay(status, headers, message, expected):
    decision = retry.retry_delay(status, headers, message, 1, now=100.0)
    assert (decision[0] if decision else None) == expected


def test_retry_after_as_an_http_date_and_exponential_growth():
    assert retry.retry_delay(503, {}, "", 3, now=0.0)[0] == 4.0
    when = "Thu, 01 Jan 1970 00:01:40 GMT"  # 100 s after the epoch
    assert retry.retry_delay(429, {"Retry-After": when}, "", 1, now=90.0)[0] == 10.0


def env_for(fake, tmp_path, token="ghs_bot", **extra):
    return {"GITHUB_API_URL": fake.url, "GITHUB_TOKEN": token, "GITHUB_REPOSITORY": REPO,
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            retry.SCALE_ENV: "0.001", **extra}


def test_cli_posts_then_updates_and_logs_the_delay_chosen(pr, cli, tmp_path):
    report = tmp_path / "report.md"
    report.write_text(body("from the CLI"))
    pr.fail("GET", r"/issues/7/comments$", 429, headers={"Retry-After": "3"})
    first = cli("comment", "--pr", "7", "--body", report, "--json", env=env_for(pr, tmp_path))
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["action"] == "created"
    assert "Retry-After: 3; retrying to post the report on pull request #7 in 3 s" in first.stderr
    report.write_text(body("updated"))
    second = cli("comment", "--pr", "7", "--body", report, env=env_for(pr, tmp_path))
    assert second.returncode == 0 and second.stdout.startswith("updated comment ")
    assert [c["body"] for c in pr.comments_on(REPO, 7)] == [body("updated")]


def test_cli_403_falls_back_to_the_step_summary_and_says_so(pr, cli, tmp_path):
    pr.deny("POST", r"/issues/7/comments$")
    report = tmp_path / "report.md"
    report.write_text(body("forked"))
    result = cli("comment", "--pr", "7", "--body", report, env=env_for(pr, tmp_path))
    assert result.returncode == 0, result.stderr
    assert "::warning title=ci-eval comment::" in result.stdout and "403" in result.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "could not post its pull-request comment: GitHub answered 403" in summary
    assert "### forked" in summary
    assert pr.comments_on(REPO, 7) == []


def test_cli_an_answer_not_in_the_api_shape_is_a_clear_error_not_a_crash(pr, cli, tmp_path):
    """A proxy or a captive portal can answer 200 with its own page instead of the API's JSON."""
    pr.fail("GET", r"/issues/7/comments$", 200, times=None,
            page="<!DOCTYPE html><html><body><h1>Sign in to the corporate proxy</h1></body></html>")
    report = tmp_path / "report.md"
    report.write_text(body())
    result = cli("comment", "--pr", "7", "--body", report, env=env_for(pr, tmp_path))
    assert result.returncode == 2, result.stderr  # GitHub refused, not an internal error (3)
    assert result.stderr.startswith("ci-eval: error: --pr: GitHub's answer was not the API's ("), \
        result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert pr.comments_on(REPO, 7) == []


def test_cli_bad_input(pr, cli, tmp_path, assert_bad_input):
    report = tmp_path / "report.md"
    report.write_text("x")
    assert_bad_input(cli("comment", "--pr", "7", "--body", tmp_path / "nope.md",
                         env=env_for(pr, tmp_path)), "nope.md", "--body")
    assert_bad_input(cli("comment", "--body", report, env=env_for(pr, tmp_path)), "--pr")
    assert_bad_input(cli("comment", "--pr", "7", "--body", report,
                         env=env_for(pr, tmp_path, token="")), "GITHUB_TOKEN")
    assert_bad_input(cli("comment", "--pr", "7", "--body", report,
                         env=env_for(pr, tmp_path, token="wrong")), "401")
    assert_bad_input(cli("comment", "--pr", "99", "--body", report,
                         env=env_for(pr, tmp_path)), "404")
