"""Drift through the init-written workflows under act against the loopback GitHub (issue 32).

The team's agent is a command agent whose behaviour depends on its harness (CLAUDE.md's rule,
read from the workspace) and on a "model": a switch file outside the repository that every arm
and every run reads alike, so breaking it is drift for everyone. The baseline was recorded with
the model working and main's rule.

  drift       the model breaks after the baseline; a pull request that changes only a
              non-harness file that still triggers runs (a workflow) -> the PR arm and the control
              arm (origin/main's agent) both fail: the check passes, ONE comment says drift and
              how to refresh the baseline.
  regression  the model works; a pull request drops the rule from CLAUDE.md -> the PR arm fails,
              the control arm passes: the check is red, ONE comment says regressed with both
              arms' rates.
  main        the model breaks; a push to main: the report is green with a drift warning, and
              the run summary it uploads records the task drifted beside the baseline's counts.
  refresh     the scheduled baseline.yml reads the history of eval.yml on main (three drifted
              runs of the task) and opens a refresh pull request for just that task.

act runs every job on this host; the agent runs without the sandbox (CI_EVAL_NO_ISOLATION) so
that it can read the shared model file. Each act run takes 30-90 s on the 2-core machine.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import act_helpers
from act_helpers import REPO_ROOT, REPOSITORY, TOKEN, commit_repo, git, job_results, pr_event
from act_helpers import run_act
from fake_github import FakeGitHub
from test_act_report import user_repo

from ci_eval.render.compare import COMMENT_MARKER
from ci_eval.results import history
from ci_eval.results.history import RunSummary, TaskRecord

api = act_helpers.api  # the loopback GitHub fixture, shared by the act tests

TASK = "task-001-slugify-punctuation"
SOLUTION = (REPO_ROOT / "ci_eval" / "templates" / "task" / "solution" / "solve.sh").read_text()
FIX = re.search(r"<<'PY'\n(.*?)^PY$", SOLUTION, re.DOTALL | re.MULTILINE).group(1)
RULE = "RULE-SLUG: punctuation becomes a hyphen.\n"
CONFIG = """\
default_agent: mine
agents:
  mine:
    command: [python3, bot.py]
    harness: [CLAUDE.md, bot.py]
"""


def bot(model: Path) -> str:
    """The agent: the known-good change, only while the model works and the rule reaches it. A
    "degraded" model fails every 4th call (counted in a file beside it, one byte per call
    appended: the offset after its own write is each call's number, also under parallel runs)."""
    counter = model.with_name("calls")
    return f"""\
import os
model = open({str(model)!r}).read()
works = "broken" not in model
if "degraded" in model:
    fd = os.open({str(counter)!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, b"x")
    works = os.lseek(fd, 0, os.SEEK_CUR) % 4 != 0
    os.close(fd)
if works and "RULE-SLUG" in open("CLAUDE.md").read():
    open("slug.py", "w").write({FIX!r})
"""


def ci_eval(repo: Path, *argv: str) -> None:
    done = subprocess.run([sys.executable, "-m", "ci_eval", *argv], cwd=repo,
                          capture_output=True, text=True, timeout=600, check=False,
                          env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(repo),
                               "CI_EVAL_NO_ISOLATION": "1", "PYTHONPATH": str(REPO_ROOT)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def team_repo(tmp_path) -> tuple[Path, Path, list[str]]:
    """init --agent reference (one example task, the workflows), the team's agent, a baseline of
    10/10 recorded on main with the model working; origin/main is that commit."""
    repo = tmp_path / "user-repo"
    flags = user_repo(repo, None, tmp_path, "reference")
    model = tmp_path / "model"
    model.write_text("good\n")
    (repo / "ci-eval.yaml").write_text(CONFIG)
    (repo / "CLAUDE.md").write_text(RULE)
    (repo / "bot.py").write_text(bot(model))
    workflow = repo / ".github" / "workflows" / "eval.yml"
    workflow.write_text(workflow.read_text().replace(
        "          mode: run\n", "          mode: run\n          runs: 2\n"))
    ci_eval(repo, "run", "-k", "10", "-j", "2")
    ci_eval(repo, "baseline", "update", "--all")
    assert json.loads((repo / "baseline.json").read_text())["tasks"][TASK]["passes"] == 10
    (repo / "results").rename(tmp_path / "local-results")
    commit_repo(repo)
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    git(repo, "checkout", "--quiet", "-b", "feature")
    return repo, model, flags


def run_pr(repo: Path, fake, work: Path, flags: list[str]):
    done = run_act(repo, fake, work, event=pr_event(7), extra_flags=flags,
                   env={"CI_EVAL_NO_ISOLATION": "1"}, timeout=900)
    results = job_results(done.stdout)
    assert results.get("plan") == "succeeded", done.stdout[-4000:]
    assert results.get("shard 1/1") == "succeeded", done.stdout[-6000:]
    return done, results


def test_drift_for_everyone_passes_with_one_comment_that_says_drift(tmp_path, api):
    repo, model, flags = team_repo(tmp_path)
    workflow = repo / ".github" / "workflows" / "eval.yml"
    workflow.write_text(workflow.read_text() + "# a comment: no harness file changes\n")
    commit_repo(repo)
    api.add_pull(REPOSITORY, 7, files=[".github/workflows/eval.yml"])
    model.write_text("broken\n")  # after the baseline, for both arms
    done, results = run_pr(repo, api, tmp_path / "act", flags)
    assert results.get("report") == "succeeded", done.stdout[-6000:]
    [posted] = api.comments_on(REPOSITORY, 7)
    body = posted["body"]
    assert body.startswith(COMMENT_MARKER), body
    assert f"| {TASK} | drifted |" in body, body
    assert "main itself has moved since the baseline" in body, body
    assert "run the baseline workflow" in body, body
    assert "control arm (main now) 0/" in body, body
    assert f"::warning title=ci-eval drift::{TASK} drifted" in done.stdout


def test_dropping_the_harness_rule_is_red_with_one_comment_and_both_rates(tmp_path, api):
    repo, _model, flags = team_repo(tmp_path)
    (repo / "CLAUDE.md").write_text("Be brief.\n")  # the rule is gone; main still solves
    commit_repo(repo)
    api.add_pull(REPOSITORY, 7, files=["CLAUDE.md"])
    done, results = run_pr(repo, api, tmp_path / "act", flags)
    assert results.get("report") == "failed", done.stdout[-6000:]
    [posted] = api.comments_on(REPOSITORY, 7)
    body = posted["body"]
    assert "❌ ci-eval: 1 of 1 task(s) fail the gate" in body, body
    assert f"| {TASK} | regressed | 1.00 (10/10) | 0.00 (0/" in body, body
    control = re.search(r"control arm \(main now\) (\d+)/(\d+) = 1\.00", body)
    assert control and control.group(1) == control.group(2), body
    assert "worse than the control arm" in body, body
    assert "drifted" not in body.split("<details>")[0], body


def test_a_push_to_main_below_its_baseline_is_green_and_records_drift(tmp_path, api):
    repo, model, flags = team_repo(tmp_path)
    git(repo, "checkout", "--quiet", "main")
    model.write_text("broken\n")
    event = {"ref": "refs/heads/main", "after": "0" * 40,
             "repository": {"full_name": REPOSITORY, "default_branch": "main"}}
    done = run_act(repo, api, tmp_path / "act", event=event, extra_flags=flags,
                   env={"CI_EVAL_NO_ISOLATION": "1"}, timeout=900)
    results = job_results(done.stdout)
    assert results.get("report") == "succeeded", done.stdout[-6000:]
    assert f"::warning title=ci-eval drift::{TASK} drifted: main is below its baseline" \
        in done.stdout
    [summary_file] = (tmp_path / "act" / "artifacts" / "ci-eval-history").iterdir()
    record = history.read_summary(summary_file).tasks[TASK]
    assert record.gate == "drifted" and record.drifted is True and record.passes == 0
    assert (record.baseline_passes, record.baseline_runs) == (10, 10)
    assert api.comments_on(REPOSITORY, 7) == []


def summary_zip(run_id: int, day: int, passes: int, drifted: bool) -> bytes:
    record = TaskRecord(TASK, 5, passes, 0, 5, gate="drifted" if drifted else "unchanged",
                        drifted=drifted, baseline_passes=10, baseline_runs=10)
    date = f"2026-11-{day:02d}"
    summary = RunSummary(date=date, recorded_at=f"{date}T10:00:00.000000Z", commit="abcd1234",
                         agent="mine", ci_eval_version="0.1.0", tasks={TASK: record},
                         ci_run={"id": run_id, "attempt": 1})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{date}-001-abcd1234.json", history.dumps_summary(summary))
    return buffer.getvalue()


def test_the_scheduled_baseline_workflow_opens_a_refresh_pr_after_three_drifted_pushes(tmp_path):
    repo, model, flags = team_repo(tmp_path)
    git(repo, "checkout", "--quiet", "main")
    model.write_text("degraded\n")  # main has drifted: the refresh records what it does now
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(remote))
    git(repo, "push", "--quiet", str(remote), "main")
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f'[url "{remote}"]\n\tinsteadOf = https://github.com/{REPOSITORY}.git\n')
    event = {"ref": "refs/heads/main", "schedule": "41 5 * * 1",
             "repository": {"full_name": REPOSITORY, "default_branch": "main"}}
    with FakeGitHub(git_remote=str(remote)) as fake:
        fake.add_token(TOKEN, "github-actions[bot]", installation=True)
        for day, (passes, drifted) in enumerate([(5, False), (1, True), (0, True), (1, True)], 1):
            run_id = fake.add_run(REPOSITORY, workflow="eval.yml", branch="main")
            fake.add_artifact(run_id, "ci-eval-history", summary_zip(run_id, day, passes, drifted))
        done = run_act(repo, fake, tmp_path / "act", event=event, workflow="baseline.yml",
                       event_name="schedule", extra_flags=flags, timeout=900,
                       env={"GIT_CONFIG_GLOBAL": str(gitconfig), "CI_EVAL_NO_ISOLATION": "1"})
        output = done.stdout + done.stderr
        assert done.returncode == 0, output[-6000:]
        results = job_results(done.stdout)
        assert results == {"drift": "succeeded", "plan": "succeeded",
                           "shard 1/1": "succeeded", "propose": "succeeded"}, output[-6000:]
        assert "1 task(s) drifted on main in each of their last 3+ recorded runs (of 4)" in output
        [pr] = fake.pulls_of(REPOSITORY)
    assert pr["base"]["ref"] == "main" and TASK in pr["body"], pr
    branch = pr["head"]["ref"]
    refreshed = json.loads(git(remote, "show", f"{branch}:baseline.json"))
    assert (refreshed["tasks"][TASK]["passes"], refreshed["tasks"][TASK]["runs"]) == (30, 40)
    assert f"| {TASK} | 1.00 (10/10) | 0.75 (30/40) |" in pr["body"], pr["body"]


def test_a_scheduled_run_without_drift_runs_no_agent(tmp_path):
    repo, _model, flags = team_repo(tmp_path)
    git(repo, "checkout", "--quiet", "main")
    event = {"ref": "refs/heads/main", "schedule": "41 5 * * 1",
             "repository": {"full_name": REPOSITORY, "default_branch": "main"}}
    with FakeGitHub() as fake:
        fake.add_token(TOKEN, "github-actions[bot]", installation=True)
        for day, (passes, drifted) in enumerate([(1, True), (5, False), (1, True)], 1):
            run_id = fake.add_run(REPOSITORY, workflow="eval.yml", branch="main")
            fake.add_artifact(run_id, "ci-eval-history", summary_zip(run_id, day, passes, drifted))
        done = run_act(repo, fake, tmp_path / "act", event=event, workflow="baseline.yml",
                       event_name="schedule", extra_flags=flags)
        assert done.returncode == 0, done.stdout[-4000:]
        assert job_results(done.stdout) == {"drift": "succeeded"}, done.stdout[-4000:]
        assert "0 task(s) drifted on main" in done.stdout + done.stderr
        assert fake.pulls_of(REPOSITORY) == []


def recent_summary_zip(run_id: int, days_ago: int, passes: int) -> bytes:
    """A push to main judged against the 10/10 baseline, `days_ago` days before today (UTC)."""
    day = (dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=days_ago)).isoformat()
    record = TaskRecord(TASK, 5, passes, 0, 5, gate="drifted", drifted=True, baseline_passes=10,
                        baseline_runs=10)
    summary = RunSummary(date=day, recorded_at=f"{day}T10:00:00.000000Z", commit="abcd1234",
                         agent="mine", ci_eval_version="0.1.0", tasks={TASK: record},
                         ci_run={"id": run_id, "attempt": 1})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{day}-001-abcd1234.json", history.dumps_summary(summary))
    return buffer.getvalue()


def test_main_s_record_of_the_drift_spares_the_control_arm(tmp_path, api):
    """Main's last pushes already failed the task (their run summaries, fetched by the shard
    and the report jobs): the PR is judged against main's record, drifted, with no control run."""
    repo, model, flags = team_repo(tmp_path)
    workflow = repo / ".github" / "workflows" / "eval.yml"
    workflow.write_text(workflow.read_text() + "# a comment: no harness file changes\n")
    commit_repo(repo)
    api.add_pull(REPOSITORY, 7, files=[".github/workflows/eval.yml"])
    for days_ago in (3, 2, 1):
        run_id = api.add_run(REPOSITORY, workflow="eval.yml", branch="main")
        api.add_artifact(run_id, "ci-eval-history", recent_summary_zip(run_id, days_ago, 0))
    model.write_text("broken\n")
    done, results = run_pr(repo, api, tmp_path / "act", flags)
    assert results.get("report") == "succeeded", done.stdout[-6000:]
    [posted] = api.comments_on(REPOSITORY, 7)
    body = posted["body"]
    assert f"| {TASK} | drifted |" in body, body
    assert "main's record 0/15 over 3 push(es)" in body, body
    assert "control arm (main now)" not in body, body  # the record settled it: no control run
    assert "main itself has moved since the baseline" in body, body
