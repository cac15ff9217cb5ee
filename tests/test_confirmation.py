"""Staged confirmation runs (pure) and the gate simulation that tunes them."""

from __future__ import annotations

import importlib.util
import json
import math
import random
from fractions import Fraction as F
from pathlib import Path

import pytest

from ci_eval.errors import UserError
from ci_eval.verdict import baseline, confirmation, gate
from ci_eval.verdict.confirmation import DEFAULT_STAGES, next_step, parse_stages, runs_to_add

REPO = Path(__file__).resolve().parents[1]


def test_parse_stages():
    assert parse_stages("5,10,20,30") == (5, 10, 20, 30)
    assert parse_stages(" 5, 10 ") == (5, 10)
    assert parse_stages("5") == (5,)
    assert parse_stages("1,10000") == (1, 10000)  # both ends of a stage's range
    assert confirmation.format_stages((5, 10)) == "5,10"


@pytest.mark.parametrize(("spec", "message"), [
    ("5,,10", "expected comma-separated run counts like 5,10,20, got '5,,10'"),
    ("5,0", "expected a whole number 1-10000, got '0' in '5,0'"),
    ("5,10001", "expected a whole number 1-10000, got '10001' in '5,10001'"),
    ("10,5", "stages must increase, got '10,5'"),
])
def test_parse_stages_says_what_is_wrong(spec, message):
    with pytest.raises(UserError) as info:
        parse_stages(spec, field="confirm_stages")
    assert info.value.message == message and info.value.field == "confirm_stages"


@pytest.mark.parametrize("spec", ["", "5,,10", "5,x", "0,5", "10,5", "5,5", "-5,10", "5.5"])
def test_parse_stages_rejects(spec):
    with pytest.raises(UserError, match="--confirm-stages"):
        parse_stages(spec)


def test_clear_pass_needs_no_more_runs():
    assert runs_to_add(F(4, 5), 5, 5) == 0
    assert next_step(F(4, 5), 5, 5).reason == "clear"


def test_breach_after_k_runs_is_run_again():
    step = next_step(F(4, 5), 1, 5)  # 0.20 < 0.50: breaches the literal rule
    assert step == confirmation.StageDecision(5, "suspect")
    assert runs_to_add(F(4, 5), 1, 5, (5, 20, 30)) == 15


def test_near_breach_is_run_again():
    # 3/5 vs 0.80: not a breach (0.60 >= 0.50) but within 1.1 * 0.5*sqrt(1/5 - 1/50) of the line
    assert runs_to_add(F(4, 5), 3, 5) == 5
    assert runs_to_add(F(4, 5), 4, 5) == 0


def test_never_confirmed_on_the_first_stage_alone():
    assert next_step(F(1), 0, 5).reason == "suspect"
    assert next_step(F(1), 0, 10).reason == "confirmed"
    assert gate.rate_status(F(1), 0, 10) == "regressed"


def test_decided_when_no_remaining_runs_can_clear():
    step = next_step(F(1), 0, 5, (5, 10))  # even 5/5 more: 5/10 < 0.70
    assert step == confirmation.StageDecision(0, "decided")


def test_decided_only_when_the_remaining_runs_cannot_reach_the_line():
    """Catches the "decided" stop's `<` turned into `<=`: 2/5 plus 5 passes is 7/10, exactly the
    line T = 1.0 - 0.30, which is not a regression, so the verdict is still open."""
    assert gate.rate_status(F(1), 7, 10) == "unchanged"
    assert next_step(F(1), 2, 5, (5, 10)) == confirmation.StageDecision(5, "suspect")
    assert next_step(F(1), 1, 5, (5, 10)) == confirmation.StageDecision(0, "decided")  # 6/10 at best


def test_decided_clear_when_no_remaining_runs_can_breach():
    """10/20 against T = 10/21 with one run left: 10/21 even if it fails, so the verdict is
    fixed, though the rate is closer to the line than the clear margin."""
    base = F(10, 21) + F(3, 10)
    assert next_step(base, 10, 20, (5, 20, 21)) == confirmation.StageDecision(0, "decided")
    assert gate.rate_status(base, 10, 21) == "unchanged"
    assert next_step(base, 9, 20, (5, 20, 21)) == confirmation.StageDecision(1, "suspect")


# Exact ties of the margins: with stages (5, 9, 12), s(9) = 0.5*sqrt(1/9 - 1/12) = 1/12, so the
# clear margin is 1.1/12 = 11/120 and the confirm margin 1.9/12 = 19/120.
TIE_STAGES = (5, 9, 12)


def test_clear_margin_is_reached_at_exact_equality():
    """Catches the clear margin's `>=` turned into `>`: 6/9 is exactly 11/120 above T = 23/40."""
    base = F(23, 40) + F(3, 10)
    assert F(6, 9) - (base - gate.REGRESSION_DROP) == F(11, 120)
    assert next_step(base, 6, 9, TIE_STAGES) == confirmation.StageDecision(0, "clear")
    assert next_step(base + F(1, 1000), 6, 9, TIE_STAGES) == confirmation.StageDecision(3, "suspect")


def test_confirm_margin_must_be_exceeded():
    """Catches the confirm margin's `>` turned into `>=`: 3/9 is exactly 19/120 below T."""
    base = F(3, 9) + F(19, 120) + F(3, 10)
    assert (base - gate.REGRESSION_DROP) - F(3, 9) == F(19, 120)
    assert next_step(base, 3, 9, TIE_STAGES) == confirmation.StageDecision(3, "suspect")
    assert next_step(base + F(1, 1000), 3, 9, TIE_STAGES) == confirmation.StageDecision(0, "confirmed")


def test_suspect_goes_to_the_first_stage_above_the_runs():
    """Catches the stage lookup off by one: at a stage, on to the next; between, to the next."""
    stages = (5, 10, 15)
    assert runs_to_add(F(4, 5), 5, 10, stages) == 5  # 0.50: on the line, run on to 15
    assert runs_to_add(F(4, 5), 2, 5, stages) == 5
    assert runs_to_add(F(4, 5), 4, 7, stages) == 3  # errors left 7 valid runs: up to 10
    assert runs_to_add(F(4, 5), 6, 12, stages) == 3
    assert runs_to_add(F(4, 5), 1, 3, stages) == 2  # below the first stage: up to it


def test_last_stage_is_final():
    stages = (5, 10, 20, 30)
    assert next_step(F(4, 5), 10, 30, stages) == confirmation.StageDecision(0, "last-stage")
    assert next_step(F(4, 5), 10, 40, stages) == confirmation.StageDecision(0, "last-stage")
    # 10 errored runs: the task has had its 30 runs, though only 20 are valid
    assert next_step(F(4, 5), 10, 20, stages, recorded_runs=30) == confirmation.StageDecision(0, "last-stage")


def test_single_stage_is_the_literal_rule():
    for passes in range(6):
        assert runs_to_add(F(4, 5), passes, 5, (5,)) == 0


def test_recorded_runs_bound_staging_when_runs_keep_erroring():
    assert runs_to_add(F(4, 5), 1, 4, (5, 10)) == 1
    assert runs_to_add(F(4, 5), 1, 4, (5, 10), recorded_runs=9) == 1
    assert runs_to_add(F(4, 5), 1, 4, (5, 10), recorded_runs=10) == 0
    # 2 of 8 recorded runs errored: the stage asks 4 more valid runs, the maximum allows 2
    assert runs_to_add(F(4, 5), 3, 6, (5, 10)) == 4
    assert runs_to_add(F(4, 5), 3, 6, (5, 10), recorded_runs=8) == 2


def test_nothing_to_add_without_baseline_or_runs():
    assert runs_to_add(None, 0, 5) == 0
    assert runs_to_add(F(4, 5), 0, 0) == 0


def test_bad_arguments():
    with pytest.raises(ValueError):
        runs_to_add(F(4, 5), 6, 5)
    with pytest.raises(ValueError):
        runs_to_add(F(4, 5), 1, 5, ())


def every_state(stages):
    for x in range(12, 21):
        base = F(x, 20)
        for runs in range(1, stages[-1] + 1):
            for passes in range(runs + 1):
                yield base, passes, runs


def test_every_stop_agrees_with_the_rule_on_all_runs():
    """Whatever stops the staging, the stop agrees with the rule applied to the pooled runs;
    "decided" means no outcome of the remaining runs up to the last stage changes it."""
    last = DEFAULT_STAGES[-1]
    for base, passes, runs in every_state(DEFAULT_STAGES):
        step = next_step(base, passes, runs)
        status = gate.rate_status(base, passes, runs)
        state = (base, passes, runs)
        if step.reason == "clear":
            assert status != "regressed", state
        elif step.reason == "confirmed":
            assert status == "regressed", state
        elif step.reason == "decided":
            left = last - runs
            ends = {gate.rate_status(base, passes + ok, last) == "regressed" for ok in (0, left)}
            assert ends == {status == "regressed"}, state
        else:
            assert step.reason in ("suspect", "last-stage"), state
            assert (step.runs_to_add > 0) == (step.reason == "suspect"), state


def test_never_more_runs_than_the_last_stage():
    last = DEFAULT_STAGES[-1]
    for base, passes, runs in every_state(DEFAULT_STAGES):
        for recorded in (runs, runs + 3):
            extra = runs_to_add(base, passes, runs, recorded_runs=recorded)
            assert extra == 0 or recorded + extra <= last, (base, passes, runs, recorded)


def staged(base, true_rate, stages=DEFAULT_STAGES, k=5):
    """(expected runs, P(regressed), most runs) of a task confirmed through next_step, exactly."""
    states = {(c, k): math.comb(k, c) * true_rate**c * (1 - true_rate) ** (k - c)
              for c in range(k + 1)}
    runs = flagged = 0.0
    most = 0
    while states:
        following = {}
        for (c, n), q in states.items():
            if not q:
                continue
            extra = runs_to_add(base, c, n, stages)
            if not extra:
                runs, most = runs + q * n, max(most, n)
                flagged += q * (gate.rate_status(base, c, n) == "regressed")
                continue
            for y in range(extra + 1):
                weight = math.comb(extra, y) * true_rate**y * (1 - true_rate) ** (extra - y)
                following[(c + y, n + extra)] = following.get((c + y, n + extra), 0) + q * weight
        states = following
    return runs, flagged, most


def test_a_clear_regression_stops_early():
    runs, flagged, most = staged(F(9, 10), 0.5)  # 0.90 -> 0.50: re-run to 100 runs before
    assert runs < 30 and flagged > 0.8 and most == DEFAULT_STAGES[-1]
    runs, flagged, _ = staged(F(9, 10), 0.4)  # a drop of 0.5
    assert runs < 20 and flagged > 0.95


def test_a_clear_pass_stops_early():
    for base in (F(3, 5), F(4, 5), F(9, 10)):
        runs, flagged, _ = staged(base, float(base))
        assert runs < 8 and flagged < 0.001, base
    assert staged(F(1), 1.0) == (5.0, 0.0, 5)


# --- the simulation -----------------------------------------------------------------------------


def load_gate_sim():
    spec = importlib.util.spec_from_file_location("gate_sim", REPO / "bench" / "gate_sim.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gate_sim_calls_the_product_functions(monkeypatch):
    sim = load_gate_sim()
    calls = {"rate_status": 0, "runs_to_add": 0, "threshold": 0}
    real = (gate.rate_status, confirmation.runs_to_add, baseline.meets_record_threshold)

    def counting(name, fn):
        def wrapper(*args, **kw):
            calls[name] += 1
            return fn(*args, **kw)
        return wrapper

    monkeypatch.setattr(gate, "rate_status", counting("rate_status", real[0]))
    monkeypatch.setattr(confirmation, "runs_to_add", counting("runs_to_add", real[1]))
    monkeypatch.setattr(baseline, "meets_record_threshold", counting("threshold", real[2]))
    out = sim.simulate(sim.true_rates(20), 20, 5, DEFAULT_STAGES, 0.4, 30, random.Random(1))
    assert all(calls.values()), calls
    assert 0 <= out["flagged"][1] <= 1 and out["runs"][1] >= 1
    calls.update(dict.fromkeys(calls, 0))
    sim.exact(sim.true_rates(3), 10, 5, DEFAULT_STAGES, 0.4)
    assert all(calls.values()), calls


def test_gate_sim_figures_follow_the_product_functions(monkeypatch):
    """Not just called: change a product function and the simulation's figures change with it."""
    sim = load_gate_sim()
    rates = sim.true_rates(6)

    def run(drop, trials=200):
        return sim.simulate(rates, 20, 5, DEFAULT_STAGES, drop, trials, random.Random(7))

    staged = run(0.4)
    assert staged["runs"][1] > 1
    monkeypatch.setattr(confirmation, "runs_to_add", lambda *args, **kw: 0)
    literal_only = run(0.4)
    assert literal_only["runs"][1] == 1.0
    assert literal_only["flagged"][0] == literal_only["flagged"][1]
    monkeypatch.setattr(gate, "rate_status", lambda *args: "regressed")
    assert run(0.0)["pr_fail"] == [1.0, 1.0]
    monkeypatch.setattr(baseline, "meets_record_threshold", lambda rate: False)
    nothing_gated = run(0.0)
    assert nothing_gated["pr_fail"] == [0.0, 0.0] and nothing_gated["gated"] == 0


def test_gate_sim_exact_figures_of_the_shipped_rule():
    """The figures docs/gate.md and docs/benchmarks.md quote (exact, 40-run baselines); the targets that
    are met stay met, and the two that are not (the information limit, docs/gate.md) stay close."""
    sim = load_gate_sim()
    rows = sim.scenarios(sim.true_rates(20), 40, 5, DEFAULT_STAGES, 1, 1, True,
                         only=sim.FIGURE_SCENARIOS)
    figures = sim.figures(rows)
    assert figures["false_alarm_per_pr"] == pytest.approx(0.0197, abs=5e-4)
    assert figures["runs_ratio"] == pytest.approx(1.400, abs=5e-4)
    assert figures["detect_drop_0_4"] == pytest.approx(0.819, abs=1e-3)
    assert figures["runs_drop_0_5"] == pytest.approx(17.8, abs=0.1)
    assert sim.met(figures) == {"false_alarm_per_pr": True, "detect_drop_0_4": False,
                                "runs_ratio": True, "runs_drop_0_5": False}
    literal = figures["literal"]
    assert literal["false_alarm_per_pr"] > 0.5  # the literal 5-run rule cries wolf
    assert literal["detect_drop_0_4"] < figures["detect_drop_0_4"]
    assert figures["rate_known"]["detect_drop_0_4"] > 0.95  # the baseline's noise alone


def test_gate_sim_json_keys(capsys):
    sim = load_gate_sim()
    assert sim.main(["--exact", "--json", "--tasks", "6", "--baseline-runs", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("false_alarm_per_pr", "detect_drop_0_4"):
        assert 0 <= out[key] <= 1
    assert out["runs_ratio"] >= 1 and out["runs_drop_0_5"] >= 5
    assert set(out["met"]) == set(out["targets"]) == {
        "false_alarm_per_pr", "detect_drop_0_4", "runs_ratio", "runs_drop_0_5"}
    assert out["stages"] == list(DEFAULT_STAGES) and out["baseline_runs"] == 20
    assert set(out["by_baseline_runs"]["20"]["flagged"]) == {
        "drop_0_2", "drop_0_3", "drop_0_4", "drop_0_5"}


@pytest.mark.parametrize("args", [["--stages", "5,3"], ["--baseline-runs", "40,x"],
                                  ["--trials", "0"]])
def test_gate_sim_bad_arguments(args, capsys):
    sim = load_gate_sim()
    with pytest.raises(SystemExit) as exit_info:
        sim.main(args)
    assert exit_info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_gate_limit_policy_is_optimal_against_the_shipped_rule():
    """The bound in docs/gate.md is a bound: on a small suite the optimal table's objective is
    never above the shipped rule's, nor the literal rule's, and it does use extra runs."""
    sim = load_gate_sim()
    spec = importlib.util.spec_from_file_location("gate_limit", REPO / "bench" / "gate_limit.py")
    limit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(limit)
    rates, n_baseline, stages = sim.true_rates(4), 10, (5, 10, 15, 20)
    for lams in ((14, 5, 0.03), (2, 20, 0.0), (40, 1, 0.5)):
        table = limit.solve(rates, n_baseline, 5, stages, *lams)
        optimal = limit.objective(rates, n_baseline, 5, limit.OptimalJudge(stages, table), *lams)
        shipped = limit.objective(rates, n_baseline, 5, sim.Judge(stages), *lams)
        literal = limit.objective(rates, n_baseline, 5, sim.Judge((5,)), *lams)
        assert optimal <= shipped + 1e-12 and optimal <= literal + 1e-12, lams
        assert optimal < literal - 1e-3 and any(table.values()), lams
