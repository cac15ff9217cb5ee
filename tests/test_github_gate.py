"""`ci-eval gate` (the action's report mode) end to end against the loopback GitHub API, and the
Actions side channels it writes: outputs, step summary, annotations, event context."""

from __future__ import annotations

import json

import pytest
from conftest import copy_of
from fake_github import fake_github, with_pull_request_7  # noqa: F401 - the fixture

from ci_eval.github import actions, context
from ci_eval.render.compare import COMMENT_MARKER
from ci_eval.results import history
from ci_eval.tasks.load import load_task
from ci_eval.verdict.baseline import Baseline, BaselineEntry, dumps_baseline

REPO = "acme/widgets"
BROKEN_SOLUTION = "#!/bin/sh\nprintf '41\\n' > answer.txt\n"


def write_baseline(root, task_ids, passes=40, runs=40):
    entries = {}
    for task_id in task_ids:
        task = load_task(root / "tasks" / task_id)
        entries[task_id] = BaselineEntry(task_id, passes, runs, "2026-01-01", task.prompt_hash,
                                         avg_wall_seconds=1.0)
    (root / "baseline.json").write_text(dumps_baseline(Baseline("reference", entries)))


@pytest.fixture(scope="module")
def sharded_once(tmp_path_factory, make_task, cli):
    """Two tasks with 40/40 baselines, run in two shards; task-002's solution is now broken."""
    repo_root = tmp_path_factory.mktemp("sharded") / "repo"
    make_task(repo_root, "task-001-fine")
    make_task(repo_root, "task-002-broken")
    write_baseline(repo_root, ["task-001-fine", "task-002-broken"])
    (repo_root / "tasks" / "task-002-broken" / "solution" / "solve.sh").write_text(BROKEN_SOLUTION)
    for shard in (1, 2):
        ran = cli("run", "--agent", "reference", "--shard", f"{shard}/2", "-k", "3", "--out",
                  f"results/shard-{shard}", cwd=repo_root)
        assert ran.returncode == 0, ran.stderr
    return repo_root


@pytest.fixture
def sharded(sharded_once, tmp_path):
    """sharded_once's repo, a copy of its own for each test."""
    return copy_of(sharded_once, tmp_path / "repo")


def actions_env(tmp_path, fake, *, event_name="pull_request", pr=7, head_repo=REPO, api=None):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": pr, "pull_request": {
        "number": pr, "head": {"repo": {"full_name": head_repo}}},
        "repository": {"full_name": REPO, "default_branch": "main"}}))
    return {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": REPO,
            "GITHUB_SHA": "abc123def4567890", "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_API_URL": api or fake.url, "GITHUB_TOKEN": "ghs_bot",
            "CI_EVAL_BACKOFF_SCALE": "0"}


def read_outputs(path) -> dict:
    lines, found = path.read_text().splitlines(), {}
    i = 0
    while i < len(lines):
        name, delimiter = lines[i].split("<<", 1)
        end = lines.index(delimiter, i + 1)
        found[name] = "\n".join(lines[i + 1:end])
        i = end + 1
    return found


def test_gate_merges_publishes_comments_and_fails(sharded, cli, fake_github, tmp_path):
    with_pull_request_7(fake_github)
    env = actions_env(tmp_path, fake_github)
    result = cli("gate", cwd=sharded, env=env)
    assert result.returncode == 1, result.stderr
    assert "merged 2 shard folder(s)" in result.stderr
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "task-002-broken regressed" in errors[0]
    assert "baseline 1.00 (40/40), now 0.00 (0/3)" in errors[0]
    outputs = read_outputs(tmp_path / "output")
    assert outputs["verdict"] == "fail" and outputs["regressed"] == "1"
    assert outputs["comment-url"].startswith(fake_github.url)
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith(COMMENT_MARKER) and "task-002-broken" in summary
    [posted] = fake_github.comments_on(REPO, 7)
    assert posted["body"] == summary and "1 of 2 task(s) fail the gate" in posted["body"]
    # run again (a re-run of the job): the same comment is updated, never a second one
    (tmp_path / "summary.md").unlink()
    assert cli("gate", cwd=sharded, env=env).returncode == 1
    assert len(fake_github.comments_on(REPO, 7)) == 1


def test_posting_never_changes_the_exit_code(sharded, cli, fake_github, tmp_path):
    with_pull_request_7(fake_github)
    fake_github.deny("POST", r"/issues/7/comments$")
    denied = cli("gate", cwd=sharded, env=actions_env(tmp_path, fake_github))
    assert denied.returncode == 1, denied.stderr
    assert "::warning title=ci-eval::the PR comment was not posted" in denied.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "GitHub answered 403" in summary and summary.count("task-002-broken") >= 2
    assert summary.count(COMMENT_MARKER) == 1  # the report once, then the note
    unreachable = cli("gate", cwd=sharded, env=actions_env(tmp_path, fake_github,
                                                           api="http://127.0.0.1:9"))
    assert unreachable.returncode == 1, unreachable.stderr
    assert "the PR comment was not posted" in unreachable.stdout


def test_gate_passes_on_a_push_without_commenting(repo_root, make_task, cli, fake_github,
                                                  tmp_path):
    make_task(repo_root, "task-001-fine")
    write_baseline(repo_root, ["task-001-fine"])
    assert cli("run", "--agent", "reference", "-k", "2", "--out", "results/shard-1",
               cwd=repo_root).returncode == 0
    env = actions_env(tmp_path, fake_github, event_name="push")
    env.update({"GITHUB_REF": "refs/heads/main", "GITHUB_SHA": "ABC123def4567890",
                "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "2",
                "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REF_NAME": "main"})
    result = cli("gate", cwd=repo_root, env=env)
    assert result.returncode == 0, result.stderr
    outputs = read_outputs(tmp_path / "output")
    assert outputs["verdict"] == "pass"
    assert fake_github.requests == []  # no PR: no API call at all

    # on the default branch the run summary is recorded, for action.yml to upload
    [written] = (repo_root / "results" / "history").iterdir()
    assert outputs["history-summary"] == str(written.resolve())
    assert f"recorded the run summary results/history/{written.name}" in result.stderr
    recorded = history.read_summary(written)
    assert recorded.commit == "abc123def4567890" and recorded.agent == "reference"
    assert recorded.ci_run == {"id": 4242, "attempt": 2, "ref": "main",
                               "url": "https://github.com/acme/widgets/actions/runs/4242"}
    task = recorded.tasks["task-001-fine"]
    assert (task.runs, task.passes, task.status, task.gate) == (2, 2, "pass", "unchanged")
    assert written.name == f"{recorded.date}-001-abc123def456.json"


def test_no_history_on_pull_requests_or_other_branches(repo_root, make_task, cli, fake_github,
                                                       tmp_path):
    make_task(repo_root, "task-001-fine")
    write_baseline(repo_root, ["task-001-fine"])
    assert cli("run", "--agent", "reference", "-k", "2", "--out", "results/shard-1",
               cwd=repo_root).returncode == 0
    env = actions_env(tmp_path, fake_github, event_name="push")
    env["GITHUB_REF"] = "refs/heads/feature"
    assert cli("gate", cwd=repo_root, env=env).returncode == 0
    assert "history-summary" not in read_outputs(tmp_path / "output")
    env["GITHUB_REF"] = "refs/heads/main"
    assert cli("gate", "--no-history", cwd=repo_root, env=env).returncode == 0
    assert not (repo_root / "results" / "history").exists()


def test_fork_pull_requests_are_skipped_neutrally(repo_root, cli, fake_github, tmp_path):
    env = actions_env(tmp_path, fake_github, head_repo="mallory/widgets")
    result = cli("gate", cwd=repo_root, env=env)  # no results at all: not even looked at
    assert result.returncode == 0, result.stderr
    assert "::notice title=ci-eval::ci-eval skipped" in result.stdout
    assert "fork mallory/widgets" in (tmp_path / "summary.md").read_text()


def test_bad_shards_are_bad_input(sharded, cli, fake_github, tmp_path, assert_bad_input):
    clash = sharded / "results" / "shard-2" / "task-001-fine.jsonl"
    clash.write_text((sharded / "results" / "shard-1" / "task-001-fine.jsonl").read_text())
    assert_bad_input(cli("gate", "--no-comment", cwd=sharded), "recorded twice",
                     "shard-1/task-001-fine.jsonl:1", "shard-2/task-001-fine.jsonl:1")


# --- the side channels ----------------------------------------------------------------------


def test_outputs_use_a_delimiter_absent_from_the_value(tmp_path):
    path = tmp_path / "out"
    actions.set_outputs({"matrix": '{"a": 1}', "text": "two\nlines"}, path=str(path))
    assert read_outputs(path) == {"matrix": '{"a": 1}', "text": "two\nlines"}


def test_summary_is_capped_at_one_mebibyte(tmp_path, monkeypatch):
    path = tmp_path / "summary.md"
    path.write_text("x" * (actions.MAX_SUMMARY_BYTES - 1000))
    assert actions.append_summary("é" * 5000, path=str(path))
    assert path.stat().st_size <= actions.MAX_SUMMARY_BYTES
    assert path.read_text().endswith(actions.SUMMARY_TRUNCATED)
    assert not actions.append_summary("more", path=str(path))  # full: nothing more fits
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert actions.append_summary("x") is False  # outside Actions: nothing written, no error


def test_annotations_escaped_and_at_most_ten(capsys):
    actions.error("50% done\nsecond line", title="a: b, c")
    assert capsys.readouterr().out == "::error title=a%3A b%2C c::50%25 done%0Asecond line\n"
    limited = actions.limit_annotations([f"task {i}" for i in range(14)])
    assert len(limited) == 10 and limited[-1].startswith("... and 5 more")
    assert actions.limit_annotations(["a", "b"]) == ["a", "b"]


def test_context_from_the_event():
    env = {"GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/main",
           "GITHUB_REPOSITORY": REPO}
    ctx = context.parse(env, {"repository": {"default_branch": "main"}})
    assert context.on_default_branch(ctx) and context.no_secrets_reason(ctx) is None
    pr = context.parse({"GITHUB_EVENT_NAME": "pull_request", "GITHUB_REPOSITORY": REPO,
                        "GITHUB_ACTOR": "dependabot[bot]"},
                       {"pull_request": {"number": 3, "head": {"repo": {"full_name": REPO}}}})
    assert pr.pr_number == 3 and not context.on_default_branch(pr)
    assert "Dependabot" in context.no_secrets_reason(pr)


def test_the_comment_gets_a_history_column_from_earlier_runs(sharded, cli, fake_github,
                                                             tmp_path):
    with_pull_request_7(fake_github)
    for date in ("2026-11-01", "2026-11-02"):
        recorded = cli("history", "record", "--results", "results/shard-1", "--history", "hist",
                       "--date", date, cwd=sharded)
        assert recorded.returncode == 0, recorded.stderr
    env = actions_env(tmp_path, fake_github)
    assert cli("gate", "--history", "hist", cwd=sharded, env=env).returncode == 1
    [posted] = fake_github.comments_on(REPO, 7)
    full_table = posted["body"].split("<details>", 1)[1]
    assert "| History |" in full_table.splitlines()[2], full_table[:400]
    assert "| History |" not in posted["body"].split("<details>", 1)[0]
    # the step summary (not the comment) charts the suite over the 2 recorded runs and this one
    step = (tmp_path / "summary.md").read_text()
    assert "#### Trend: the last 3 recorded run(s), this one last" in step
    assert '```mermaid\nxychart-beta\n    title "Suite pass rate (%)"\n' in step
    assert 'x-axis ["#1", "#2", "#3"]' in step and "mermaid" not in posted["body"]
    rates = step.split("    line [", 1)[1].split("]", 1)[0].split(", ")
    # shard 1 alone was recorded twice; this run is every shard merged
    assert len(rates) == 3 and rates[0] == rates[1] == "100.0" and rates[2] == "50.0"
    # no history folder (a first run, or no actions: read): no column, the same gate
    (tmp_path / "summary.md").unlink()
    assert cli("gate", "--history", "nowhere", cwd=sharded, env=env).returncode == 1
    assert "History" not in fake_github.comments_on(REPO, 7)[0]["body"]
    assert "mermaid" not in (tmp_path / "summary.md").read_text()
