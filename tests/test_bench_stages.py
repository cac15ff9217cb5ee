"""bench/stages.py times the real CLI: every stage was reached, and the stages it times lie
within the run (what is left for workspace and the rest is positive)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci_eval.run.sandbox import isolation

BENCH = Path(__file__).resolve().parents[1] / "bench" / "stages.py"


def test_every_stage_of_three_runs_is_timed():
    done = subprocess.run([sys.executable, str(BENCH), "--json", "-k", "3"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    parts = ("agent_ms", "checks_ms", "diff_ms", "workspace_and_rest_ms")
    assert figures["runs"] == 3 and all(figures[p] > 0 for p in parts), figures


def test_fewer_than_three_runs_is_a_usage_error():
    done = subprocess.run([sys.executable, str(BENCH), "-k", "2"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2 and "-k must be at least 3" in done.stderr


def test_start_costs_refuses_no_repeats():
    """bench/start_costs.py --repeat 0 would take the median of nothing (a traceback)."""
    done = subprocess.run([sys.executable, str(BENCH.parent / "start_costs.py"), "--repeat", "0"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "--repeat: expected a whole number >= 1" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(not (isolation.detect().agent_sandboxed and isolation.detect().checks_sandboxed),
                    reason="no agent and checks sandbox on this machine")
def test_sandbox_start_times_both_sandboxes_against_another_checkout(tmp_path):
    """bench/sandbox_start.py: each sandbox started for real on both sides (a failed start
    exits non-zero), CPU and wall per start read."""
    subprocess.run(f"git -C {BENCH.parents[1]} archive HEAD ci_eval | tar -x -C {tmp_path}",
                   shell=True, check=True)
    done = subprocess.run([sys.executable, str(BENCH.parent / "sandbox_start.py"), "--json",
                           "--repeat", "2", "--rounds", "1", "--against", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    for side in ("this", "against"):
        assert set(figures[side]) == {"agent_wall_ms", "agent_cpu_ms", "checks_wall_ms",
                                      "checks_cpu_ms"}, figures
        assert figures[side]["agent_wall_ms"] > 0 and figures[side]["checks_wall_ms"] > 0


def test_sandbox_start_refuses_a_folder_without_ci_eval(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH.parent / "sandbox_start.py"), "--against",
                           str(tmp_path)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2 and "expected a folder holding ci_eval/" in done.stderr
    assert "Traceback" not in done.stderr


def test_workspace_copy_measures_both_ways():
    done = subprocess.run([sys.executable, str(BENCH.parent / "workspace_copy.py"), "--json",
                           "--rounds", "1", "--repeat", "2"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["template_cpu_ms"] > 0 and figures["copytree_cpu_ms"] > 0, figures


def test_workspace_copy_refuses_no_rounds():
    done = subprocess.run([sys.executable, str(BENCH.parent / "workspace_copy.py"), "--rounds",
                           "0"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "expected a whole number >= 1" in done.stderr


@pytest.mark.skipif(not (isolation.detect().agent_sandboxed and isolation.detect().checks_sandboxed),
                    reason="no agent and checks sandbox on this machine")
def test_run_cost_splits_a_run_s_cpu_by_process():
    """bench/run_cost.py (--inner: in this interpreter, no venv made): every sandboxed part was
    read from its launcher (a launcher not read would give 0), and each side's total is the sum
    of its parts."""
    done = subprocess.run([sys.executable, str(BENCH.parent / "run_cost.py"), "--inner",
                           "--groups", "1", "--json"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    harness, bare = figures["cpu_ms_per_run"]["harness"], figures["cpu_ms_per_run"]["bare"]
    assert set(harness) == {"runner", "agent_launcher", "agent_sandbox", "checks_launcher",
                            "checks_sandbox", "total"}
    assert set(bare) == {"runner", "agent", "checks", "total"}
    assert harness["agent_sandbox"] > 0 and harness["checks_sandbox"] > 0, figures
    assert bare["agent"] > 0 and bare["checks"] > 0, figures
    for parts in (harness, bare):
        assert abs(parts["total"] - sum(v for k, v in parts.items() if k != "total")) < 0.05
    assert figures["runs"] == 5 and figures["wall_ratio"] > 0, figures


def test_run_cost_refuses_no_groups():
    done = subprocess.run([sys.executable, str(BENCH.parent / "run_cost.py"), "--groups", "0"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "--groups: expected a whole number >= 1" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_cost_without_a_sandbox_says_why_and_measures_nothing():
    done = subprocess.run([sys.executable, str(BENCH.parent / "run_cost.py"), "--inner",
                           "--groups", "1", "--json"], capture_output=True, text=True, timeout=60,
                          check=False, env={**os.environ, "CI_EVAL_NO_ISOLATION": "1"})
    assert done.returncode == 1 and done.stdout == ""
    assert "no agent and checks sandbox here" in done.stderr
    assert "CI_EVAL_NO_ISOLATION" in done.stderr and "Traceback" not in done.stderr
