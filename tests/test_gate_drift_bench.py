"""bench/gate_drift.py measures the product's own decisions (verdict/control.py): change them and
its figures change; and on a small suite it shows what the control arm is for."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from fractions import Fraction
from pathlib import Path

from ci_eval.verdict import control

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench():
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("gate_drift", BENCH / "gate_drift.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _args(**kw):
    values = {"trials": 150, "seed": 3, "tasks": 8, "k": 5, "baseline_runs": 40,
              "alpha": control.CONTROL_ALPHA, "drift_fails": False, "json": True}
    values.update(kw)
    return argparse.Namespace(**values)


def test_drift_no_longer_fails_prs_that_change_nothing():
    out = load_bench().run(_args())
    drifted = out["scenarios"]["drift 0.2"]
    assert drifted["pr_fail"][0] > 0.4  # the baseline alone fails most such PRs
    assert drifted["pr_fail"][1] < 0.1  # the control arm: drift, not the PR's regression
    assert drifted["drifted_per_pr"] > 0.5
    assert out["scenarios"]["drift 0.2 + PR drop 0.4"]["flagged"][1] > 0.6
    assert out["scenarios"]["drift to zero (1.0) + PR drop 0.4"]["flagged"][1] == 0  # the limit


def test_the_figures_follow_the_product_functions(monkeypatch):
    bench = load_bench()
    monkeypatch.setattr(control, "arm_status", lambda *args, **kw: "regressed")
    out = bench.run(_args(trials=40))
    assert out["scenarios"]["drift 0.0"]["pr_fail"][1] == 1.0
    monkeypatch.setattr(control, "next_step",
                        lambda *args, **kw: control.ArmStep(0, 0, "no-runs"))
    out = bench.run(_args(trials=40))
    assert out["scenarios"]["drift 0.2"]["runs_ratio"][1] == 1.0  # k runs each, no control


def test_drift_fail_counts_drifted_tasks_as_failures():
    out = load_bench().run(_args(drift_fails=True, alpha=Fraction(1, 1500)))
    assert out["scenarios"]["drift 0.2"]["pr_fail"][1] > 0.4
