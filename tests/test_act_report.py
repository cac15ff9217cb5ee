"""The report job when something before it went wrong, under act against the loopback GitHub:
a shard that died before its upload, a plan that failed, an agent that could not start (no key),
and a dispatch input that tries to be an option. Each must end red, with one comment saying why.

A "crash" is a step that fails before the action's run step in shard 2 only (a runner that died
would leave the same thing behind: no results-shard-2 artifact).
"""

from __future__ import annotations

import json
import re
import shutil

import act_helpers
from act_helpers import (
    REPO_ROOT,
    REPOSITORY,
    commit_repo,
    job_results,
    pr_event,
    run_act,
)

from ci_eval.agents.presets import PRESETS
from ci_eval.scaffold import ACTION_REF
from ci_eval.render.compare import COMMENT_MARKER

INSTALLS = {name: preset.install for name, preset in PRESETS.items()}

api = act_helpers.api  # the loopback GitHub fixture, shared by the act tests

TASKS = ("task-001-alpha", "task-002-beta")
VARIABLES = {"CI_EVAL_SHARDS": "2", "CI_EVAL_PIP_PACKAGES": "pip"}
CRASH_SHARD_2 = """      - name: crash (test)
        if: matrix.shard == 2
        run: exit 1
      - uses: ./
        with:
          mode: run
"""


def own_repo(root, make_task, workflow_edit=None):
    """ci-eval's own action.yml and eval.yml (edited), two tasks, no baseline yet."""
    shutil.copy(REPO_ROOT / "action.yml", root / "action.yml")
    (root / ".github" / "workflows").mkdir(parents=True)
    text = (REPO_ROOT / ".github" / "workflows" / "eval.yml").read_text()
    if workflow_edit:
        text = workflow_edit(text)
    (root / ".github" / "workflows" / "eval.yml").write_text(text)
    for name in TASKS:
        make_task(root, name)
    commit_repo(root)
    return root


def crash_shard_2(text: str) -> str:
    old = "      - uses: ./\n        with:\n          mode: run\n"
    assert text.count(old) == 1
    return text.replace(old, CRASH_SHARD_2)


def test_a_shard_that_uploads_nothing_fails_the_check_and_is_named(repo_root, make_task, api,
                                                                   tmp_path):
    repo = own_repo(repo_root, make_task, crash_shard_2)
    done = run_act(repo, api, tmp_path / "act", event=pr_event(7), variables=VARIABLES)
    results = job_results(done.stdout)
    assert results.get("report") == "failed", done.stdout[-4000:]
    assert sorted(p.name for p in (tmp_path / "act" / "artifacts").iterdir()
                  if p.name != "cache") == [
        "ci-eval-dashboard", "results-shard-1"]
    [posted] = api.comments_on(REPOSITORY, 7)
    body = posted["body"]
    assert body.startswith(COMMENT_MARKER)
    assert "❌ ci-eval: 1 of 2 task(s) fail the gate" in body, body
    note = re.search(r"Shard 2/2 uploaded no results \(its job failed or was cancelled before "
                     r"the upload\): its 1 task\(s\) are inconclusive: (\S+)", body)
    assert note, body
    assert re.fullmatch(r"https://github\.com/acme/widgets/actions/runs/\d+", note.group(1))
    rows = [line for line in body.splitlines() if "| inconclusive |" in line]
    assert rows and all("shard 2/2 uploaded no results" in row for row in rows), rows
    assert "new" in body  # shard 1's task, with results and no baseline: new, not failing


def test_a_failed_plan_fails_the_check_with_a_comment(repo_root, make_task, api, tmp_path):
    repo = own_repo(repo_root, make_task)
    (repo / "tasks" / TASKS[1] / "metadata.json").write_text("{not json")
    commit_repo(repo)
    done = run_act(repo, api, tmp_path / "act", event=pr_event(7), variables=VARIABLES)
    results = job_results(done.stdout)
    assert results.get("plan") == "failed", results
    assert results.get("report") == "failed", done.stdout[-4000:]
    [posted] = api.comments_on(REPOSITORY, 7)
    assert "❌ ci-eval: the plan job ended `failure`: no task was evaluated" in posted["body"]
    assert "/actions/runs/" in posted["body"]


def user_repo(root, make_task, tmp_path, agent: str, *init_args: str):
    """What `ci-eval init --agent AGENT` writes (one example task), the action from "GitHub"."""
    from ci_eval.main import main

    root.mkdir(exist_ok=True)
    commit_repo(root)
    assert main(["--root", str(root), "init", "--agent", agent, *init_args]) == 0
    commit_repo(root)
    action_repo = tmp_path / "ci-eval-action"
    action_repo.mkdir()
    (action_repo / "action.yml").write_text((REPO_ROOT / "action.yml").read_text())
    return ["--local-repository", f"{ACTION_REF}={action_repo}"]


def test_a_missing_key_ends_in_one_agent_setup_broken_comment(tmp_path, make_task, api):
    """init --agent claude-code, no ANTHROPIC_API_KEY secret. The CLI is not what is under test
    here (preflight refuses before starting it): the install step finds a prefix that already
    holds the pinned version's package.json and installs nothing."""
    repo = tmp_path / "user-repo"
    flags = user_repo(repo, make_task, tmp_path, "claude-code")
    prefix = tmp_path / "agent-prefix"
    package = prefix / "lib" / "node_modules" / "@anthropic-ai" / "claude-code"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"version": INSTALLS["claude-code"].version}))
    (prefix / "bin").mkdir()
    (prefix / "bin" / "claude").write_text("#!/bin/sh\necho 'stand-in: never started' >&2\nexit 1\n")
    (prefix / "bin" / "claude").chmod(0o755)
    previous = api.add_comment(REPOSITORY, 7, "github-actions[bot]",
                               f"{COMMENT_MARKER}\nthe previous run's report\n")
    done = run_act(repo, api, tmp_path / "act", event=pr_event(7), extra_flags=flags,
                   env={"CI_EVAL_AGENT_PREFIX": str(prefix)})
    results = job_results(done.stdout)
    assert results.get("report") == "failed", done.stdout[-4000:]
    assert results.get("shard 1/1") == "failed", results
    [posted] = api.comments_on(REPOSITORY, 7)
    assert posted["id"] == previous
    # the progress job's note went on top of the previous report, then the report replaced it
    assert results.get("progress") == "succeeded", results
    [_, noted, final] = api.bodies[previous]
    assert "is under way**: [workflow run](https://github.com/acme/widgets/actions/runs/" in noted
    assert noted.endswith("\n\nthe previous run's report\n") and final == posted["body"]
    body = posted["body"]
    assert "### ❌ ci-eval: agent setup broken: ANTHROPIC_API_KEY is not set\n" in body, body
    assert "> shard 1/1: agent claude-code (claude-code): ANTHROPIC_API_KEY is not set" in body
    assert "stand-in: never started" not in done.stdout


def test_a_dispatch_input_that_is_an_option_is_refused(tmp_path, make_task, api):
    repo = tmp_path / "user-repo"
    flags = user_repo(repo, make_task, tmp_path, "reference")
    event = {"inputs": {"tasks": "--remote https://attacker.example/x.git", "runs": "2",
                        "agent": "", "shards": "1"},
             "repository": {"full_name": REPOSITORY, "default_branch": "main"}}
    done = run_act(repo, api, tmp_path / "act", event=event, workflow="baseline.yml",
                   event_name="workflow_dispatch", extra_flags=flags)
    assert done.returncode != 0
    assert job_results(done.stdout) == {"plan": "failed"}, done.stdout[-4000:]
    assert ("::error title=ci-eval::tasks: expected task ids or numbers separated by spaces, "
            "got '--remote'") in done.stdout
    assert "Plan the shards" not in done.stdout, done.stdout[-3000:]
    assert [p["number"] for p in api.pulls_of(REPOSITORY)] == [7]  # the fixture's, no other
