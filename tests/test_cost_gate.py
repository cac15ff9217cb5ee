"""The configurable gate and the cost / tokens / wall axes: `gate:` in ci-eval.yaml, the axis
decision (pure), and the real CLI end to end (baseline update -> compare)."""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction

import pytest
from test_compare_cli import write_task

from ci_eval.agents.config_file import parse_config
from ci_eval.errors import UserError
from ci_eval.results import stats
from ci_eval.verdict import axes
from ci_eval.verdict.rules import DEFAULT_RULES, AxisRule

# --- the statistics -----------------------------------------------------------------------------


def test_distribution_of_values():
    d = stats.distribution([400.0, 100.0, 200.0])
    assert d.n == 3 and d.mean == pytest.approx(700 / 3) and d.values == (100.0, 200.0, 400.0)
    assert d.log_mean == pytest.approx(math.log(200.0))  # the geometric mean is 200
    assert d.log_sd == pytest.approx(math.log(2.0))
    assert stats.distribution([]) is None
    zero = stats.distribution([0.0, 0.0])  # $0 runs: counted at the floor, not -inf
    assert zero.log_mean == math.log(stats.LOG_FLOOR) and zero.log_sd == 0.0
    many = stats.distribution([float(v) for v in range(1000)])
    assert many.n == 1000 and len(many.values) == stats.MAX_VALUES
    assert many.values[0] == 0 and many.values[-1] == 999  # both ends kept


def test_rank_test_exact_tail():
    """U's exact null distribution: every ordering of the runs equally likely."""
    base, now = stats.distribution([1, 2, 3, 4]), stats.distribution([5, 6, 7])
    assert stats.rank_test_greater(base, now) == (12.0, 1 / math.comb(7, 3))  # all above
    u, p = stats.rank_test_greater(stats.distribution([1, 3, 5, 7]), stats.distribution([4, 6, 8]))
    assert u == 2 + 3 + 4
    # orderings of 3 among 7 with U >= 9 (of 12): counted by brute force
    from itertools import combinations
    count = sum(1 for chosen in combinations(range(7), 3)
                if sum(c - i for i, c in enumerate(chosen)) >= 9)
    assert p == pytest.approx(count / math.comb(7, 3))
    tied = stats.rank_test_greater(stats.distribution([5, 5, 5]), stats.distribution([5, 5]))
    assert tied[0] == 3.0 and tied[1] > 0.5  # all ties: nothing is evidence


def test_rank_test_normal_beyond_the_exact_limit():
    base = stats.distribution([float(v) for v in range(100)])
    now = stats.distribution([float(v) + 0.5 for v in range(50, 80)])  # 3000 pairs
    u, p = stats.rank_test_greater(base, now)
    n, m = 30, 100
    z = (u - 0.5 - n * m / 2) / math.sqrt(n * m * (n + m + 1) / 12)
    assert p == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)))


def test_hodges_lehmann_ratio_ignores_one_outlier():
    base = stats.distribution([100.0] * 10)
    assert stats.log_shift(base, stats.distribution([300.0] * 5)) == pytest.approx(3.0)
    assert stats.log_shift(base, stats.distribution([100.0] * 4 + [10000.0])) == pytest.approx(1.0)


# --- the axis decision (pure) -------------------------------------------------------------------

RULE = AxisRule()  # > x1.5, report only


def dist(typical, spread=0.3, n=40):
    """n runs spread evenly (in logs) around `typical`: a deterministic stand-in for runs."""
    return stats.distribution([typical * math.exp(spread * (2 * (i + 0.5) / n - 1))
                               for i in range(n)])


def test_three_times_the_tokens_regresses_and_fails_only_when_configured():
    verdict = axes.axis_status("tokens", RULE, dist(1000), dist(3000, n=5))
    assert verdict.status == "regressed" and verdict.ratio == pytest.approx(3.0)
    assert verdict.p == 1 / math.comb(45, 5) and not verdict.fails  # every PR run above
    assert "tokens ×3.00" in verdict.evidence and "over 5 runs vs 1000 over 40" in verdict.evidence
    assert "U = 200 of 200 pairs" in verdict.evidence
    assert axes.axis_status("tokens", AxisRule(fail=True), dist(1000), dist(3000, n=5)).fails


def test_a_rise_below_the_ratio_is_unchanged_however_certain():
    certain = axes.axis_status("cost", RULE, dist(1.0, 0.01), dist(1.4, 0.01, n=5))
    assert certain.p < 1e-6 and certain.status == "unchanged"
    assert axes.axis_status("cost", AxisRule(max_increase=Fraction(1, 4)), dist(1.0, 0.01),
                            dist(1.4, 0.01, n=5)).status == "regressed"


def test_a_noisy_rise_beyond_the_ratio_is_not_evidence():
    noisy = axes.axis_status("wall", RULE, dist(10, 3.0), dist(20, 3.0, n=5))
    assert noisy.ratio > 1.5 and noisy.p > axes.ALPHA
    assert noisy.status == "unchanged"


def test_improved_and_unknown():
    improved = axes.axis_status("wall", RULE, dist(30), dist(10, n=5))
    assert improved.status == "improved" and improved.p == 1 / math.comb(45, 5)
    assert axes.axis_status("wall", RULE, None, dist(10, n=5)).status == "unknown"
    assert axes.axis_status("wall", RULE, dist(10), None).status == "unknown"
    one_each = axes.axis_status("wall", RULE, dist(10, n=1), dist(30, n=1))
    assert one_each.status == "unknown" and "too few" in one_each.why_unknown
    data = axes.axis_status("cost", RULE, dist(1.0), dist(3.0, n=5)).to_json()
    assert data["status"] == "regressed" and data["baseline"]["n"] == 40
    assert data["max_increase"] == "1/2" and data["fail"] is False and data["mann_whitney_u"] == 200


# --- gate: in ci-eval.yaml ----------------------------------------------------------------------


def test_gate_section_defaults_and_exact_values():
    assert parse_config({}).gate == DEFAULT_RULES
    rules = parse_config({"gate": {"regression_threshold": 0.1, "min_baseline_rate": 0.7,
                                   "tokens": {"max_increase": 2, "fail": True}}}).gate
    assert rules.regression_threshold == Fraction(1, 10)  # the decimal written, not the float
    assert rules.min_baseline_rate == Fraction(7, 10)
    assert rules.axes["tokens"] == AxisRule(Fraction(2), True)
    assert rules.axes["cost"] == AxisRule() and rules.axes["wall"] == AxisRule()
    assert "regression = drop of more than 0.10 (exact)" in rules.describe()
    assert "tokens > ×3 fails" in rules.describe() and "cost > ×1.5 reported" in rules.describe()


@pytest.mark.parametrize(("gate", "field", "needle"), [
    ("[1]", "gate", "expected a mapping"),
    ("{regresion_threshold: 0.1}", "gate.regresion_threshold", "did you mean 'regression_threshold'"),
    ("{regression_threshold: 1}", "gate.regression_threshold", "expected a number >= 0 and < 1"),
    ("{regression_threshold: -0.1}", "gate.regression_threshold", "got -0.1"),
    ("{regression_threshold: '0.3'}", "gate.regression_threshold", "expected a number"),
    ("{min_baseline_rate: 1.5}", "gate.min_baseline_rate", "expected a number >= 0 and <= 1"),
    ("{min_baseline_rate: true}", "gate.min_baseline_rate", "got true"),
    ("{cost: 0.5}", "gate.cost", "expected a mapping (max_increase, fail)"),
    ("{tokens: {max_increase: 0}}", "gate.tokens.max_increase", "expected a number > 0"),
    ("{wall: {max_increase: .inf}}", "gate.wall.max_increase", "expected a number > 0"),
    ("{wall: {fail: 'yes'}}", "gate.wall.fail", "expected true or false"),
    ("{wall: {fails: true}}", "gate.wall.fails", "did you mean 'fail'"),
    ("{latency: {fail: true}}", "gate.latency", "unknown key"),
])
def test_bad_gate_section_is_one_line_naming_file_and_field(tmp_path, cli, assert_bad_input,
                                                            gate, field, needle):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "ci-eval.yaml").write_text(f"gate: {gate}\n")
    with pytest.raises(UserError) as caught:
        from ci_eval.agents.config_file import load_config

        load_config(tmp_path)
    assert caught.value.field == field and needle in str(caught.value)
    # and through the CLI: compare reads it before anything else
    assert_bad_input(cli("compare", "--root", tmp_path), "ci-eval.yaml", field, needle)


# --- the real CLI: baseline update, then compare ----------------------------------------------


def write_runs(root, task, outcomes, *, tokens, cost, wall, folder="results"):
    """Runs with per-run usage jittered by +-10% (so the distributions have a spread)."""
    out = root / folder
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"{task}.jsonl", "w") as handle:
        for run, outcome in enumerate(outcomes, start=1):
            jitter = 1 + 0.1 * math.sin(run * 2.3)
            handle.write(json.dumps({
                "run": run, "task": task, "status": "pass" if outcome == "p" else "fail",
                "passed": outcome == "p", "agent": "ref", "k": len(outcomes),
                "tokens": round(tokens * jitter), "cost_usd": cost * jitter,
                "wall_seconds": wall * jitter}) + "\n")


@pytest.fixture
def recorded(tmp_path, cli):
    """A repo whose baseline (schema 3) was recorded by `baseline update` from 40 runs."""
    root = tmp_path / "repo"
    write_task(root, "task-001-a")
    write_runs(root, "task-001-a", "p" * 40, tokens=4000, cost=0.02, wall=30.0)
    done = cli("baseline", "update", "--all", "--date", "2026-02-01", cwd=root)
    assert done.returncode == 0, done.stderr
    data = json.loads((root / "baseline.json").read_text())
    assert data["schema_version"] == 3
    assert data["tasks"]["task-001-a"]["distributions"]["tokens"]["n"] == 40
    return root


def compare_json(cli, root, *extra):
    result = cli("compare", "--json", *extra, cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def test_same_pass_rate_at_three_times_tokens_and_cost_is_flagged(recorded, cli):
    write_runs(recorded, "task-001-a", "ppppp", tokens=12000, cost=0.06, wall=30.0)
    code, data = compare_json(cli, recorded)
    task = data["tasks"][0]
    assert task["status"] == "unchanged" and task["fails_gate"] is False and code == 0
    assert task["axes"]["tokens"]["status"] == "regressed"
    assert task["axes"]["cost"]["status"] == "regressed"
    assert task["axes"]["wall"]["status"] == "unchanged"
    assert task["axes"]["tokens"]["ratio"] == pytest.approx(3.0, rel=0.05)
    assert "one-sided p = " in task["axes"]["cost"]["evidence"]
    markdown = cli("compare", "--format", "markdown", cwd=recorded).stdout
    assert "2 cost/tokens/wall regression(s)" in markdown
    changed = markdown.split("<details>")[0]
    # beside the pass rate (the runs' jitter moves the ratio a little off 3)
    assert re.search(r"\| task-001-a \| unchanged \| 1\.00 \(40/40\) \| 1\.00 \(5/5\) \| ±0\.00 \| "
                     r"cost ×(2\.9\d|3\.0\d) regressed, tokens ×(2\.9\d|3\.0\d) regressed \|", changed)
    assert "cost > ×1.5 reported, tokens > ×1.5 reported, wall > ×1.5 reported" in markdown

    (recorded / "ci-eval.yaml").write_text("gate:\n  tokens: {max_increase: 0.5, fail: true}\n")
    code, data = compare_json(cli, recorded)
    task = data["tasks"][0]
    assert code == 1 and data["passed"] is False and task["fails_gate"] is True
    assert task["axes"]["tokens"]["fails_gate"] and not task["axes"]["cost"]["fails_gate"]
    table = cli("compare", cwd=recorded)
    assert table.returncode == 1 and re.search(r"tokens ×\d\.\d\d regressed \(fails\)", table.stdout)
    assert "tokens > ×1.5 fails" in table.stdout


def test_same_usage_is_unchanged_and_a_version_2_baseline_unknown(recorded, cli):
    write_runs(recorded, "task-001-a", "ppppp", tokens=4000, cost=0.02, wall=30.0)
    code, data = compare_json(cli, recorded)
    assert code == 0 and {a["status"] for a in data["tasks"][0]["axes"].values()} == {"unchanged"}
    old = json.loads((recorded / "baseline.json").read_text())
    old["schema_version"] = 2
    del old["tasks"]["task-001-a"]["distributions"]
    (recorded / "baseline.json").write_text(json.dumps(old))
    write_runs(recorded, "task-001-a", "ppppp", tokens=12000, cost=0.06, wall=90.0)
    code, data = compare_json(cli, recorded)
    assert code == 0 and {a["status"] for a in data["tasks"][0]["axes"].values()} == {"unknown"}
    assert "no per-run distribution" in data["tasks"][0]["axes"]["cost"]["evidence"]


def test_ten_of_ten_to_eight_of_ten_regresses_only_at_threshold_0_10(tmp_path, cli):
    root = tmp_path / "repo"
    write_task(root, "task-001-a")
    write_runs(root, "task-001-a", "p" * 10, tokens=4000, cost=0.02, wall=30.0)
    assert cli("baseline", "update", "--all", cwd=root).returncode == 0
    write_runs(root, "task-001-a", "p" * 8 + "ff", tokens=4000, cost=0.02, wall=30.0)
    code, data = compare_json(cli, root)
    assert code == 0 and data["tasks"][0]["status"] == "unchanged"  # a drop of 0.2 <= 0.30
    (root / "ci-eval.yaml").write_text("gate:\n  regression_threshold: 0.10\n")
    code, data = compare_json(cli, root)
    assert code == 1 and data["tasks"][0]["status"] == "regressed"
    assert data["rule"]["regression_threshold"] == "1/10"
    markdown = cli("compare", "--format", "markdown", cwd=root).stdout
    assert "regression = drop of more than 0.10 (exact)" in markdown
    # exactly the threshold passes: 10/10 -> 9/10 is a drop of exactly 0.10
    write_runs(root, "task-001-a", "p" * 9 + "f", tokens=4000, cost=0.02, wall=30.0)
    assert compare_json(cli, root)[1]["tasks"][0]["status"] == "unchanged"


def test_min_baseline_rate_decides_what_is_gated(tmp_path, cli):
    root = tmp_path / "repo"
    write_task(root, "task-001-a")
    (root / "ci-eval.yaml").write_text("gate:\n  min_baseline_rate: 0.9\n")
    write_runs(root, "task-001-a", "p" * 8 + "ff", tokens=4000, cost=0.02, wall=30.0)
    update = cli("baseline", "update", "--all", cwd=root)
    assert "below 0.90: aspirational, not gated" in update.stdout
    write_runs(root, "task-001-a", "fffff", tokens=4000, cost=0.02, wall=30.0)
    code, data = compare_json(cli, root)
    assert code == 0 and data["tasks"][0]["status"] == "aspirational"


# --- the step summary's chart (pure) ------------------------------------------------------------


def test_mermaid_charts_of_pass_rate_and_cost():
    from ci_eval.render.trend import mermaid_charts
    from ci_eval.results.history import RunSummary, TaskRecord

    def run(date, passes, cost):
        tasks = {"task-001-a": TaskRecord("task-001-a", 5, passes, 0, 5, cost_usd=cost),
                 "task-002-b": TaskRecord("task-002-b", 5, 5, 0, 5, cost_usd=cost)}
        return RunSummary(date=date, recorded_at=f"{date}T10:00:00Z", commit=None, agent="a",
                          ci_eval_version="0", tasks=tasks)

    runs = [run(f"2026-11-{d:02d}", d % 6, 0.5) for d in range(1, 26)]
    runs[-1] = run("2026-11-25", 1, None)
    text = mermaid_charts(runs)
    assert "the last 20 recorded run(s)" in text and '"#6"' in text and '"#5"' not in text
    assert "Runs #6–#25 of the history, 2026-11-06 … 2026-11-25." in text
    line = text.split("    line [", 1)[1].split("]", 1)[0].split(", ")
    assert len(line) == 20 and line[0] == "50.0" and line[-1] == "60.0"  # (0 + 5) / 10, (1 + 5) / 10
    assert 'y-axis "pass rate (%)" 0 --> 100' in text
    bars = text.split("    bar [", 1)[1].split("]", 1)[0].split(", ")
    assert bars[0] == "1" and bars[-1] == "0"
    assert "1 of these run(s) recorded no cost (drawn at 0)." in text
    assert "bar [" not in mermaid_charts([run("2026-11-01", 5, None)])
    assert mermaid_charts([]) == ""


# --- the benches run (tiny sizes): their figures come from the product's own functions --------


def test_cost_sim_and_gate_pool_run_and_report(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "bench"
    done = subprocess.run([sys.executable, str(bench / "cost_sim.py"), "--trials", "8",
                           "--tasks", "3", "--json"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data["families"]) == {"lognormal", "heavy", "gamma"}
    assert 0 <= data["false_flag_per_pr"] <= 1 and data["settings"]["alpha"] == axes.ALPHA
    assert "detect_rise_1_5" in data and isinstance(data["target_met"], bool)
    done = subprocess.run([sys.executable, str(bench / "gate_pool.py"), "--trials", "4",
                           "--tasks", "3", "--main-runs", "0,2", "--json"], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    pooled = json.loads(done.stdout)["main_runs"]
    assert set(pooled) == {"0", "2"} and "drift 0.2 + PR drop 0.2" in pooled["2"]["scenarios"]
    # with nothing pooled the reference is the baseline: both columns judge alike
    none = pooled["0"]["scenarios"]["no change"]
    assert none["pr_fail"][0] == none["pr_fail"][1] and none["pooled_share"] == 0
    bad = subprocess.run([sys.executable, str(bench / "gate_pool.py"), "--main-runs", "x"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "--main-runs" in bad.stderr
