"""Drift of the default branch (verdict/main_drift.py): a run on main below its baseline is
drift, not a regression (the check passes under gate.drift: warn, fails under fail); the run
summary keeps, per gated task, whether main drifted and the baseline's counts; and the tasks
drifted in each of their last N recorded runs are due a baseline refresh."""

from __future__ import annotations

import json

import pytest
from test_gate_report import on_main  # noqa: F401 - the fixture: a push to the default branch
from test_github_gate import read_outputs, write_baseline

from ci_eval.errors import UserError
from ci_eval.main import build_parser
from ci_eval.results import history
from ci_eval.results.history import RunSummary, TaskRecord
from ci_eval.tasks.load import load_task
from ci_eval.verdict import main_drift
from ci_eval.verdict.model import TaskVerdict, Verdict
from ci_eval.verdict.rules import GateRules

TASK = "task-001-alpha"


def _verdict(*tasks: TaskVerdict, drift: str = "warn") -> Verdict:
    return Verdict(tasks=tasks, k=5, rules=GateRules(drift=drift))


def _tv(task: str, status: str, passes: int, runs: int = 5, gated: bool = True) -> TaskVerdict:
    return TaskVerdict(task, status, gated, baseline_passes=36, baseline_runs=40, passes=passes,
                       runs=runs)


def test_a_regression_on_the_default_branch_is_drift_and_passes_under_warn():
    verdict = _verdict(_tv("task-001-a", "regressed", 1), _tv("task-002-b", "unchanged", 5),
                       _tv("task-003-c", "regressed", 0, gated=False),
                       _tv("task-004-d", "inconclusive", 2))
    judged = main_drift.judged_as_main(verdict)
    assert [t.status for t in judged.tasks] == ["drifted", "unchanged", "regressed",
                                                "inconclusive"]
    assert judged.exit_code == 1  # the inconclusive task still fails, as anywhere
    assert not judged.tasks[0].fails_gate
    assert "main is below its baseline" in judged.tasks[0].note
    [note] = judged.notes
    assert note.startswith("Drift on main: 1 task(s) (task-001-a) below the baseline.")
    assert note.endswith("Drift does not fail the check.")
    assert main_drift.drift_records(judged) == {
        "task-001-a": main_drift.DriftRecord(True, 36, 40),
        "task-002-b": main_drift.DriftRecord(False, 36, 40)}  # not gated, inconclusive: none


def test_under_drift_fail_main_drift_fails_the_check():
    judged = main_drift.judged_as_main(_verdict(_tv("task-001-a", "regressed", 1),
                                                   drift="fail"))
    assert judged.tasks[0].status == "drifted" and judged.exit_code == 1
    assert judged.notes[0].endswith("Drift fails the check (gate.drift: fail).")


def test_a_clean_run_has_no_drift_note():
    judged = main_drift.judged_as_main(_verdict(_tv("task-001-a", "unchanged", 5)))
    assert judged.notes == () and judged.tasks[0].status == "unchanged"


def _summary(day: int, records: dict[str, tuple]) -> RunSummary:
    """records: task -> (passes, runs, drifted or None, baseline passes, baseline runs)."""
    tasks = {}
    for task, (passes, runs, drifted, base_passes, base_runs) in records.items():
        extra = {} if drifted is None else {"drifted": drifted, "baseline_passes": base_passes,
                                            "baseline_runs": base_runs}
        tasks[task] = TaskRecord(task, runs, passes, 0, runs, **extra)
    return RunSummary(date=f"2026-11-{day:02d}", recorded_at=f"2026-11-{day:02d}T10:00:00Z",
                      commit=None, agent="a", ci_eval_version="0", tasks=tasks)


def test_refresh_is_due_after_n_consecutive_drifted_runs():
    runs = [_summary(1, {"task-001-a": (5, 5, False, 36, 40), "task-002-b": (1, 5, True, 36, 40)}),
            _summary(2, {"task-001-a": (1, 5, True, 36, 40), "task-002-b": (1, 5, True, 36, 40)}),
            _summary(3, {"task-001-a": (0, 5, True, 36, 40)}),  # task-002 not run: passed over
            _summary(4, {"task-001-a": (2, 5, True, 36, 40), "task-002-b": (0, 5, True, 36, 40)})]
    due = main_drift.refresh_due(runs, 3)
    assert [(d.task, d.streak, d.passes, d.runs) for d in due] == [
        ("task-001-a", 3, 3, 15), ("task-002-b", 3, 2, 15)]
    assert due[0].baseline_rate == main_drift.Fraction(36, 40)
    assert [d.task for d in main_drift.refresh_due(runs, 4)] == []
    assert [d.task for d in main_drift.refresh_due(runs[:3], 3)] == []


def test_a_clean_run_or_a_new_baseline_restarts_the_streak():
    drifted = (1, 5, True, 36, 40)
    runs = [_summary(1, {TASK: drifted}), _summary(2, {TASK: drifted}),
            _summary(3, {TASK: (5, 5, False, 36, 40)}), _summary(4, {TASK: drifted}),
            _summary(5, {TASK: drifted})]
    assert main_drift.refresh_due(runs, 2)[0].streak == 2
    assert main_drift.refresh_due(runs, 3) == []
    refreshed = [*runs, _summary(6, {TASK: (1, 5, True, 20, 40)})]  # a new baseline, still low
    assert main_drift.refresh_due(refreshed, 2) == []
    assert main_drift.refresh_due([_summary(1, {TASK: (1, 5, None, 0, 0)})] * 3, 1) == []
    with pytest.raises(ValueError):
        main_drift.refresh_due(runs, 0)


def test_the_summary_keeps_drift_and_reads_it_back(tmp_path):
    summary = _summary(1, {TASK: (1, 5, True, 36, 40), "task-002-b": (5, 5, None, 0, 0)})
    path = history.write_summary(tmp_path, summary)
    data = json.loads(path.read_text())
    assert data["tasks"][TASK]["drifted"] is True
    assert data["tasks"][TASK]["baseline"] == {"passes": 36, "runs": 40}
    assert "drifted" not in data["tasks"]["task-002-b"]
    back = history.read_summary(path)
    assert back.tasks[TASK] == summary.tasks[TASK]
    assert back.tasks[TASK].baseline_rate == main_drift.Fraction(9, 10)


@pytest.mark.parametrize("change, field, message", [
    ({"drifted": True}, "$.tasks.task-001-alpha.baseline", "come together"),
    ({"baseline": {"passes": 1, "runs": 2}}, "$.tasks.task-001-alpha.drifted", "come together"),
    ({"drifted": True, "baseline": {"passes": 3, "runs": 2}},
     "$.tasks.task-001-alpha.baseline.passes", "3 passes is more than 2 runs"),
    ({"drifted": "yes", "baseline": {"passes": 1, "runs": 2}}, "$.tasks.task-001-alpha.drifted",
     "expected true or false"),
])
def test_a_broken_drift_record_names_the_field(tmp_path, change, field, message):
    data = history.parse_summary(json.loads(history.dumps_summary(
        _summary(1, {TASK: (5, 5, None, 0, 0)}))), "x").to_json()
    data["tasks"][TASK].update(change)
    path = tmp_path / "2026-11-01-001-x.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError) as caught:
        history.read_summary(path)
    assert message in str(caught.value) and field in str(caught.value)


def _write_results(root, task: str, outcomes: str) -> None:
    prompt_hash = load_task(root / "tasks" / task).prompt_hash
    (root / "results").mkdir(exist_ok=True)
    (root / "results" / f"{task}.jsonl").write_text("".join(
        json.dumps({"run": run, "task": task, "status": "pass" if c == "p" else "fail",
                    "passed": c == "p", "agent": "reference", "k": len(outcomes),
                    "prompt_hash": prompt_hash}) + "\n"
        for run, c in enumerate(outcomes, start=1)))


@pytest.mark.parametrize("policy, code", [(None, 0), ("fail", 1)])
def test_a_push_below_the_baseline_records_drift(repo_root, make_task, on_main,  # noqa: F811
                                                 capsys, policy, code):
    make_task(repo_root, TASK)
    make_task(repo_root, "task-002-beta")
    write_baseline(repo_root, [TASK, "task-002-beta"], passes=36)
    if policy:
        (repo_root / "ci-eval.yaml").write_text(f"gate:\n  drift: {policy}\n")
    _write_results(repo_root, TASK, "fffff")
    _write_results(repo_root, "task-002-beta", "ppppp")
    args = build_parser().parse_args(["gate", "--root", str(repo_root)])
    assert args.handler(args) == code
    out = capsys.readouterr().out
    kind = "error title=ci-eval::" if policy else "warning title=ci-eval drift::"
    assert f"::{kind}{TASK} drifted" in out and "main is below its baseline" in out
    [written] = (repo_root / "results" / "history").iterdir()
    assert read_outputs(on_main / "output")["history-summary"] == str(written.resolve())
    tasks = json.loads(written.read_text())["tasks"]
    assert tasks[TASK]["gate"] == "drifted" and tasks[TASK]["drifted"] is True
    assert (tasks[TASK]["passes"], tasks[TASK]["runs"]) == (0, 5)
    assert tasks[TASK]["baseline"] == {"passes": 36, "runs": 40}
    assert tasks["task-002-beta"]["drifted"] is False
    summary = (on_main / "summary.md").read_text()
    assert "Drift on main: 1 task(s) (task-001-alpha) below the baseline." in summary


@pytest.mark.parametrize("value", [0, -1, 21, 2.5, True, "3", None])
def test_drift_refresh_after_is_validated(value):
    from ci_eval.agents.config_file import parse_config

    with pytest.raises(UserError) as caught:
        parse_config({"gate": {"drift_refresh_after": value}}, "ci-eval.yaml")
    assert str(caught.value).startswith("ci-eval.yaml: gate.drift_refresh_after: expected a "
                                        "whole number of runs from 1 to 20, got ")


def test_drift_refresh_after_defaults_to_3():
    from ci_eval.agents.gate_config import parse_gate

    assert parse_gate(None, "ci-eval.yaml").drift_refresh_after == 3
    assert parse_gate({"drift_refresh_after": 5}, "x").drift_refresh_after == 5


def test_history_drift_names_the_tasks_due_a_refresh(tmp_path, cli):
    folder = tmp_path / "history"
    for day in (1, 2, 3):
        history.write_summary(folder, _summary(day, {TASK: (1, 5, True, 36, 40),
                                                     "task-002-b": (5, 5, day != 3, 36, 40)}))
    root = tmp_path / "repo"
    root.mkdir()
    output = tmp_path / "output"
    output.write_text("")
    done = cli("history", "drift", "--root", str(root), "--history", str(folder),
               "--github-output", cwd=tmp_path, env={"GITHUB_OUTPUT": str(output)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1 task(s) drifted on main in each of their last 3+ recorded "
                                  "runs (of 3): a baseline refresh is due\n")
    assert f"  {TASK}: main 0.20 (3/15) over 3 runs, baseline 0.90 (36/40)" in done.stdout
    assert read_outputs(output) == {"tasks": TASK}
    (root / "ci-eval.yaml").write_text("gate:\n  drift_refresh_after: 4\n")
    done = cli("history", "drift", "--root", str(root), "--history", str(folder), "--json",
               cwd=tmp_path)
    assert json.loads(done.stdout) == {"after": 4, "recorded_runs": 3, "tasks": []}
    (root / "ci-eval.yaml").write_text("gate:\n  drift_refresh_after: many\n")
    done = cli("history", "drift", "--root", str(root), "--history", str(folder), cwd=tmp_path)
    assert done.returncode == 2 and "gate.drift_refresh_after: expected a whole number" in \
        done.stderr and "Traceback" not in done.stderr
    (root / "ci-eval.yaml").unlink()
    done = cli("history", "drift", "--root", str(root), "--history", str(tmp_path / "none"),
               cwd=tmp_path)
    assert done.returncode == 2 and "history folder not found" in done.stderr
