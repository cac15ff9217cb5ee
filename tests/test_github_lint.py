"""The action and the workflows pass the linters CI runs (.ci/lint-workflows: actionlint with
shellcheck, check-jsonschema with GitHub's schemas, zizmor offline with nothing above low), and
keep the rules the linters cannot see."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import REPO_ROOT

WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml"))


def test_lint_workflows_script_passes():
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(REPO_ROOT / ".ci" / "lint-workflows")], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    assert "lint-workflows: ok" in done.stdout
    assert "No findings to report" in done.stdout + done.stderr


def _run_scripts(document) -> list[str]:
    found = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "run" and isinstance(value, str):
                found.append(value)
            else:
                found += _run_scripts(value)
    elif isinstance(document, list):
        for item in document:
            found += _run_scripts(item)
    return found


def test_no_expression_inside_a_run_script():
    """Inputs, branch names and titles reach shells through env:, never inline ${{ }}."""
    for path in [REPO_ROOT / "action.yml", *WORKFLOWS]:
        for script in _run_scripts(yaml.safe_load(path.read_text())):
            assert "${{" not in script, f"{path.name}: {script[:80]}"


def test_least_privilege_and_no_pull_request_target():
    for path in WORKFLOWS:
        data = yaml.safe_load(path.read_text())
        triggers = data.get(True, data.get("on"))  # YAML 1.1 reads `on:` as True
        assert "pull_request_target" not in triggers, path.name
        assert data["permissions"] in ({}, {"contents": "read"}), path.name
        for name, job in data["jobs"].items():
            assert "permissions" in job, f"{path.name}: job {name}"
    eval_jobs = yaml.safe_load((REPO_ROOT / ".github/workflows/eval.yml").read_text())["jobs"]
    assert eval_jobs["shard"]["strategy"]["fail-fast"] is False
    writers = {name for name, job in eval_jobs.items()
               if any(v == "write" for v in job["permissions"].values())}
    assert writers == {"report", "dashboard"}
    # the optional Pages deploy: only on pushes, only when the repository opts in, Pages scopes only
    dashboard = eval_jobs["dashboard"]
    assert dashboard["permissions"] == {"pages": "write", "id-token": "write"}
    assert "github.event_name == 'push'" in dashboard["if"]
    assert "vars.CI_EVAL_PAGES == 'true'" in dashboard["if"]


def test_gc_workflow_is_weekly_and_manual_with_only_the_scopes_it_needs():
    from ci_eval.scaffold import ACTION_REF
    from ci_eval.scaffold.workflows import render_workflow

    ours = (REPO_ROOT / ".github/workflows/gc.yml").read_text()
    written = render_workflow((REPO_ROOT / "ci_eval/templates/workflows/gc.yml").read_text(),
                              action=ACTION_REF, default_branch="main", env_block="")
    for path, text in (("gc.yml", ours), ("init's gc.yml", written)):
        data = yaml.safe_load(text)
        triggers = data.get(True, data.get("on"))
        assert set(triggers) == {"schedule", "workflow_dispatch"}, path
        [cron] = triggers["schedule"]
        _minute, _hour, day, month, weekday = cron["cron"].split()
        assert (day, month) == ("*", "*") and weekday.isdigit(), cron  # once a week
        assert data["permissions"] == {}
        assert {name: job["permissions"] for name, job in data["jobs"].items()} == {
            "gc": {"actions": "read", "contents": "write", "pull-requests": "write"}}
        steps = data["jobs"]["gc"]["steps"]
        assert steps[0]["with"]["persist-credentials"] is False
        assert steps[1]["with"]["mode"] == "gc"


def test_remote_actions_are_pinned_to_commits():
    for path in [REPO_ROOT / "action.yml", *WORKFLOWS]:
        for ref in re.findall(r"uses:\s*([^\s#]+)", path.read_text()):
            if not ref.startswith("./"):
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), f"{path.name}: {ref}"
