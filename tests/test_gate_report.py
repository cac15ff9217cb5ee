"""`ci-eval gate`'s report mode in process (github/report.py): the step output `regressed`
counts gated regressions only, and a sharded run with a planned shard missing records no run
summary on the default branch (a complete one does). GitHub is only the environment here: a
push has no pull request to comment on and, without GITHUB_RUN_ID, no jobs to list."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest
from test_github_gate import read_outputs

from ci_eval.github.report import ReportRequest, outputs_of, report
from ci_eval.results.summary import summarize
from ci_eval.tasks.load import load_task
from ci_eval.verdict import gate, model
from ci_eval.verdict.baseline import Baseline, BaselineEntry

HASH = "sha256:" + "a" * 64


def _result(task: str, outcomes: str) -> model.TaskResult:
    runs = [{"run": i, "task": task, "status": "pass" if c == "p" else "fail",
             "passed": c == "p", "agent": "ref", "prompt_hash": HASH}
            for i, c in enumerate(outcomes, start=1)]
    return model.TaskResult(summarize(task, runs, None), frozenset({HASH}))


def test_regressed_counts_gated_regressions_only():
    entries = {task: BaselineEntry(task, passes, 5, "2026-01-01", HASH)
               for task, passes in [("task-001-drop", 5), ("task-002-fine", 5),
                                    ("task-003-hope", 2), ("task-004-gone", 5)]}
    tasks = {task: model.TaskState(task=task, number=int(task.split("-")[1]), prompt_hash=HASH)
             for task in [*entries, "task-005-new"]}
    results = {"task-001-drop": _result("task-001-drop", "fffff"),  # regressed, gated
               "task-002-fine": _result("task-002-fine", "ppppp"),
               "task-003-hope": _result("task-003-hope", "fffff"),  # below 0.60: aspirational
               "task-005-new": _result("task-005-new", "fffff")}  # no baseline: new
    verdict = gate.compare(Baseline("ref", entries), tasks, results, k=5)
    statuses = {t.task: (t.status, t.gated) for t in verdict.tasks}
    assert statuses == {"task-001-drop": ("regressed", True), "task-002-fine": ("unchanged", True),
                        "task-003-hope": ("aspirational", False),
                        "task-004-gone": ("inconclusive", True), "task-005-new": ("new", False)}
    outputs = outputs_of(verdict, "https://example.invalid/c/1")
    assert outputs == {"verdict": "fail", "regressed": "1", "failed": "2", "exit-code": "1",
                       "comment-url": "https://example.invalid/c/1"}
    # a regressed status on a task that is not gated (today classify words such a task
    # aspirational; the output must not depend on that) is not counted either
    ungated = replace(verdict.tasks[0], gated=False)
    assert outputs_of(replace(verdict, tasks=(ungated, *verdict.tasks[1:])),
                                   "")["regressed"] == "0"


@pytest.fixture
def on_main(tmp_path, monkeypatch):
    """The environment of a push to the default branch, nothing else of GitHub's."""
    for name in list(os.environ):
        if name.startswith(("GITHUB_", "RUNNER_")):
            monkeypatch.delenv(name)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"repository": {"full_name": "acme/widgets",
                                                "default_branch": "main"}}))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/widgets")
    monkeypatch.setenv("GITHUB_REF", "refs/heads/main")
    monkeypatch.setenv("GITHUB_SHA", "abc123def4567890")
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    return tmp_path


@pytest.fixture
def two_shards(repo_root, make_task):
    """Two tasks planned in two shards; shard 1's results written (two passing runs)."""
    plan = {"of": 2, "shards": {"1": ["task-001-alpha"], "2": ["task-002-beta"]}}
    for shard, [task] in plan["shards"].items():
        make_task(repo_root, task)
        if shard == "1":
            write_runs(repo_root, shard, task)
    return repo_root, json.dumps(plan)


def write_runs(root, shard: str, task: str) -> None:
    prompt_hash = load_task(root / "tasks" / task).prompt_hash
    folder = root / "results" / f"shard-{shard}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{task}.jsonl").write_text("".join(
        json.dumps({"run": run, "task": task, "status": "pass", "passed": True,
                    "agent": "reference", "k": 2, "prompt_hash": prompt_hash,
                    "wall_seconds": 1.0}) + "\n" for run in (1, 2)))


def run_gate(root, plan: str) -> int:
    outcome = report(ReportRequest(root=str(root), plan=plan))
    assert outcome.exit_code == (0 if outcome.outputs["verdict"] == "pass" else 1)
    return outcome.exit_code


def test_a_run_with_a_planned_shard_missing_records_no_history(two_shards, on_main, capsys):
    root, plan = two_shards
    assert run_gate(root, plan) == 1  # shard 2's task is inconclusive
    out = capsys.readouterr().out
    assert "::notice title=ci-eval::no run summary recorded: a planned shard is missing" in out
    assert not (root / "results" / "history").exists()
    outputs = read_outputs(on_main / "output")
    assert outputs["verdict"] == "fail" and "history-summary" not in outputs


def test_the_same_run_complete_records_its_history(two_shards, on_main, capsys):
    root, plan = two_shards
    write_runs(root, "2", "task-002-beta")
    assert run_gate(root, plan) == 0  # two new tasks: nothing gated
    assert "no run summary recorded" not in capsys.readouterr().out
    [written] = (root / "results" / "history").iterdir()
    assert read_outputs(on_main / "output")["history-summary"] == str(written.resolve())
