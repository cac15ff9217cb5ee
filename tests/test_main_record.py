"""verdict/main_record.py: main's recent record (the run summaries of its pushes) as the PR's
reference and as free control evidence; which records count; a task judged with it."""

from __future__ import annotations

import dataclasses
import datetime as dt
from fractions import Fraction

import pytest

from ci_eval.results.history import RunSummary, TaskRecord
from ci_eval.verdict import control, main_record
from ci_eval.verdict.main_record import MainRecord
from ci_eval.verdict.model import TaskVerdict, Verdict
from ci_eval.verdict.rules import GateRules

TASK = "task-001-alpha"
TODAY = dt.date(2026, 11, 20)


def test_without_a_record_the_baseline_is_the_reference():
    ref = main_record.reference(36, 40)
    assert (ref.passes, ref.runs, ref.source) == (36, 40, "baseline")
    assert main_record.reference(36, 40, MainRecord(0, 0, 0)).source == "baseline"
    assert ref.describe() == "reference 36/40 = 0.90, the baseline"


def test_a_record_that_agrees_is_pooled_with_the_baseline():
    ref = main_record.reference(36, 40, MainRecord(37, 40, 8))
    assert (ref.passes, ref.runs, ref.source) == (73, 80, "baseline+main")
    # a record above the baseline is pooled too: the switch is one-sided (main below it)
    assert main_record.reference(30, 40, MainRecord(40, 40, 8)).source == "baseline+main"


def test_a_record_below_the_baseline_replaces_it():
    # main at 0.70 for 40 runs against a 0.90 baseline: main has moved, main now is the reference
    assert control.worse_p(28, 40, 36, 40) < main_record.RECORD_SWITCH_P
    ref = main_record.reference(36, 40, MainRecord(28, 40, 8))
    assert (ref.rate, ref.source) == (Fraction(7, 10), "main")
    assert "main moved since the baseline" in ref.describe()


def test_a_record_a_little_below_the_baseline_by_chance_is_still_pooled():
    # 33/40 against 36/40 (one-sided p = 0.26): not shown below at 1/20, so the 80 runs of both
    # stay the reference (a record alone that is low by chance would lower the PR's line)
    assert control.worse_p(33, 40, 36, 40) >= main_record.RECORD_SWITCH_P
    assert main_record.reference(36, 40, MainRecord(33, 40, 8)).source == "baseline+main"


@pytest.mark.parametrize("passes, runs", [(41, 40), (-1, 40), (0, 0)])
def test_a_broken_baseline_is_refused(passes, runs):
    with pytest.raises(ValueError):
        main_record.reference(passes, runs, MainRecord(1, 5, 1))
    with pytest.raises(ValueError):
        MainRecord(6, 5, 1)


def test_the_control_arm_is_pooled_with_the_record_unless_below_it():
    record = MainRecord(36, 40, 8)
    assert main_record.control_evidence(9, 10, record) == (45, 50)
    # 0/10 against 36/40: main moved since its last push; the record is stale
    assert main_record.control_evidence(0, 10, record) == (0, 10)
    assert main_record.control_evidence(3, 5) == (3, 5)
    assert main_record.control_evidence(0, 0, record) == (0, 0)  # no control runs: none


def _summary(day: int, passes: int, runs: int = 5, *, baseline=(36, 40), agent="claude",
             judged: bool = True, harness: str | None = None) -> RunSummary:
    extra = ({"drifted": passes * 10 < runs * 6, "baseline_passes": baseline[0],
              "baseline_runs": baseline[1]} if judged else {})
    return RunSummary(date=f"2026-11-{day:02d}", recorded_at=f"2026-11-{day:02d}T10:00:00Z",
                      commit=None, agent=agent, ci_eval_version="0",
                      tasks={TASK: TaskRecord(TASK, runs, passes, 0, runs, **extra)},
                      harness={"digest": harness, "files": None} if harness else None)


def test_the_record_pools_the_newest_pushes_judged_against_the_same_baseline():
    history = [_summary(day, passes) for day, passes in [(10, 5), (11, 4), (12, 1), (13, 2)]]
    record = main_record.record_of(history, TASK, 36, 40, agent="claude", today=TODAY, pushes=3)
    assert record == MainRecord(7, 15, 3)  # days 11-13, newest first
    everything = main_record.record_of(history, TASK, 36, 40, agent="claude", today=TODAY)
    assert everything == MainRecord(12, 20, 4)


@pytest.mark.parametrize("other", [
    {"baseline": (20, 20)},  # judged against another baseline: a refresh starts it anew
    {"agent": "codex"},  # another agent's runs are not main's agent now
    {"judged": False},  # not judged against a baseline (inconclusive, aspirational)
    {"runs": 0},
])
def test_records_of_another_baseline_agent_or_none_are_not_used(other):
    runs = other.pop("runs", 5)
    history = [_summary(18, 5), _summary(19, 0, runs, **other)]
    record = main_record.record_of(history, TASK, 36, 40, agent="claude", today=TODAY)
    assert record == MainRecord(5, 5, 1)


def test_only_runs_with_the_harness_of_main_s_newest_run_are_pooled():
    # main solved the task until a merged PR changed CLAUDE.md; its runs since then are main now
    history = [_summary(12, 5, harness="a" * 64), _summary(13, 5, harness="a" * 64),
               _summary(14, 1, harness="b" * 64), _summary(15, 0),  # a run that records none
               _summary(16, 2, harness="b" * 64)]
    record = main_record.record_of(history, TASK, 36, 40, agent="claude", today=TODAY)
    assert record == MainRecord(3, 15, 3)  # days 14-16: the older harness's 10/10 left out
    unrecorded = [_summary(12, 5), _summary(13, 1, harness="a" * 64)]
    assert main_record.record_of(unrecorded, TASK, 36, 40, agent="claude",
                                 today=TODAY) == MainRecord(6, 10, 2)


def test_a_record_older_than_the_limit_is_not_used():
    history = [_summary(1, 0), _summary(6, 1)]
    assert main_record.record_of(history, TASK, 36, 40, agent="claude", today=TODAY,
                                 max_age_days=14) == MainRecord(1, 5, 1)
    assert main_record.record_of(history, TASK, 36, 40, agent="claude", today=TODAY,
                                 max_age_days=3) is None
    assert main_record.record_of([], TASK, 36, 40, agent=None, today=TODAY) is None
    with pytest.raises(ValueError):
        main_record.record_of(history, TASK, 36, 40, agent=None, today=TODAY, pushes=0)


def _tv(status: str, passes: int, runs: int = 10, gated: bool = True) -> TaskVerdict:
    return TaskVerdict(TASK, status, gated, baseline_passes=36, baseline_runs=40, passes=passes,
                       runs=runs)


def test_a_pr_at_main_s_drifted_rate_is_drifted_not_regressed():
    # the baseline rule calls 5/10 regressed (0.90 - 0.30 = 0.60); main's record is at 0.50
    verdict = _tv("regressed", 5)
    judged = main_record.judge_task(verdict, MainRecord(20, 40, 8), rules=GateRules())
    assert judged.status == "drifted" and not judged.fails_gate
    assert "main's record 20/40 over 8 push(es)" in judged.note
    assert "main's record (main moved since the baseline)" in judged.note
    failing = main_record.judge_task(verdict, MainRecord(20, 40, 8), rules=GateRules(drift="fail"))
    assert failing.status == "drifted" and failing.fails_gate


def test_a_pr_worse_than_main_s_record_is_regressed():
    # main still solves it (38/40): the PR's 1/10 is its own regression, with or without control
    verdict = _tv("regressed", 1)
    assert main_record.judge_task(verdict, MainRecord(38, 40, 8),
                                  rules=GateRules()).status == "regressed"
    judged = main_record.judge_task(verdict, MainRecord(38, 40, 8), 9, 10, rules=GateRules())
    assert judged.status == "regressed" and judged.control_runs == 10
    assert "control arm (main now) 9/10" in judged.note


def test_without_a_usable_record_the_control_arm_decides_as_before():
    verdict = _tv("regressed", 1)
    rules = GateRules()
    assert main_record.judge_task(verdict, None, 0, 10, rules=rules) == \
        control.judge_task(verdict, 0, 10, rules)
    assert main_record.judge_task(verdict, None, rules=rules) == verdict
    ungated = _tv("regressed", 1, gated=False)
    assert main_record.judge_task(ungated, MainRecord(20, 40, 8), rules=rules) == ungated


def test_records_of_a_verdict_cover_its_gated_tasks_with_a_baseline():
    verdict = Verdict(tasks=(_tv("unchanged", 9), TaskVerdict("task-002-b", "unchanged", True)),
                      k=5, agent="claude")
    records = main_record.records_of([_summary(19, 4)], verdict, today=TODAY)
    assert records == {TASK: MainRecord(4, 5, 1)}


def test_the_runner_s_hooks_stage_against_the_reference():
    from ci_eval.verdict.baseline import Baseline, BaselineEntry
    from ci_eval.verdict.confirmation import DEFAULT_STAGES, confirmation_hook

    baseline = Baseline("claude", {TASK: BaselineEntry(TASK, 36, 40, "2026-11-01", "h")})
    history = [_summary(19, 0), _summary(18, 1)]
    refs = main_record.references_of(history, baseline, agent="claude", today=TODAY)
    assert refs == {TASK: Fraction(1, 10)}
    assert main_record.references_of(history, baseline, agent="codex", today=TODAY) == {}

    class FakeTask:  # what the hooks read of a task
        id, aspirational, prompt_hash = TASK, False, "h"

    records = [{"status": "fail", "passed": False}] * 5
    rules = GateRules()
    assert confirmation_hook(baseline, DEFAULT_STAGES, rules)(FakeTask, records) > 0
    assert confirmation_hook(baseline, DEFAULT_STAGES, rules, refs)(FakeTask, records) == 0
    assert control.arms_hook(baseline, DEFAULT_STAGES, rules, refs)(FakeTask, records, []) \
        == (0, 0)


DRIFTED_RECORD = MainRecord(24, 40, 8)  # main at 0.60 against the 0.90 baseline: the reference


@pytest.mark.parametrize("pr, main_now, status", [
    ((1, 15), (9, 15), "regressed"),  # a real 0.4 drop under drift: shown worse than main now
    ((2, 10), (5, 10), "regressed"),  # below main's line, main a little low by chance: no excuse
    ((2, 10), (1, 10), "drifted"),  # the control arm itself below main's record: main moved on
    ((6, 10), (5, 10), "unchanged"),  # at main's drifted rate
])
def test_arm_status_against_a_drifted_record(pr, main_now, status):
    ref = main_record.reference(36, 40, DRIFTED_RECORD)
    assert ref.source == "main"
    assert main_record.arm_status(ref, DRIFTED_RECORD, *pr, *main_now) == status


def test_a_control_arm_low_by_chance_does_not_excuse_a_drop():
    # before: the pooled control evidence (29/50 = 0.58) below the reference's 0.60 was enough
    # to call 2/10 "drifted"; the control arm's own 5/10 is not shown below 24/40 (p = 0.41)
    assert control.worse_p(5, 10, 24, 40) >= main_record.DRIFT_EXCUSE_P
    assert control.arm_status(Fraction(24, 40), 2, 10, 29, 50) == "drifted"
    verdict = _tv("regressed", 2)
    judged = main_record.judge_task(verdict, DRIFTED_RECORD, 5, 10, rules=GateRules())
    assert judged.status == "regressed" and judged.fails_gate


def test_a_record_that_fresh_control_runs_disagree_with_is_set_aside():
    # main solved it at its last pushes (38/40); since then main fails it (0/10 in the control
    # arm, same hour as the PR): the record is stale, the control arm alone is main now
    record = MainRecord(38, 40, 8)
    assert main_record.control_evidence(0, 10, record) == (0, 10)
    ref = main_record.reference(36, 40, record)
    assert ref.source == "baseline+main"
    assert main_record.arm_status(ref, record, 2, 10, 0, 10) == "drifted"
    judged = main_record.judge_task(_tv("regressed", 2), record, 0, 10, rules=GateRules())
    assert judged.status == "drifted" and not judged.fails_gate
    assert "control arm (main now) 0/10" in judged.note
    # the same PR with main's fresh runs still solving it: its own regression
    assert main_record.judge_task(_tv("regressed", 2), record, 10, 10,
                                  rules=GateRules()).status == "regressed"


def test_a_task_both_arms_fail_is_drifted():
    verdict = _tv("regressed", 0)
    # main's record and the control arm both at 0: the record is the reference, nothing to blame
    judged = main_record.judge_task(verdict, MainRecord(0, 40, 8), 0, 10, rules=GateRules())
    assert judged.status == "drifted" and not judged.fails_gate
    # main's record still at 0.95 but the control arm at 0 (main moved since its last push)
    judged = main_record.judge_task(verdict, MainRecord(38, 40, 8), 0, 10, rules=GateRules())
    assert judged.status == "drifted"
    assert main_record.judge_task(verdict, MainRecord(38, 40, 8), 0, 10,
                                  rules=GateRules(drift="fail")).fails_gate


def test_arm_status_without_control_runs_is_the_rule_against_the_reference():
    ref = main_record.reference(36, 40, DRIFTED_RECORD)
    assert main_record.arm_status(ref, DRIFTED_RECORD, 1, 10, 0, 0) == "regressed"
    assert main_record.arm_status(ref, DRIFTED_RECORD, 6, 10, 0, 0) == "unchanged"
    assert main_record.arm_status(ref, None, 10, 10, 0, 0) == "improved"


def _suite(record: MainRecord, tasks: int = 8) -> dict[str, tuple[int, int, MainRecord]]:
    return {f"task-{i:03d}": (36, 40, record) for i in range(tasks)}


def test_a_suite_wide_drift_is_the_other_tasks_mean_fall():
    # 8 tasks each at 32/40 on main against 36/40 baselines: no task alone shows the 0.1 fall
    # at 1/20, the suite does (z^2 = 12.5 > 9.5)
    assert control.worse_p(32, 40, 36, 40) >= main_record.RECORD_SWITCH_P
    shifts = main_record.suite_shift(_suite(MainRecord(32, 40, 8)))
    assert shifts == {f"task-{i:03d}": Fraction(1, 10) for i in range(8)}
    # leave-one-out: a task's own fall is not in its shift
    suite = _suite(MainRecord(32, 40, 8)) | {"task-007": (36, 40, MainRecord(20, 40, 8))}
    assert main_record.suite_shift(suite)["task-007"] == Fraction(1, 10)
    assert main_record.suite_shift(suite)["task-000"] == (6 * Fraction(1, 10) + Fraction(4, 10)) / 7


@pytest.mark.parametrize("suite", [
    _suite(MainRecord(32, 40, 8), tasks=main_record.SUITE_MIN_TASKS - 1),  # too few tasks
    _suite(MainRecord(35, 40, 8)),  # a fall the suite does not show (z^2 < 9.5)
    _suite(MainRecord(40, 40, 8)),  # main above its baselines: no fall
    {},
])
def test_no_suite_wide_drift_without_the_evidence(suite):
    assert main_record.suite_shift(suite) == {}


def test_the_suite_s_drift_moves_the_baseline_before_it_is_pooled():
    ref = main_record.reference(36, 40, MainRecord(32, 40, 8), shift=Fraction(1, 10))
    assert (ref.passes, ref.runs, ref.source) == (64, 80, "shifted+main")
    assert "moved down by main's suite-wide drift (0.10; main moved" in ref.describe()
    # without the shift the same record is pooled with the baseline as it is: 68/80
    assert main_record.reference(36, 40, MainRecord(32, 40, 8)).rate == Fraction(68, 80)
    # a task that did not move with the suite (40/40 on main): the record alone, not the moved
    # baseline (a drift of only some tasks does not lower the others' line)
    alone = main_record.reference(36, 40, MainRecord(40, 40, 8), shift=Fraction(2, 10))
    assert (alone.passes, alone.runs, alone.source) == (40, 40, "main")
    # the moved baseline stays within 0..runs
    assert main_record.reference(2, 40, MainRecord(0, 40, 8), shift=Fraction(1, 2)).passes == 0


def test_the_verdict_takes_the_suite_s_drift():
    # every task on main at 32/40 against 36/40: a PR at 5/10 is below the baseline's line
    # (0.60) and the pooled 68/80's (0.55), not below the moved reference's (64/80 - 0.30)
    tasks = tuple(dataclasses.replace(_tv("regressed", 5), task=f"task-{i:03d}")
                  for i in range(8))
    records = {t.task: MainRecord(32, 40, 8) for t in tasks}
    assert main_record.judge_task(tasks[0], records[tasks[0].task],
                                  rules=GateRules()).status == "regressed"
    judged = main_record.with_record(Verdict(tasks=tasks, k=5, agent="claude"), records, {},
                                     GateRules())
    assert {t.status for t in judged.tasks} == {"drifted"}
    assert "suite-wide drift (0.10" in judged.tasks[0].note
    assert any(n.startswith("Drift: 8 task(s)") for n in judged.notes)


def test_the_runner_s_references_take_the_suite_s_drift_over_gated_entries():
    from ci_eval.verdict.baseline import Baseline, BaselineEntry

    names = [f"task-{i:03d}" for i in range(8)]

    def push(day: int) -> RunSummary:  # every task at 4/5 on main (0.80) against 36/40
        return RunSummary(date=f"2026-11-{day:02d}", recorded_at=f"2026-11-{day:02d}T10:00:00Z",
                          commit=None, agent="claude", ci_eval_version="0",
                          tasks={n: TaskRecord(n, 5, 4, 0, 5, drifted=False, baseline_passes=36,
                                               baseline_runs=40) for n in names})

    history = [push(day) for day in range(11, 19)]  # 8 pushes: 32/40 per task
    entries = {n: BaselineEntry(n, 36, 40, "2026-11-01", "h") for n in names}
    refs = main_record.references_of(history, Baseline("claude", entries), agent="claude",
                                     today=TODAY)
    assert refs == {n: Fraction(64, 80) for n in names}  # the moved baseline pooled: 0.80
    # an aspirational entry is not the suite's: with 4 gated tasks left, no suite-wide drift
    fewer = entries | {n: BaselineEntry(n, 36, 40, "2026-11-01", "h", aspirational=True)
                       for n in names[4:]}
    refs = main_record.references_of(history, Baseline("claude", fewer), agent="claude",
                                     today=TODAY)
    assert refs[names[0]] == Fraction(68, 80)  # the baseline pooled as it is
