"""Issue 32's "Must show" through the real Claude Code CLI (pinned in tests/real_clis.py) against
the loopback fake model (tests/fake_models) in its marker mode: the fake answers with the right
edit only when the rule of the repo's CLAUDE.md is in the request. main records a baseline where
the model solves; then

  (a) the model degrades for everyone (every answer wrong) and a PR changes only README.md:
      `run --control-ref main` + `compare` pass (exit 0) and the report says drift;
  (b) the model still solves with the rule, and a PR drops the rule from CLAUDE.md: main's arm
      (main's CLAUDE.md, read from main's tree) solves, the PR's does not: exit 1, regressed,
      both arms' rates in the report.

and, on the path that saves the control arm's runs (control.CONTROL_FROM_STAGE):

  (c) the model solves, but misses once in each of the PR's first two stages (2 of 3, 4 of 6):
      below the line at the second stage but not confirmed, the PR's arm runs alone to the
      third (stages 3,6,9), clears the line there (7 of 9), and main's arm never runs (from
      the second stage on, it would have run 9 times); compare passes.

Small stages (-k 3, --confirm-stages 3,6 or 3,6,9) keep each case to a few real runs. Skipped (loudly; a
failure with CI_EVAL_NO_SKIPS=1) where npm is missing, as tests/test_real_clis.py.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import fake_models
import pytest
import real_clis

KEY = "sk-fake-0123456789abcdef"
MARKER = "HARNESS-RULE-7F3A"
AGENT_TIMEOUT = 240
TASK = "task-001-answer"
STAGES = ("-k", "3", "--confirm-stages", "3,6", "-j", "3")


@pytest.fixture(scope="module")
def cli_bins() -> dict[str, str]:
    why = real_clis.missing()
    if why:
        pytest.skip(f"real agent CLIs not installable here: {why}")
    return real_clis.install()


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args],
                   check=True, capture_output=True, text=True, timeout=60)


def _repo(root: Path, url: str) -> Path:
    real_clis.write_answer_task(root, AGENT_TIMEOUT, TASK)
    (root / "CLAUDE.md").write_text(f"# Team rules\n\n- {MARKER}: answers are written as "
                                    "digits.\n")
    (root / "README.md").write_text("# The team's repo\n")
    (root / "ci-eval.yaml").write_text(json.dumps({"default_agent": "team", "agents": {"team": {
        "preset": "claude-code", "model": "claude-sonnet-4-5", "base_url": url}}}) + "\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    return root


def _records(root: Path, *folder: str) -> list[dict]:
    path = root.joinpath("results", *folder, f"{TASK}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _run(cli, root: Path, bins: dict, *args: str):
    env = {"PATH": f"{bins['claude']}{os.pathsep}{os.environ['PATH']}", "ANTHROPIC_API_KEY": KEY}
    ran = cli("run", "--max-attempts", "1", "--fresh", *args, cwd=root, env=env,
              timeout=AGENT_TIMEOUT * 4 + 120)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return ran


def _baseline_then_readme_pr(cli, root: Path, bins: dict) -> None:
    """main records a baseline where the model solves (2 runs); then a PR branch that changes
    only README.md is checked out."""
    _run(cli, root, bins, "-k", "2", "-j", "2")
    assert [r["status"] for r in _records(root)] == ["pass"] * 2
    assert cli("baseline", "update", "--all", cwd=root).returncode == 0
    git(root, "add", "baseline.json")
    git(root, "commit", "-qm", "baseline: the model solves")
    git(root, "checkout", "-qb", "pr-readme")
    (root / "README.md").write_text("# The team's repo\n\nNow with a typo fixed.\n")
    git(root, "commit", "-qam", "readme")


def test_drift_for_everyone_passes_and_a_dropped_rule_fails_against_main_now(cli_bins, tmp_path,
                                                                            cli):
    with fake_models.FakeModelServer("solve", marker=MARKER) as fake:
        root = _repo(tmp_path / "repo", fake.url)
        # (a) the model degrades for everyone; the PR changes only README.md
        _baseline_then_readme_pr(cli, root, cli_bins)
        fake.settings = dataclasses.replace(fake.settings, mode="wrong")
        _run(cli, root, cli_bins, *STAGES, "--confirm-against", "baseline.json",
             "--control-ref", "main")
        pr, control = _records(root), _records(root, "control")
        assert pr and all(r["status"] == "fail" for r in pr), [r["reason"] for r in pr]
        assert control and all(r["status"] == "fail" and r["arm"] == "control" for r in control)
        compared = cli("compare", "--format", "markdown", cwd=root)
        assert compared.returncode == 0, compared.stdout + compared.stderr
        assert "1 drifted" in compared.stdout
        assert "main itself has moved since the baseline" in compared.stdout
        assert f"control arm (main now) 0/{len(control)}" in compared.stdout

        # (b) the model solves when CLAUDE.md carries the rule; the PR drops it
        git(root, "checkout", "-q", "main")
        git(root, "checkout", "-qb", "pr-rule")
        (root / "CLAUDE.md").write_text("# Team rules\n\n- Be brief.\n")
        git(root, "commit", "-qam", "drop the rule")
        fake.settings = dataclasses.replace(fake.settings, mode="solve")
        _run(cli, root, cli_bins, *STAGES, "--confirm-against", "baseline.json",
             "--control-ref", "main")
        pr, control = _records(root), _records(root, "control")
        assert pr and all(r["status"] == "fail" for r in pr), [r["reason"] for r in pr]
        # main's arm gets main's CLAUDE.md (read from main's tree), so it still solves
        assert control and all(r["status"] == "pass" for r in control), \
            [r["reason"] for r in control]
    compared = cli("compare", "--format", "json", cwd=root)
    assert compared.returncode == 1, compared.stdout + compared.stderr
    (task,) = json.loads(compared.stdout)["tasks"]
    assert task["status"] == "regressed"
    assert task["current"]["passes"] == 0 and task["current"]["runs"] == len(pr)
    assert task["control"] == {"passes": len(control), "runs": len(control), "pass_rate": 1.0}
    markdown = cli("compare", "--format", "markdown", cwd=root).stdout
    assert "1 regressed" in markdown and f"0/{len(pr)}" in markdown
    assert f"control arm (main now) {len(control)}/{len(control)} = 1.00" in markdown


def test_an_unlucky_pr_arm_runs_alone_to_the_third_stage_and_main_s_arm_never_runs(
        cli_bins, tmp_path, cli):
    with fake_models.FakeModelServer("solve", marker=MARKER) as fake:
        root = _repo(tmp_path / "repo", fake.url)
        _baseline_then_readme_pr(cli, root, cli_bins)
        # one wrong edit in each of the PR's first two stages (their third run), then none
        fake.settings = dataclasses.replace(fake.settings, wrong_edits=frozenset(
            {fake.edit_requests + 3, fake.edit_requests + 6}))
        _run(cli, root, cli_bins, "-k", "3", "--confirm-stages", "3,6,9", "-j", "3",
             "--confirm-against", "baseline.json", "--control-ref", "main")
        pr, control = _records(root), _records(root, "control")
        assert fake.edit_requests == 2 + 9  # the baseline's runs and the PR's, one edit each
    assert sorted(r["status"] for r in pr) == ["fail"] * 2 + ["pass"] * 7, \
        [r["reason"] for r in pr]
    assert control == []
    compared = cli("compare", "--format", "json", cwd=root)
    assert compared.returncode == 0, compared.stdout + compared.stderr
    (task,) = json.loads(compared.stdout)["tasks"]
    assert task["status"] == "unchanged" and task.get("control") is None, task
    assert task["current"]["passes"] == 7 and task["current"]["runs"] == 9
