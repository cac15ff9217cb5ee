"""bench/stages.py times the real CLI: every stage was reached, and the stages it times lie
within the run (what is left for workspace and the rest is positive)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
