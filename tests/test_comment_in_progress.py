"""The "run under way" note (`ci-eval comment --in-progress`, eval.yml's progress job): on top of
the previous report, or a short comment of its own; replaced by the run's report. Through the
real CLI against the loopback GitHub API (tests/fake_github.py, PyGithub's wire format)."""

from __future__ import annotations

import json

import pytest
from fake_github import fake_github, github_pr_7  # noqa: F401 - the fixtures
from test_github_gate import REPO, actions_env, write_baseline

from ci_eval.github.comment_policy import COMMENT_POLICIES, may_create
from ci_eval.render.compare import COMMENT_MARKER
from ci_eval.render.in_progress import NOTE_END, NOTE_START, in_progress_body

HEAD = "0123456789abcdef0123456789abcdef01234567"
RUN = "https://github.com/acme/widgets/actions/runs/4242"


@pytest.fixture
def github(github_pr_7):
    return github_pr_7


def env_of(tmp_path, github, *, head_repo=REPO):
    env = actions_env(tmp_path, github, head_repo=head_repo)
    event = json.loads((tmp_path / "event.json").read_text())
    event["pull_request"]["head"]["sha"] = HEAD
    (tmp_path / "event.json").write_text(json.dumps(event))
    return env | {"GITHUB_RUN_ID": "4242", "GITHUB_SERVER_URL": "https://github.com"}


def note(cli, tmp_path, github, *args, head_repo=REPO):
    return cli("comment", "--in-progress", *args, cwd=tmp_path,
               env=env_of(tmp_path, github, head_repo=head_repo))


def test_the_note_policy_table():
    # the note comes before the run has a result: nothing failed or changed yet
    notes = [may_create(p, failed=False, changed=False) for p in COMMENT_POLICIES]
    assert notes == [True, False, False, None]


def test_the_body_keeps_the_previous_report_and_never_stacks_notes():
    report = f"{COMMENT_MARKER}\n### ❌ ci-eval: 1 of 2 task(s) fail the gate\n\n| table |\n"
    first = in_progress_body(report, COMMENT_MARKER, sha=HEAD, run_url=RUN)
    assert first.startswith(f"{COMMENT_MARKER}\n{NOTE_START}\n> ⏳ **A new ci-eval run for "
                            f"`{HEAD[:12]}` is under way**: [workflow run]({RUN}).")
    assert first.endswith("### ❌ ci-eval: 1 of 2 task(s) fail the gate\n\n| table |\n")
    assert first.count(COMMENT_MARKER) == 1
    again = in_progress_body(first, COMMENT_MARKER, sha="f" * 40, run_url=RUN + "0")
    assert again.count(NOTE_START) == again.count(NOTE_END) == 1 and "`ffffffffffff`" in again
    assert again.endswith("| table |\n") and HEAD[:12] not in again
    short = in_progress_body(None, COMMENT_MARKER, sha=HEAD, run_url=RUN)
    assert short.splitlines()[2] == f"### ⏳ ci-eval: a run for `{HEAD[:12]}` is under way: " \
                                    f"[workflow run]({RUN})"
    # a comment that was only a note (its run was cancelled) gets a short one again, not a
    # "previous report" that is an old note
    assert in_progress_body(short, COMMENT_MARKER, sha="f" * 40, run_url=RUN).count("⏳") == 1
    # no run link or sha known: said without them; a sha that is not one is left out
    assert "a run is under way\n" in in_progress_body(None, COMMENT_MARKER, sha="x`y",
                                                      run_url=None)


def test_a_report_gets_the_note_then_the_next_report_replaces_it(
        repo_root, make_task, cli, github, tmp_path):
    make_task(repo_root, "task-001-steady")
    write_baseline(repo_root, ["task-001-steady"])
    assert cli("run", "--agent", "reference", "-k", "3", cwd=repo_root).returncode == 0
    env = env_of(tmp_path, github)
    assert cli("gate", cwd=repo_root, env=env).returncode == 0
    [report] = github.comments_on(REPO, 7)
    done = note(cli, tmp_path, github, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["action"] == "updated"
    [noted] = github.comments_on(REPO, 7)
    assert noted["id"] == report["id"]
    assert f"A new ci-eval run for `{HEAD[:12]}` is under way**: [workflow run]({RUN})" in \
        noted["body"]
    assert noted["body"].endswith(report["body"].replace(COMMENT_MARKER + "\n", "", 1))
    assert note(cli, tmp_path, github).returncode == 0  # the same run again: unchanged
    assert github.comments_on(REPO, 7) == [noted]
    assert cli("gate", cwd=repo_root, env=env).returncode == 0
    [final] = github.comments_on(REPO, 7)
    assert final["id"] == report["id"] and final["body"] == report["body"]


@pytest.mark.parametrize("policy", ["on-change", "on-failure", "off"])
def test_only_always_creates_a_comment_for_the_note(policy, cli, github, tmp_path):
    done = note(cli, tmp_path, github, "--policy", policy)
    assert done.returncode == 0, done.stderr
    assert github.comments_on(REPO, 7) == []
    assert "no in-progress note" in done.stderr


def test_always_creates_a_short_comment_and_off_leaves_one_alone(cli, github, tmp_path):
    assert note(cli, tmp_path, github).returncode == 0
    [short] = github.comments_on(REPO, 7)
    assert short["body"].startswith(f"{COMMENT_MARKER}\n{NOTE_START}\n### ⏳ ci-eval: a run for")
    github.add_comment(REPO, 7, "github-actions[bot]", "unrelated")
    assert note(cli, tmp_path, github, "--policy", "on-change").returncode == 0
    assert github.comments_on(REPO, 7)[0] == short  # the same note, unchanged
    github.state.comments[short["id"]]["body"] = f"{COMMENT_MARKER}\nan older report"
    assert note(cli, tmp_path, github, "--policy", "off").returncode == 0
    assert github.comments_on(REPO, 7)[0]["body"] == f"{COMMENT_MARKER}\nan older report"


def test_the_key_picks_the_comment(cli, github, tmp_path):
    github.add_comment(REPO, 7, "github-actions[bot]", f"{COMMENT_MARKER}\nthe main report")
    assert note(cli, tmp_path, github, "--comment-key", "docs").returncode == 0
    main, docs = github.comments_on(REPO, 7)
    assert main["body"] == f"{COMMENT_MARKER}\nthe main report"
    assert docs["body"].startswith("<!-- ci-eval-report:docs -->\n" + NOTE_START)


def test_a_fork_is_skipped_with_a_notice_before_any_request(cli, github, tmp_path):
    github.add_comment(REPO, 7, "github-actions[bot]", f"{COMMENT_MARKER}\nreport")
    github.deny("GET", ".*")  # a request would be refused: there must be none
    done = note(cli, tmp_path, github, head_repo="mallory/widgets")
    assert done.returncode == 0, done.stderr
    assert "::notice title=ci-eval::no in-progress note: the token is read-only here (pull " \
           "request #7 comes from the fork mallory/widgets" in done.stdout
    assert github.comments_on(REPO, 7)[0]["body"] == f"{COMMENT_MARKER}\nreport"
    assert github.requests == []


def test_github_refusing_is_a_notice_or_warning_never_a_failure(cli, github, tmp_path):
    github.add_comment(REPO, 7, "github-actions[bot]", f"{COMMENT_MARKER}\nreport")
    github.deny("PATCH", r"/repos/acme/widgets/issues/comments/\d+")
    done = note(cli, tmp_path, github)
    assert done.returncode == 0, done.stderr
    assert "::notice title=ci-eval::no in-progress note: GitHub answered 403" in done.stdout
    github.fail("PATCH", r"/repos/acme/widgets/issues/comments/\d+", 500, times=None)
    github.rules.reverse()  # the 500 before the 403
    done = note(cli, tmp_path, github)
    assert done.returncode == 0, done.stderr
    assert "::warning title=ci-eval::the in-progress note was not posted" in done.stdout
    assert github.comments_on(REPO, 7)[0]["body"] == f"{COMMENT_MARKER}\nreport"


def test_an_answer_not_in_the_api_shape_is_a_warning_never_a_failure(cli, github, tmp_path):
    """A proxy or a broken gateway can answer 200 with something else than the API's JSON."""
    github.add_comment(REPO, 7, "github-actions[bot]", f"{COMMENT_MARKER}\nreport")
    github.fail("GET", r"/repos/acme/widgets/issues/7/comments", 200, message="proxy page",
                times=None)
    done = note(cli, tmp_path, github)
    assert done.returncode == 0, done.stderr
    assert "::warning title=ci-eval::the in-progress note was not posted: GitHub's answer was " \
           "not the API's" in done.stdout, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert github.comments_on(REPO, 7)[0]["body"] == f"{COMMENT_MARKER}\nreport"


@pytest.mark.parametrize(("args", "field"), [
    (["--comment-key", "a b"], "--comment-key"),
    (["--pr", "0"], "--pr"),
])
def test_bad_input_exits_2(args, field, cli, github, tmp_path):
    done = note(cli, tmp_path, github, *args)
    assert done.returncode == 2 and field in done.stderr and "Traceback" not in done.stderr


def test_policy_goes_with_in_progress_only(cli, github, tmp_path):
    (tmp_path / "body.md").write_text("hi")
    done = cli("comment", "--body", str(tmp_path / "body.md"), "--policy", "off", cwd=tmp_path,
               env=env_of(tmp_path, github))
    assert done.returncode == 2 and "--policy: goes with --in-progress" in done.stderr, done.stderr
    done = cli("comment", "--body", str(tmp_path / "body.md"), "--in-progress", cwd=tmp_path,
               env=env_of(tmp_path, github))
    assert done.returncode == 2 and "not allowed with argument" in done.stderr
    assert github.comments_on(REPO, 7) == []
