"""`ci-eval run --control-ref REF` and `compare` through the real CLI: a command agent whose
behaviour depends on a file of each ref's tree (its script) and on a "model" outside the repo
that both arms share. Main's script solves the task while the model works; after the baseline
the model breaks for everyone (drift), or a PR drops main's rule (a regression)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from harness_helpers import cli, read_lines, write_task

from ci_eval.results.merge import merge_shard_folders
from ci_eval.tasks.load import load_tasks

TASK = "task-001-greet"
ENV = {**os.environ, "CI_EVAL_NO_ISOLATION": "1"}  # the agent reads the shared "model" file
RUN = ("run", "-k", "5", "-j", "2", "--confirm-against", "baseline.json")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t",
                           *args], check=True, capture_output=True, text=True).stdout


def _solver(model: Path, *, keeps_rule: bool = True) -> str:
    rule = "echo hello > greet.txt\n" if keeps_rule else "exit 0\n"
    return f'if grep -q broken "{model}"; then exit 0; fi\n{rule}'


@pytest.fixture
def repo(tmp_path) -> Path:
    """main: the task, agents/solve.sh, ci-eval.yaml, a 40/40 baseline; then branch `pr`."""
    repo = tmp_path / "repo"
    write_task(repo)
    model = tmp_path / "model"
    model.write_text("good\n")
    (repo / "agents").mkdir()
    (repo / "agents" / "solve.sh").write_text(_solver(model))
    (repo / "ci-eval.yaml").write_text(
        "default_agent: solver\nagents:\n  solver:\n    command: [bash, agents/solve.sh]\n")
    (repo / "README.md").write_text("readme\n")
    prompt_hash = load_tasks(repo)[0].prompt_hash
    (repo / "baseline.json").write_text(json.dumps({"schema_version": 1, "agent": "solver",
        "tasks": {TASK: {"passes": 40, "runs": 40, "pass_rate": 1.0, "avg_tokens": None,
                         "avg_wall_seconds": None, "recorded": "2026-11-01",
                         "aspirational": False, "prompt_hash": prompt_hash,
                         "snapshots": [{"recorded": "2026-11-01", "passes": 40, "runs": 40}]}}}))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main")
    git(repo, "checkout", "-qb", "pr")
    return repo


def _commit(repo: Path, message: str) -> None:
    git(repo, "commit", "-qam", message)


def test_drift_for_everyone_is_not_the_prs_regression(repo, tmp_path):
    (repo / "README.md").write_text("a PR that changes nothing relevant\n")
    _commit(repo, "readme")
    (tmp_path / "model").write_text("broken\n")  # after the baseline, for both arms
    proc = cli(*RUN, "--control-ref", "main", cwd=repo, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr
    control = read_lines(repo / "results" / "control" / f"{TASK}.jsonl")
    pr = read_lines(repo / "results" / f"{TASK}.jsonl")
    assert control and all(r["arm"] == "control" and r["status"] == "fail" for r in control)
    assert all("arm" not in r for r in pr)
    compare = cli("compare", cwd=repo, env=ENV)
    assert compare.returncode == 0, compare.stdout + compare.stderr
    assert "drifted" in compare.stdout
    assert "main itself has moved since the baseline" in compare.stdout
    assert f"control arm (main now) 0/{len(control)}" in compare.stdout
    markdown = cli("compare", "--format", "markdown", cwd=repo, env=ENV).stdout
    assert "1 drifted" in markdown and "main itself has moved since the baseline" in markdown
    # the action's report: the step summary says it, and a warning annotation names the task
    summary = tmp_path / "summary.md"
    gate = cli("gate", "--no-comment", cwd=repo, env={**ENV, "GITHUB_STEP_SUMMARY": str(summary),
                                                      "GITHUB_OUTPUT": str(tmp_path / "out")})
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "main itself has moved since the baseline" in summary.read_text()
    assert f"::warning title=ci-eval drift::{TASK} drifted: " in gate.stdout
    # the results survive --resume (nothing more to run) and `report` reads the PR arm only
    # a crash while control run 3 was in flight: --resume runs it again, and nothing else
    path = repo / "results" / "control" / f"{TASK}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in control if r["run"] != 3))
    again = cli(*RUN, "--control-ref", "main", "--resume", cwd=repo, env=ENV, timeout=300)
    assert again.returncode == 0, again.stderr
    resumed = read_lines(path)
    assert sorted(r["run"] for r in resumed) == sorted(r["run"] for r in control)
    assert len(read_lines(repo / "results" / f"{TASK}.jsonl")) == len(pr)
    report = cli("report", "--json", cwd=repo, env=ENV)
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["tasks"][0]["runs"] == len(pr)
    # drift: fail in ci-eval.yaml makes the same results fail the check
    with open(repo / "ci-eval.yaml", "a") as config:
        config.write("gate:\n  drift: fail\n")
    assert cli("compare", cwd=repo, env=ENV).returncode == 1


def test_a_pr_worse_than_main_now_fails_with_both_rates(repo):
    (repo / "agents" / "solve.sh").write_text(_solver(repo.parent / "model", keeps_rule=False))
    _commit(repo, "drop the rule")
    proc = cli(*RUN, "--control-ref", "main", cwd=repo, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr
    control = read_lines(repo / "results" / "control" / f"{TASK}.jsonl")
    assert control and all(r["status"] == "pass" for r in control)  # REF's script, not the PR's
    compare = cli("compare", "--format", "json", cwd=repo, env=ENV)
    assert compare.returncode == 1, compare.stdout + compare.stderr
    task = json.loads(compare.stdout)["tasks"][0]
    assert task["status"] == "regressed" and task["current"]["passes"] == 0
    assert task["control"] == {"passes": len(control), "runs": len(control), "pass_rate": 1.0}
    markdown = cli("compare", "--format", "markdown", cwd=repo, env=ENV).stdout
    assert f"control arm (main now) {len(control)}/{len(control)} = 1.00" in markdown
    assert "worse than the control arm" in markdown

    # shards: each shard's control folder is merged with it (what `ci-eval gate` compares)
    results = repo / "results"
    shard = results / "shard-1"
    shard.mkdir()
    shutil.move(results / f"{TASK}.jsonl", shard)
    shutil.move(results / "control", shard / "control")
    merged, count = merge_shard_folders(results)
    assert count == 1
    assert len(read_lines(merged / "control" / f"{TASK}.jsonl")) == len(control)
    again = cli("compare", "--results", "results/merged", "--format", "json", cwd=repo, env=ENV)
    assert json.loads(again.stdout)["tasks"][0]["control"]["runs"] == len(control)
    by_hand = cli("merge", "results/shard-1", "--out", "by-hand", cwd=repo, env=ENV)
    assert by_hand.returncode == 0, by_hand.stderr
    assert len(read_lines(repo / "by-hand" / "control" / f"{TASK}.jsonl")) == len(control)


def test_a_task_that_clears_the_baseline_costs_no_control_run(repo):
    proc = cli(*RUN, "--control-ref", "main", cwd=repo, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(read_lines(repo / "results" / f"{TASK}.jsonl")) == 5
    assert not list((repo / "results" / "control").glob("*.jsonl"))
    assert cli("compare", cwd=repo, env=ENV).returncode == 0


def _one_line(proc, *parts: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for part in parts:
        assert part in lines[0], lines[0]


def test_bad_control_refs_are_refused_before_any_run(repo):
    _one_line(cli("run", "--control-ref", "main", cwd=repo, env=ENV), "--control-ref",
              "--confirm-against")
    _one_line(cli(*RUN, "--control-ref", "no-such-branch", cwd=repo, env=ENV),
              "--control-ref", "no commit")
    _one_line(cli(*RUN, "--control-ref", "--upload-pack=touch /tmp/x", cwd=repo, env=ENV),
              "--control-ref", "expected a git ref")
    # a REF whose ci-eval.yaml has no such agent
    (repo / "ci-eval.yaml").write_text("agents:\n  other:\n    command: [bash, x.sh]\n")
    git(repo, "commit", "-qam", "rename the agent")
    git(repo, "branch", "renamed")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-qb", "pr2")
    _one_line(cli(*RUN, "--control-ref", "renamed", cwd=repo, env=ENV), "--control-ref",
              "renamed")
    # a REF whose ci-eval.yaml is broken: its file and field are named, nothing is left behind
    git(repo, "checkout", "-qb", "broken")
    (repo / "ci-eval.yaml").write_text("agents: [\n")
    git(repo, "commit", "-qam", "break the config")
    git(repo, "checkout", "-q", "pr2")
    leftovers = set(Path(tempfile.gettempdir()).glob("ci-eval-control-*"))
    _one_line(cli(*RUN, "--control-ref", "broken", cwd=repo, env=ENV), "--control-ref",
              "broken", "ci-eval.yaml")
    assert set(Path(tempfile.gettempdir()).glob("ci-eval-control-*")) <= leftovers
    assert not (repo / "results").exists()


def test_control_results_must_be_marked(repo):
    proc = cli(*RUN, cwd=repo, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr
    folder = repo / "results" / "control"
    folder.mkdir()
    shutil.copy(repo / "results" / f"{TASK}.jsonl", folder)  # the PR's runs posing as main's
    _one_line(cli("compare", cwd=repo, env=ENV), f"control/{TASK}.jsonl:1", "arm")
    lines = (repo / "results" / f"{TASK}.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["arm"] = "treatment"
    (repo / "results" / f"{TASK}.jsonl").write_text("\n".join([json.dumps(record), *lines[1:]])
                                                    + "\n")
    shutil.rmtree(folder)
    _one_line(cli("compare", cwd=repo, env=ENV), f"{TASK}.jsonl:1", "arm",
              "expected one of pr, control")


def test_refs_tree_is_unpacked_plain(tmp_path):
    """REF is hostile input: links out of its tree are not unpacked, and its git config (a
    hook, a filter) is never consulted beyond the repo's own."""
    from ci_eval.run.control_ref import control_arm

    repo = tmp_path / "repo"
    (repo / "agents").mkdir(parents=True)
    (repo / "agents" / "solve.sh").write_text("echo hello > greet.txt\n")
    (repo / "ci-eval.yaml").write_text(
        "default_agent: solver\nagents:\n  solver:\n    command: [bash, agents/solve.sh]\n")
    (repo / "out").symlink_to("/etc")
    (repo / "up").symlink_to("../../..")
    (repo / "inside").symlink_to("agents/solve.sh")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main")
    arm = control_arm(repo, "main", None, workdir=tmp_path / "work")
    tree = arm.harness_root
    assert arm.name == "control" and arm.agent.name == "solver"
    assert (tree / "agents" / "solve.sh").read_text() == "echo hello > greet.txt\n"
    assert (tree / "inside").is_symlink()
    assert not (tree / "out").exists() and not (tree / "out").is_symlink()
    assert not (tree / "up").exists() and not (tree / "up").is_symlink()
    assert not (tmp_path / "work" / "tree.tar").exists()


def test_the_control_arm_runs_with_main_s_harness_files(repo):
    """The rule lives in a harness file (agents.solver.harness): main's RULES.md reaches the
    control arm's workspace, the PR's (which drops the rule) reaches the PR's runs."""
    script = 'if grep -q "write hello" RULES.md 2>/dev/null; then echo hello > greet.txt; fi\n'
    (repo / "agents" / "solve.sh").write_text(script)
    (repo / "RULES.md").write_text("Rule: write hello to greet.txt\n")
    (repo / "ci-eval.yaml").write_text(
        "default_agent: solver\nagents:\n  solver:\n    command: [bash, agents/solve.sh]\n"
        "    harness: [RULES.md]\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the rule as a harness file")
    git(repo, "branch", "-f", "main", "HEAD")
    (repo / "RULES.md").write_text("Rule: be brief\n")
    _commit(repo, "drop the rule from the harness")
    proc = cli(*RUN, "--control-ref", "main", cwd=repo, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr
    control = read_lines(repo / "results" / "control" / f"{TASK}.jsonl")
    pr = read_lines(repo / "results" / f"{TASK}.jsonl")
    assert control and all(r["status"] == "pass" for r in control)
    assert pr and all(r["status"] == "fail" for r in pr)
    assert {r["harness"] for r in control}.isdisjoint({r["harness"] for r in pr})
    compare = cli("compare", "--format", "json", cwd=repo, env=ENV)
    assert compare.returncode == 1, compare.stdout + compare.stderr
    assert json.loads(compare.stdout)["tasks"][0]["status"] == "regressed"
