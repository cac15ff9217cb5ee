"""verdict/control.py: the PR arm against the control arm (main's agent now), with the baseline
as the first screen; the drifted status, gate.drift, and the staging of both arms."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from ci_eval.agents.config_file import parse_config
from ci_eval.agents.gate_config import parse_gate
from ci_eval.errors import UserError
from ci_eval.verdict import control
from ci_eval.verdict.confirmation import DEFAULT_STAGES, next_step
from ci_eval.verdict.model import TaskVerdict, Verdict
from ci_eval.verdict.rules import DEFAULT_RULES, GateRules


def test_fisher_tails_are_exact_fractions():
    # 0/10 against 10/10: only the one table, 1 / C(20, 10)
    assert control.worse_p(0, 10, 10, 10) == Fraction(1, math.comb(20, 10))
    assert control.better_p(10, 10, 0, 10) == Fraction(1, math.comb(20, 10))
    # the textbook table: 1/4 against 3/4 passes: P(A <= 1) with 4 passes in 8, 4 drawn
    assert control.worse_p(1, 4, 3, 4) == Fraction(1 + 16, 70)
    assert control.worse_p(3, 5, 3, 5) > Fraction(1, 2)  # equal arms: no evidence
    assert control.worse_p(2, 5, 0, 0) == 1  # no control runs: no test
    with pytest.raises(ValueError):
        control.worse_p(6, 5, 1, 5)


def test_drifted_when_both_arms_fall_below_the_baseline():
    # baseline 0.90; both arms now at 0/15: not the PR's regression
    assert control.arm_status(Fraction(9, 10), 0, 15, 0, 15) == "drifted"
    assert control.arm_status(Fraction(9, 10), 5, 15, 6, 15) == "drifted"


def test_regressed_when_the_pr_arm_is_worse_than_main_now():
    assert control.arm_status(Fraction(9, 10), 0, 15, 15, 15) == "regressed"
    # worse than the control even where the baseline screen alone would let it through
    assert control.worse_p(20, 50, 45, 50) < control.CONTROL_ALPHA
    assert control.arm_status(Fraction(7, 10), 20, 50, 45, 50) == "regressed"


def test_below_the_line_with_main_unmoved_stays_regressed():
    # the test cannot tell 4/10 from 7/10, but main is at its baseline: main does not explain it
    assert control.worse_p(4, 10, 7, 10) >= control.CONTROL_ALPHA
    assert control.arm_status(Fraction(7, 10), 1, 10, 7, 10) == "regressed"
    assert control.arm_status(Fraction(9, 10), 5, 10, 9, 10) == "regressed"


def test_improved_and_unchanged_against_the_control():
    assert control.arm_status(Fraction(7, 10), 15, 15, 0, 15) == "improved"
    assert control.arm_status(Fraction(8, 10), 8, 10, 8, 10) == "unchanged"
    # above the line, main improved too: not the PR's improvement
    assert control.arm_status(Fraction(6, 10), 10, 10, 10, 10) == "unchanged"


def test_without_control_runs_the_baseline_rule_stands():
    assert control.arm_status(Fraction(8, 10), 2, 5, 0, 0) == "regressed"
    assert control.arm_status(Fraction(6, 10), 5, 5, 0, 0) == "improved"


def test_staging_above_the_line_is_the_confirmation_staging():
    for passes, runs in ((5, 5), (3, 5), (4, 5), (7, 10)):
        step = control.next_step(Fraction(4, 5), passes, runs)
        expected = next_step(Fraction(4, 5), passes, runs)
        assert (step.pr_runs, step.control_runs, step.reason) == (
            expected.runs_to_add, 0, expected.reason)
    assert control.next_step(None, 0, 5).final
    assert control.next_step(Fraction(4, 5), 0, 0).reason == "no-runs"


def test_a_confirmed_breach_starts_the_control_arm_past_the_first_stage():
    # 1/5 against 0.80 after the first stage: the PR arm alone first (0/5 from 0.6 is luck 1%)
    first = control.next_step(Fraction(4, 5), 1, 5)
    assert first.control_runs == 0 and first.pr_runs == 5
    # at 10 and sure of the breach (confirmed): both arms to the next stage, the control
    # catching up
    step = control.next_step(Fraction(4, 5), 2, 10)
    assert (step.pr_runs, step.control_runs, step.reason) == (5, 15, "control")


def test_a_pr_arm_the_screen_is_unsure_of_runs_alone_to_the_second_stage():
    # 4/10 against 0.80: below the line (0.50) but not confirmed: the PR arm alone to 15, where
    # most unlucky arms of an unchanged PR clear the line again at no control cost
    step = control.next_step(Fraction(4, 5), 4, 10)
    assert (step.pr_runs, step.control_runs, step.reason) == (5, 0, "suspect")
    assert control.next_step(Fraction(4, 5), 10, 15).reason == "clear"  # no control run at all
    # still below past the second stage: the control starts and catches up
    step = control.next_step(Fraction(4, 5), 6, 15)
    assert (step.pr_runs, step.control_runs, step.reason) == (5, 20, "control")
    # a protocol without a second stage to wait for still gets its control arm, at its end
    step = control.next_step(Fraction(4, 5), 4, 10, stages=(5, 10))
    assert (step.pr_runs, step.control_runs, step.reason) == (0, 10, "control")
    step = control.next_step(Fraction(4, 5), 1, 5, stages=(5,))
    assert (step.pr_runs, step.control_runs, step.reason) == (0, 5, "control")


def test_the_pair_stops_on_evidence_either_way_and_at_the_last_stage():
    base = Fraction(4, 5)
    assert control.next_step(base, 0, 15, 15, 15).reason == "worse"
    assert control.next_step(base, 3, 15, 3, 15).reason == "not-worse"
    undecided = control.next_step(base, 4, 15, 9, 15)
    assert (undecided.pr_runs, undecided.control_runs, undecided.reason) == (5, 5, "suspect")
    last = DEFAULT_STAGES[-1]
    assert control.next_step(base, 20, last, 30, last).reason == "last-stage"
    # errored runs count toward the cap: no arm gets more than the last stage in all
    capped = control.next_step(base, 4, 15, 9, 15, pr_recorded=last, control_recorded=45)
    assert capped.pr_runs == 0 and capped.control_runs == 5


def _task(status="regressed", passes=0, runs=15, gated=True, note="") -> TaskVerdict:
    return TaskVerdict(task="task-001-a", status=status, gated=gated, baseline_passes=9,
                       baseline_runs=10, passes=passes, runs=runs, note=note)


def test_with_control_marks_drift_and_says_so():
    verdict = Verdict(tasks=(_task(),), k=5)
    judged = control.with_control(verdict, {"task-001-a": (0, 15)}, DEFAULT_RULES)
    task = judged.tasks[0]
    assert task.status == "drifted" and not task.fails_gate and judged.passed
    assert (task.control_passes, task.control_runs) == (0, 15)
    assert "control arm (main now) 0/15 = 0.00" in task.note
    assert any("main itself has moved since the baseline" in n for n in judged.notes)
    assert judged.drifted == (task,)


def test_drift_fail_makes_a_drifted_task_fail_the_check():
    rules = GateRules(drift="fail")
    judged = control.with_control(Verdict(tasks=(_task(),), k=5), {"task-001-a": (0, 15)},
                                  rules)
    assert judged.tasks[0].fails_gate and judged.exit_code == 1
    assert "fails the check" in judged.notes[-1]
    assert "drift fails" in rules.describe()


def test_with_control_keeps_the_regression_with_both_rates():
    judged = control.with_control(Verdict(tasks=(_task(),), k=5), {"task-001-a": (15, 15)},
                                  DEFAULT_RULES)
    task = judged.tasks[0]
    assert task.status == "regressed" and task.fails_gate and judged.exit_code == 1
    assert "15/15 = 1.00" in task.note and "worse than the control arm" in task.note
    assert task.control_rate == 1 and task.rate == 0


def test_with_control_leaves_ungated_and_other_statuses_alone():
    aspirational = _task(status="aspirational", gated=False)
    changed = _task(status="prompt-changed")
    judged = control.with_control(Verdict(tasks=(aspirational, changed), k=5),
                                  {"task-001-a": (0, 15)}, DEFAULT_RULES)
    assert [t.status for t in judged.tasks] == ["aspirational", "prompt-changed"]
    assert not any("moved" in n for n in judged.notes)


def test_gate_drift_policy_in_ci_eval_yaml():
    assert parse_gate({"drift": "fail"}, "ci-eval.yaml").drift == "fail"
    assert parse_gate({"drift": "warn"}, "ci-eval.yaml").drift == "warn"
    assert parse_gate(None, "ci-eval.yaml").drift == "warn"
    with pytest.raises(UserError) as caught:  # the schema checks the section before parse_gate
        parse_config({"gate": {"drift": "ignore"}}, "ci-eval.yaml")
    assert str(caught.value) == "ci-eval.yaml: gate.drift: expected warn or fail, got \"ignore\""


def test_the_futility_level_is_a_parameter_of_next_step():
    base = Fraction(9, 10)
    # 3/10 against 6/10: a weak case against the PR (p about 0.18)
    assert control.FUTILITY_P > control.worse_p(3, 10, 6, 10) > Fraction(1, 10)
    assert control.next_step(base, 3, 10, 6, 10).reason == "suspect"
    assert control.next_step(base, 3, 10, 6, 10, futility=Fraction(1, 10)).reason == "not-worse"
