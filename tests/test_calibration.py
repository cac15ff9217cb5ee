"""Judge calibration: the pure rule at its edges, and `ci-eval calibrate` driven for real."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction as F
from pathlib import Path

import pytest

from ci_eval.errors import UserError
from ci_eval.verdict import calibration
from ci_eval.verdict.calibration import check_task, expected_rate

REPO = Path(__file__).resolve().parents[1]


def snaps(*rates: str, runs: int = 10) -> list[tuple[str, int, int]]:
    """"0.8" -> ("2026-01-0N", 8, 10)."""
    return [(f"2026-01-{i:02d}", int(F(r) * runs), runs) for i, r in enumerate(rates, start=1)]


def test_three_snapshots_exactly_020_off_are_not_flagged():
    assert check_task("task-001-a", F(3, 5), snaps("0.8", "0.8", "0.8")) is None
    assert check_task("task-001-a", F(3, 5), snaps("0.4", "0.4", "0.4")) is None


def test_three_snapshots_040_off_are_flagged():
    low = check_task("task-001-a", F(3, 5), snaps("0.2", "0.2", "0.2"))
    assert low.direction == calibration.TOO_STRICT
    assert "too strict" in low.message and "0.60" in low.message
    high = check_task("task-001-a", F(2, 5), snaps("0.8", "0.8", "0.8"))
    assert high.direction == calibration.TOO_LOOSE
    assert high.observed == (F(4, 5),) * 3 and high.dates[-1] == "2026-01-03"


def test_snapshots_without_runs_are_passed_over_and_one_run_counts():
    one_run = [("2026-01-01", 0, 1), ("2026-01-02", 0, 0), ("2026-01-03", 0, 1),
               ("2026-01-04", 0, 1)]
    low = check_task("task-001-a", F(4, 5), one_run)
    assert low.direction == calibration.TOO_STRICT
    assert low.dates == ("2026-01-01", "2026-01-03", "2026-01-04")


def test_a_calibrated_snapshot_in_between_is_not_flagged():
    # 0.40 off, 0.00 off, 0.40 off
    assert check_task("task-001-a", F(3, 5), snaps("0.2", "0.6", "0.2")) is None


def test_only_the_last_three_snapshots_count():
    assert check_task("task-001-a", F(3, 5), snaps("0.6", "0.2", "0.2", "0.2")) is not None
    assert check_task("task-001-a", F(3, 5), snaps("0.2", "0.2", "0.2", "0.6")) is None


def test_fewer_than_three_snapshots_is_not_enough_history():
    assert check_task("task-001-a", F(3, 5), snaps("0.0", "0.0")) is None


def test_both_directions_is_inconsistent():
    found = check_task("task-001-a", F(1, 2), snaps("0.1", "0.9", "0.1"))
    assert found.direction == calibration.INCONSISTENT


def test_edge_uses_fractions_not_floats():
    """0.9 observed vs 0.7 expected is exactly 0.20 off (more than 0.20 in floats): not flagged;
    a hair more is."""
    assert check_task("task-001-a", expected_rate(0.7), snaps("0.9", "0.9", "0.9")) is None
    assert check_task("task-001-a", expected_rate(0.69), snaps("0.9", "0.9", "0.9")) is not None


@pytest.mark.parametrize(("value", "rate"), [(0.6, F(3, 5)), (1, F(1)), (0, F(0)), (0.25, F(1, 4))])
def test_expected_rate(value, rate):
    assert expected_rate(value) == rate


@pytest.mark.parametrize("value", [1.5, -0.1, "0.6", None, True])
def test_expected_rate_rejects(value):
    with pytest.raises((TypeError, ValueError)):
        expected_rate(value)


def test_check_all_sorted_and_skips_unlabelled():
    found = calibration.check_all(
        {"task-002-b": F(3, 5), "task-001-a": F(3, 5)},
        {"task-001-a": snaps("0", "0", "0"), "task-002-b": snaps("0", "0", "0"),
         "task-003-c": snaps("0", "0", "0")},
    )
    assert [w.task for w in found] == ["task-001-a", "task-002-b"]
    assert found[0].to_json()["observed_pass_rates"] == [0.0, 0.0, 0.0]


# --- the CLI ------------------------------------------------------------------------------------


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "ci_eval", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=60)


def write_task(root: Path, name: str, label: object = None) -> None:
    task = root / "tasks" / name
    task.mkdir(parents=True)
    (task / "prompt.md").write_text(f"Do {name}.\n")
    (task / "checks.py").write_text("raise SystemExit(0)\n")
    metadata = {"difficulty": 2, "area": "demo", "tags": [], "created": "2026-01-01"}
    if label is not None:
        metadata["human_label"] = {"expected_pass_rate": label}
    (task / "metadata.json").write_text(json.dumps(metadata))


def write_baseline(root: Path, history: dict[str, list[tuple[str, int, int]]]) -> None:
    tasks = {}
    for task, snapshots in history.items():
        date, passes, runs = snapshots[-1]
        tasks[task] = {
            "passes": passes, "runs": runs, "pass_rate": passes / runs, "recorded": date,
            "prompt_hash": "sha256:" + "0" * 64,
            "snapshots": [{"recorded": d, "passes": p, "runs": n} for d, p, n in snapshots],
        }
    (root / "baseline.json").write_text(json.dumps(
        {"schema_version": 1, "agent": "ref", "tasks": tasks}))


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    write_task(root, "task-001-strict", 0.6)
    write_task(root, "task-002-fine", 0.6)
    write_task(root, "task-003-young", 0.6)
    write_task(root, "task-004-unlabelled")
    write_baseline(root, {
        "task-001-strict": snaps("0.2", "0.2", "0.2"),
        "task-002-fine": snaps("0.8", "0.8", "0.8"),
        "task-003-young": snaps("0.0"),
        "task-004-unlabelled": snaps("0.0", "0.0", "0.0"),
    })
    return root


def test_calibrate_warns_and_exits_0(repo):
    result = cli("calibrate", cwd=repo)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("warning: task-001-strict: checks look too strict")
    assert "task-002-fine" not in result.stdout.split("calibration:")[0]
    assert "3 labelled task(s), 1 warning(s)" in lines[-1]
    assert "task-003-young" in lines[-1]


def test_calibrate_json(repo):
    result = cli("calibrate", "--json", "--root", repo, cwd=repo.parent)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [w["task"] for w in data["warnings"]] == ["task-001-strict"]
    assert data["warnings"][0]["direction"] == "too strict"
    assert data["not_enough_history"] == ["task-003-young"]


def test_calibrate_bad_label_is_bad_input(repo):
    write_task(repo, "task-005-bad", "sixty percent")
    result = cli("calibrate", cwd=repo)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "task-005-bad/metadata.json" in result.stderr
    assert "$.human_label.expected_pass_rate" in result.stderr


def test_expected_rates_from_tasks(repo):
    from ci_eval.tasks.load import load_tasks

    found = calibration.expected_rates(load_tasks(repo))
    assert found == {"task-001-strict": F(3, 5), "task-002-fine": F(3, 5),
                     "task-003-young": F(3, 5)}
    from types import SimpleNamespace

    unchecked = SimpleNamespace(id="task-006-bad", path=repo / "tasks" / "task-006-bad",
                                metadata={"human_label": {"expected_pass_rate": 2}})
    with pytest.raises(UserError, match=r"metadata.json: \$.human_label.expected_pass_rate: "):
        calibration.expected_rates([unchecked])
