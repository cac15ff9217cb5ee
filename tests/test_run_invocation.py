"""`ci-eval run`'s orchestration in process (run/invocation.py): the runs recorded and summed
up, the results folder's policy (refused, resumed, discarded), the options that need
--confirm-against, a preflight problem written for the report job, and the confirmation hook
(verdict/confirmation.confirmation_hook) deciding extra runs by the gate's rule."""

from __future__ import annotations

import json

import pytest

from ci_eval.errors import UserError
from ci_eval.run.invocation import RunRequest, run_invocation
from ci_eval.tasks.load import load_task
from ci_eval.verdict.baseline import Baseline, BaselineEntry
from ci_eval.verdict.confirmation import DEFAULT_STAGES, confirmation_hook
from ci_eval.verdict.rules import DEFAULT_RULES

TASKS = ("task-001-alpha", "task-002-beta")


@pytest.fixture
def two_tasks(repo_root, make_task, monkeypatch):
    monkeypatch.setenv("CI_EVAL_BACKOFF_BASE", "0")
    for name in TASKS:
        make_task(repo_root, name)
    return repo_root


def lines_of(root, task):
    return (root / "results" / f"{task}.jsonl").read_text().splitlines()


def test_an_invocation_records_k_runs_per_task_and_sums_them_up(two_tasks):
    outcome = run_invocation(RunRequest(root=str(two_tasks), agent="reference", k=2, jobs=2))
    assert outcome.exit_code == 0 and not outcome.interrupted
    assert (outcome.tasks, outcome.recorded) == (2, 4)
    assert outcome.out_dir == (two_tasks / "results").resolve()
    assert [(s.task, s.passes, s.runs) for s in outcome.summaries] == [
        (task, 2, 2) for task in TASKS]
    for task in TASKS:
        assert sorted(json.loads(line)["run"] for line in lines_of(two_tasks, task)) == [1, 2]


def test_recorded_results_are_refused_then_resumed_then_discarded(two_tasks):
    request = RunRequest(root=str(two_tasks), agent="reference", k=2, jobs=2)
    run_invocation(request)
    before = {task: lines_of(two_tasks, task) for task in TASKS}
    with pytest.raises(UserError, match="results already recorded for 2 task"):
        run_invocation(request)
    resumed = run_invocation(RunRequest(**{**request.__dict__, "resume": True}))
    assert resumed.recorded == 4 and resumed.exit_code == 0
    assert {task: lines_of(two_tasks, task) for task in TASKS} == before  # nothing to add
    fresh = run_invocation(RunRequest(**{**request.__dict__, "fresh": True, "k": 1}))
    assert fresh.recorded == 2
    assert all(len(lines_of(two_tasks, task)) == 1 for task in TASKS)


@pytest.mark.parametrize("options, field", [
    ({"confirm_stages": "10,20"}, "--confirm-stages"),
    ({"control_ref": "origin/main"}, "--control-ref"),
])
def test_options_that_need_confirm_against_are_refused_before_anything(two_tasks, options,
                                                                        field):
    with pytest.raises(UserError) as raised:
        run_invocation(RunRequest(root=str(two_tasks), agent="reference", **options))
    assert raised.value.field == field and "--confirm-against" in raised.value.message
    assert not (two_tasks / "results").exists()


def test_a_preflight_problem_is_written_for_the_report_job(two_tasks, make_task):
    make_task(two_tasks, "task-003-needy", metadata={"requires": ["no-such-tool-xyz"]})
    with pytest.raises(UserError) as raised:
        run_invocation(RunRequest(root=str(two_tasks), agent="reference", shard=None,
                                  setup_problem_file="out/problem.json"))
    written = json.loads((two_tasks / "out" / "problem.json").read_text())
    assert written["field"] == "requires" == raised.value.field
    assert "no-such-tool-xyz" in written["problem"] and "no run started" in written["problem"]
    assert not (two_tasks / "results").exists()


def runs(outcomes: str) -> list[dict]:
    return [{"run": i, "status": "pass" if c == "p" else "fail", "passed": c == "p"}
            for i, c in enumerate(outcomes, start=1)]


def test_the_confirmation_hook_adds_runs_to_a_gated_task_that_breaches(two_tasks):
    alpha, beta = (load_task(two_tasks / "tasks" / task) for task in TASKS)
    baseline = Baseline("reference", {
        alpha.id: BaselineEntry(alpha.id, 5, 5, "2026-01-01", alpha.prompt_hash),
        beta.id: BaselineEntry(beta.id, 5, 5, "2026-01-01", "sha256:" + "0" * 64)})
    more_runs = confirmation_hook(baseline, DEFAULT_STAGES, DEFAULT_RULES)
    assert more_runs(alpha, runs("fffff")) == 5  # breaches: up to the next stage (10)
    assert more_runs(alpha, runs("ppppp")) == 0  # clears the gate
    assert more_runs(beta, runs("fffff")) == 0  # prompt changed since the baseline: not gated
    no_entry = confirmation_hook(Baseline("reference", {}), DEFAULT_STAGES, DEFAULT_RULES)
    assert no_entry(alpha, runs("fffff")) == 0  # a new task: not gated
