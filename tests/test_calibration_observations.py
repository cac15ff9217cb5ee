"""Calibration observations: every `baseline update` records what it measured, also when it
refuses to lower a gate, and calibration reads those observations (baseline.json version 2;
version 1 files are still read)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ci_eval.errors import UserError
from ci_eval.verdict import baseline as bl

HASH = "sha256:" + "0" * 64


def change(old, passes, runs, *, recorded, prompt_hash=HASH):
    return bl.updated_entry(old, task="task-001-a", passes=passes, runs=runs, recorded=recorded,
                            prompt_hash=prompt_hash, avg_tokens=None, avg_wall_seconds=None,
                            allow_below_threshold=False)


def test_a_refused_update_keeps_the_gate_and_records_the_observation():
    gated = change(None, 4, 5, recorded="2026-01-01").stored
    refused = change(gated, 2, 5, recorded="2026-02-01")
    assert refused.action == "refused" and refused.new is None
    assert refused.stored.snapshot == gated.snapshot  # the gate value did not move
    assert refused.stored.history == (bl.Snapshot("2026-01-01", 4, 5),
                                      bl.Snapshot("2026-02-01", 2, 5))
    assert "observation recorded for calibration" in refused.message
    again = change(refused.stored, 2, 5, recorded="2026-02-01")  # same evidence, same day
    assert again.stored == refused.stored


def test_a_refusal_after_a_prompt_change_observes_nothing():
    gated = change(None, 4, 5, recorded="2026-01-01").stored
    refused = change(gated, 1, 5, recorded="2026-02-01", prompt_hash="sha256:" + "1" * 64)
    assert refused.action == "refused" and refused.stored == gated
    assert "observation" not in refused.message


def test_observations_are_capped_also_through_refusals():
    entry = change(None, 5, 5, recorded="2026-01-01").stored
    for day in range(2, 20):
        entry = change(entry, 1, 5, recorded=f"2026-01-{day:02d}").stored
    assert len(entry.history) == bl.MAX_SNAPSHOTS
    assert entry.history[-1] == bl.Snapshot("2026-01-19", 1, 5)
    assert entry.snapshot == bl.Snapshot("2026-01-01", 5, 5)


def v1_file(snapshots=None, **entry) -> dict:
    raw = {"passes": 4, "runs": 5, "pass_rate": 0.8, "recorded": "2026-01-03",
           "prompt_hash": HASH, **entry}
    if snapshots is not None:
        raw["snapshots"] = [{"recorded": d, "passes": p, "runs": r} for d, p, r in snapshots]
    return {"schema_version": 1, "agent": "ref", "tasks": {"task-001-a": raw}}


def test_version_1_snapshots_are_read_as_observations():
    data = v1_file([("2026-01-01", 5, 5), ("2026-01-03", 4, 5)])
    entry = bl.parse_baseline(data).entries["task-001-a"]
    assert entry.history == (bl.Snapshot("2026-01-01", 5, 5), bl.Snapshot("2026-01-03", 4, 5))
    # version 1's rule: the list ends with the entry itself, appended when left out
    short = bl.parse_baseline(v1_file([("2026-01-01", 5, 5)])).entries["task-001-a"]
    assert short.history[-1] == bl.Snapshot("2026-01-03", 4, 5) and len(short.history) == 2
    assert bl.parse_baseline(v1_file()).entries["task-001-a"].history == (short.snapshot,)


def test_version_1_is_written_back_as_version_3():
    loaded = bl.parse_baseline(v1_file([("2026-01-01", 5, 5), ("2026-01-03", 4, 5)]))
    written = json.loads(bl.dumps_baseline(loaded))
    assert written["schema_version"] == 3
    assert "snapshots" not in written["tasks"]["task-001-a"]
    assert len(written["tasks"]["task-001-a"]["observations"]) == 2
    assert bl.parse_baseline(written) == loaded


def test_each_version_has_its_own_list_name():
    data = v1_file()
    data["tasks"]["task-001-a"]["observations"] = []
    with pytest.raises(UserError, match=r"\$.tasks.task-001-a.observations: unknown field in a "
                                        r"schema_version 1 file \(expected 'snapshots'\)"):
        bl.parse_baseline(data, "baseline.json")
    data = v1_file([("2026-01-01", 5, 5)])
    data["schema_version"] = 2
    with pytest.raises(UserError, match=r"baseline.json: \$.tasks.task-001-a.snapshots: unknown "
                                        r"field in a schema_version 2 file"):
        bl.parse_baseline(data, "baseline.json")


def test_bad_observation_names_its_index():
    data = v1_file()
    data["schema_version"] = 2
    data["tasks"]["task-001-a"]["observations"] = [{"recorded": "2026-01-01", "passes": 6,
                                                    "runs": 5}]
    with pytest.raises(UserError, match=r"observations\[0\].passes: 6 passes is more than 5"):
        bl.parse_baseline(data, "baseline.json")


# --- through the real CLI -----------------------------------------------------------------------


def write_labelled_task(root: Path, name: str, expected: float) -> None:
    task = root / "tasks" / name
    task.mkdir(parents=True)
    (task / "prompt.md").write_text(f"Do {name}.\n")
    (task / "checks.py").write_text("raise SystemExit(0)\n")
    (task / "metadata.json").write_text(json.dumps({
        "difficulty": 2, "area": "demo", "tags": [], "created": "2026-01-01",
        "human_label": {"expected_pass_rate": expected}}))


def write_results(root: Path, task: str, outcomes: str) -> None:
    folder = root / "results"
    folder.mkdir(exist_ok=True)
    digest = "sha256:" + hashlib.sha256((root / "tasks" / task / "prompt.md").read_bytes()
                                        ).hexdigest()
    lines = [json.dumps({"run": n, "task": task, "status": "pass" if c == "p" else "fail",
                         "passed": c == "p", "agent": "ref", "k": len(outcomes),
                         "prompt_hash": digest})
             for n, c in enumerate(outcomes, start=1)]
    (folder / f"{task}.jsonl").write_text("\n".join(lines) + "\n")


def test_a_gated_task_measured_low_three_times_without_lowering_its_gate_is_flagged(tmp_path,
                                                                                     cli):
    root = tmp_path / "repo"
    write_labelled_task(root, "task-001-labelled", 0.8)
    write_results(root, "task-001-labelled", "ppppf")  # 0.80: gated
    first = cli("baseline", "update", "--all", "--date", "2026-03-01", cwd=root)
    assert first.returncode == 0 and "added: 4/5 = 0.80" in first.stdout, first.stderr
    write_results(root, "task-001-labelled", "ppfff")  # 0.40, three refreshes in a row
    for day in ("2026-04-01", "2026-05-01", "2026-06-01"):
        refused = cli("baseline", "update", "--all", "--date", day, cwd=root)
        assert refused.returncode == 0, refused.stderr
        assert "refused: 2/5 = 0.40 is below 0.60; the baseline stays 4/5 = 0.80" in refused.stdout
        assert "observation recorded for calibration" in refused.stdout
    entry = json.loads((root / "baseline.json").read_text())["tasks"]["task-001-labelled"]
    assert (entry["passes"], entry["runs"], entry["recorded"]) == (4, 5, "2026-03-01")
    assert [o["passes"] for o in entry["observations"]] == [4, 2, 2, 2]

    result = cli("calibrate", "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    (warning,) = json.loads(result.stdout)["warnings"]
    assert warning["task"] == "task-001-labelled" and warning["direction"] == "too strict"
    assert warning["observed_pass_rates"] == [0.4, 0.4, 0.4]
    assert warning["snapshot_dates"] == ["2026-04-01", "2026-05-01", "2026-06-01"]
    text = cli("calibrate", cwd=root)
    assert text.stdout.startswith("warning: task-001-labelled: checks look too strict")

    # and the PR report says it too (compare reads the same observations)
    write_results(root, "task-001-labelled", "ppppf")
    compared = cli("compare", "--format", "markdown", cwd=root)
    assert compared.returncode == 0, compared.stderr
    assert "Calibration warnings" in compared.stdout and "too strict" in compared.stdout


def test_a_version_1_baseline_still_calibrates(tmp_path, cli):
    root = tmp_path / "repo"
    write_labelled_task(root, "task-001-labelled", 0.8)
    data = v1_file([("2026-01-01", 2, 5), ("2026-01-02", 2, 5), ("2026-01-03", 2, 5)],
                   passes=2, aspirational=True)
    data["tasks"]["task-001-labelled"] = data["tasks"].pop("task-001-a")
    data["tasks"]["task-001-labelled"]["pass_rate"] = 0.4
    (root / "baseline.json").write_text(json.dumps(data))
    result = cli("calibrate", "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    assert [w["task"] for w in json.loads(result.stdout)["warnings"]] == ["task-001-labelled"]
