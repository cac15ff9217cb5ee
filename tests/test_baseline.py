"""baseline.json: strict loading, update decisions, atomic save; `ci-eval baseline update|show`."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from fractions import Fraction as F
from pathlib import Path

import pytest
from harness_helpers import assert_bad_input

from ci_eval.errors import UserError
from ci_eval.verdict import baseline as bl

HASH = "sha256:" + "0" * 64


def good_data() -> dict:
    return {
        "schema_version": 1,
        "agent": "ref",
        "tasks": {
            "task-001-a": {
                "passes": 4, "runs": 5, "pass_rate": 0.8, "avg_tokens": 100.0,
                "avg_wall_seconds": 3.5, "recorded": "2026-01-02", "prompt_hash": HASH,
                "aspirational": False,
                "snapshots": [{"recorded": "2026-01-01", "passes": 5, "runs": 5},
                              {"recorded": "2026-01-02", "passes": 4, "runs": 5}],
            }
        },
    }


# --- loading ------------------------------------------------------------------------------------


def test_round_trip(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(good_data()))
    loaded = bl.load_baseline(path)
    entry = loaded.entries["task-001-a"]
    assert entry.pass_rate == F(4, 5) and loaded.agent == "ref"
    assert [s.passes for s in entry.history] == [5, 4]
    bl.save_baseline(path, loaded)
    migrated = good_data()  # version 1 is read, version 3 written: snapshots -> observations
    migrated["schema_version"] = 3
    entry_json = migrated["tasks"]["task-001-a"]
    entry_json["observations"] = entry_json.pop("snapshots")
    entry_json["distributions"] = {}  # version 1 had none
    assert json.loads(path.read_text()) == migrated
    assert bl.load_baseline(path) == loaded


def test_history_includes_the_entry_when_snapshots_are_left_out():
    data = good_data()
    del data["tasks"]["task-001-a"]["snapshots"]
    entry = bl.parse_baseline(data).entries["task-001-a"]
    assert entry.history == (bl.Snapshot("2026-01-02", 4, 5),)


def bad(mutate) -> str:
    data = good_data()
    mutate(data)
    with pytest.raises(UserError) as info:
        bl.parse_baseline(data, "baseline.json")
    return str(info.value)


def test_wrong_type_names_the_json_path():
    message = bad(lambda d: d["tasks"]["task-001-a"].update(passes="4"))
    assert message == 'baseline.json: $.tasks.task-001-a.passes: expected integer 0-1000000, got "4"'


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("agent"), "$.agent"),
        (lambda d: d["tasks"]["task-001-a"].update(runs=0), "$.tasks.task-001-a.runs"),
        (lambda d: d["tasks"]["task-001-a"].update(recorded="2026-02-30"), ".recorded"),
        (lambda d: d["tasks"]["task-001-a"].update(prompt_hash="md5:x"), ".prompt_hash"),
        (lambda d: d["tasks"]["task-001-a"].update(extra=1), "$.tasks.task-001-a.extra"),
        (lambda d: d["tasks"]["task-001-a"]["snapshots"][1].update(runs="5"),
         "$.tasks.task-001-a.snapshots[1].runs"),
        (lambda d: d["tasks"]["task-001-a"].update(passes=6), "$.tasks.task-001-a.passes"),
        (lambda d: d["tasks"]["task-001-a"].update(pass_rate=0.6), ".pass_rate"),
        (lambda d: d.update(schema_version="1"), "$.schema_version"),
    ],
)
def test_invalid_fields(mutate, field):
    message = bad(mutate)
    assert message.startswith("baseline.json: $.") and field in message


def test_a_pass_rate_within_a_millionth_of_passes_over_runs_is_read():
    data = good_data()
    data["tasks"]["task-001-a"]["pass_rate"] = 0.8 + 5e-7
    entry = bl.parse_baseline(data).entries["task-001-a"]
    assert entry.pass_rate == F(4, 5) and entry.task == "task-001-a"
    assert entry.aspirational is False  # absent: gated


def test_newer_schema_version_is_refused():
    message = bad(lambda d: d.update(schema_version=bl.SCHEMA_VERSION + 1, tasks={"x": []}))
    assert "$.schema_version" in message
    assert f"newer than this ci-eval supports ({bl.SCHEMA_VERSION})" in message


def test_bad_json_and_missing_file(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text('{"schema_version": 1,')
    with pytest.raises(UserError, match=r"baseline.json: invalid JSON \(.* at line 1"):
        bl.load_baseline(path)
    with pytest.raises(UserError, match="baseline file not found"):
        bl.load_baseline(tmp_path / "nope.json")


def test_save_is_atomic_and_keeps_the_mode(tmp_path):
    path = tmp_path / "baseline.json"
    bl.save_baseline(path, bl.Baseline())
    assert oct(path.stat().st_mode & 0o777) == oct(0o644 & ~_umask())
    path.chmod(0o664)
    bl.save_baseline(path, bl.parse_baseline(good_data()))
    assert path.stat().st_mode & 0o777 == 0o664
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.json"]


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('"pass_rate": 0.8', '"pass_rate": NaN',
         "$.tasks.task-001-a.pass_rate: expected a finite number, got NaN"),
        ('"avg_wall_seconds": 3.5', '"avg_wall_seconds": Infinity',
         "$.tasks.task-001-a.avg_wall_seconds: expected a finite number, got Infinity"),
        ('"avg_tokens": 100.0', '"avg_tokens": 1e999', "$.tasks.task-001-a.avg_tokens: "),
    ],
)
def test_non_finite_numbers_are_refused(tmp_path, old, new, field):
    path = tmp_path / "baseline.json"
    text = json.dumps(good_data())
    assert old in text
    path.write_text(text.replace(old, new))
    with pytest.raises(UserError) as info:
        bl.load_baseline(path)
    assert str(info.value).startswith(f"{path}: {field}")


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ('"passes": 4,', '"passes": 4, "passes": 5,', "passes"),
        ('"agent": "ref",', '"agent": "ref", "tasks": {},', "tasks"),
    ],
)
def test_duplicate_keys_are_refused(tmp_path, old, new, key):
    path = tmp_path / "baseline.json"
    text = json.dumps(good_data())
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(UserError) as info:
        bl.load_baseline(path)
    assert str(info.value) == (
        f'{path}: invalid JSON: duplicate key "{key}" (each key may appear once per object)'
    )


def test_cli_refuses_nan_baseline_in_one_line(repo):
    text = json.dumps(good_data()).replace('"pass_rate": 0.8', '"pass_rate": NaN')
    (repo / "baseline.json").write_text(text)
    assert_bad_input(cli("baseline", "show", cwd=repo), "baseline.json",
                     "$.tasks.task-001-a.pass_rate", "finite", "NaN")
    assert_bad_input(cli("baseline", "update", "--all", cwd=repo), "baseline.json", "NaN")
    assert (repo / "baseline.json").read_text() == text


def test_save_onto_a_folder_or_into_a_missing_one(tmp_path):
    with pytest.raises(UserError, match="--baseline: is a folder"):
        bl.save_baseline(tmp_path, bl.Baseline())
    with pytest.raises(UserError, match="missing: --baseline: folder does not exist"):
        bl.save_baseline(tmp_path / "missing" / "baseline.json", bl.Baseline())


def test_failed_save_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "baseline.json"
    path.write_text("old")

    def broken_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(UserError, match=r"--baseline: cannot write \(Input/output error\)"):
        bl.save_baseline(path, bl.parse_baseline(good_data()))
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.json"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_without_drops_entries():
    base = bl.parse_baseline(good_data())
    assert base.without(["task-001-a"]).entries == {}


# --- update decisions ---------------------------------------------------------------------------


def change(old, passes, runs, *, allow=False, recorded="2026-02-01", prompt_hash=HASH):
    return bl.updated_entry(old, task="task-001-a", passes=passes, runs=runs, recorded=recorded,
                            prompt_hash=prompt_hash, avg_tokens=None, avg_wall_seconds=None,
                            allow_below_threshold=allow)


def test_added_and_updated():
    added = change(None, 4, 5)
    assert added.action == "added" and added.new.pass_rate == F(4, 5)
    assert added.message == "added: 4/5 = 0.80"
    updated = change(added.new, 5, 5, recorded="2026-03-01")
    assert updated.action == "updated" and updated.message == "updated: 4/5 = 0.80 -> 5/5 = 1.00"
    assert [s.recorded for s in updated.new.history] == ["2026-02-01", "2026-03-01"]


def test_same_evidence_twice_is_unchanged():
    first = change(None, 4, 5).new
    again = change(first, 4, 5)
    assert again.action == "unchanged" and again.new == first


def test_below_threshold_new_task_is_recorded_aspirational():
    result = change(None, 2, 5)
    assert result.action == "added" and result.new.aspirational
    assert "aspirational, not gated" in result.message


def test_below_threshold_gated_task_is_refused():
    old = change(None, 4, 5).new
    result = change(old, 2, 5)
    assert result.action == "refused" and result.new is None
    assert "below 0.60" in result.message and "--allow-below-threshold" in result.message


def test_allow_below_threshold_records_a_gate():
    old = change(None, 4, 5).new
    result = change(old, 2, 5, allow=True)
    assert result.action == "updated" and not result.new.aspirational


def test_aspirational_task_clearing_the_threshold_becomes_gated():
    old = change(None, 1, 5).new
    result = change(old, 3, 5)
    assert not result.new.aspirational and "now gated" in result.message


def test_snapshots_are_capped():
    entry = None
    for day in range(1, 16):
        entry = change(entry, day % 2 + 3, 5, recorded=f"2026-01-{day:02d}").new
    assert len(entry.history) == bl.MAX_SNAPSHOTS
    assert entry.history[-1] == entry.snapshot and entry.history[0].recorded == "2026-01-06"


def test_changed_prompt_restarts_history():
    old = change(change(None, 4, 5).new, 5, 5, recorded="2026-03-01").new
    result = change(old, 5, 5, recorded="2026-04-01", prompt_hash="sha256:" + "1" * 64)
    assert len(result.new.history) == 1 and "history restarts" in result.message


# --- the CLI ------------------------------------------------------------------------------------


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "ci_eval", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=60)


def write_task(root: Path, name: str, prompt: str | None = None) -> str:
    task = root / "tasks" / name
    task.mkdir(parents=True, exist_ok=True)
    (task / "prompt.md").write_text(prompt or f"Do {name}.\n")
    (task / "checks.py").write_text("raise SystemExit(0)\n")
    (task / "metadata.json").write_text(
        json.dumps({"difficulty": 2, "area": "demo", "tags": [], "created": "2026-01-01"}))
    return "sha256:" + hashlib.sha256((task / "prompt.md").read_bytes()).hexdigest()


def write_results(results: Path, task: str, outcomes: str, *, agent="ref", prompt_hash=None):
    results.mkdir(parents=True, exist_ok=True)
    status = {"p": "pass", "f": "fail", "e": "error"}
    with open(results / f"{task}.jsonl", "w") as handle:
        for run, c in enumerate(outcomes, start=1):
            record = {"run": run, "task": task, "status": status[c], "passed": c == "p",
                      "agent": agent, "tokens": 1000, "wall_seconds": 10.0}
            if prompt_hash:
                record["prompt_hash"] = prompt_hash
            handle.write(json.dumps(record) + "\n")


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    for name, outcomes in [("task-001-a", "ppppf"), ("task-002-b", "pffff"),
                           ("task-003-c", "ppppp")]:
        digest = write_task(root, name)
        write_results(root / "results", name, outcomes, prompt_hash=digest)
    return root


def test_update_all_then_show(repo):
    result = cli("baseline", "update", "--all", "--date", "2026-02-03", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "task-001-a: added: 4/5 = 0.80" in result.stdout
    assert "task-002-b: added: 1/5 = 0.20 (below 0.60: aspirational, not gated)" in result.stdout
    assert "wrote " in result.stdout and "3 added" in result.stdout
    data = json.loads((repo / "baseline.json").read_text())
    assert data["agent"] == "ref" and data["schema_version"] == bl.SCHEMA_VERSION
    assert data["tasks"]["task-001-a"]["recorded"] == "2026-02-03"
    assert data["tasks"]["task-001-a"]["avg_tokens"] == 1000
    assert data["tasks"]["task-002-b"]["aspirational"] is True

    shown = cli("baseline", "show", cwd=repo)
    assert shown.returncode == 0 and "agent ref, 3 task(s)" in shown.stdout
    assert "0.80 (4/5)" in shown.stdout and "aspirational" in shown.stdout
    as_json = cli("baseline", "show", "--json", "--root", repo, cwd=repo.parent)
    assert json.loads(as_json.stdout) == data


def test_update_named_task_refuses_lowering_a_gate(repo):
    assert cli("baseline", "update", "task-001-a", "--date", "2026-02-03", cwd=repo).returncode == 0
    write_results(repo / "results", "task-001-a", "ppfff")
    before = (repo / "baseline.json").read_text()
    result = cli("baseline", "update", "001", "--date", "2026-02-04", cwd=repo)
    assert result.returncode == 0
    assert "task-001-a: refused: 2/5 = 0.40 is below 0.60" in result.stdout
    assert "observation recorded for calibration" in result.stdout
    assert "1 task(s) refused" in result.stderr
    kept = json.loads((repo / "baseline.json").read_text())["tasks"]["task-001-a"]
    gate = {k: v for k, v in kept.items() if k != "observations"}
    assert gate == {k: v for k, v in json.loads(before)["tasks"]["task-001-a"].items()
                    if k != "observations"}  # the gate value stays; the measurement is observed
    assert [(s["recorded"], s["passes"]) for s in kept["observations"]] == [
        ("2026-02-03", 4), ("2026-02-04", 2)]

    allowed = cli("baseline", "update", "task-001-a", "--allow-below-threshold", "--date",
                  "2026-02-05", cwd=repo)
    assert "updated: 4/5 = 0.80 -> 2/5 = 0.40" in allowed.stdout
    entry = json.loads((repo / "baseline.json").read_text())["tasks"]["task-001-a"]
    assert entry["aspirational"] is False
    assert [s["recorded"] for s in entry["observations"]] == ["2026-02-03", "2026-02-04",
                                                              "2026-02-05"]


def test_update_refuses_inconclusive_results(repo):
    write_results(repo / "results", "task-003-c", "pppe")
    write_results(repo / "results", "task-004-d", "ppppp")
    write_task(repo, "task-004-d")
    result = cli("baseline", "update", "task-003-c", "-k", "4", "--date", "2026-02-03", cwd=repo)
    assert "task-003-c: refused: inconclusive (3 valid run(s) of 4, 1 error(s))" in result.stdout
    assert not (repo / "baseline.json").exists()


def test_update_refuses_results_of_another_prompt(repo):
    write_task(repo, "task-003-c", prompt="New wording.\n")
    result = cli("baseline", "update", "task-003-c", cwd=repo)
    assert "refused: the results were run with another prompt.md" in result.stdout


def test_update_says_fewer_than_recommended_runs(repo):
    result = cli("baseline", "update", "--all", cwd=repo)
    assert "recorded from fewer than 40 runs" in result.stdout


def test_update_agent_mismatch(repo):
    assert cli("baseline", "update", "--all", cwd=repo).returncode == 0
    for name in ("task-001-a", "task-002-b", "task-003-c"):
        write_results(repo / "results", name, "ppppp", agent="other")
    assert_bad_input(cli("baseline", "update", "--all", cwd=repo),
                     "agent 'other'", "'ref'", "--allow-agent-mismatch")
    result = cli("baseline", "update", "--all", "--allow-agent-mismatch", cwd=repo)
    assert result.returncode == 0 and "changes from 'ref' to 'other'" in result.stdout
    assert json.loads((repo / "baseline.json").read_text())["agent"] == "other"


def test_an_update_of_another_agent_that_refuses_every_task_writes_nothing(repo):
    """Issue 37: the refused update still rewrote the baseline's agent, and the next compare of
    the real agent exited 2."""
    assert cli("baseline", "update", "--all", cwd=repo).returncode == 0
    before = (repo / "baseline.json").read_bytes()
    for name in ("task-001-a", "task-002-b", "task-003-c"):
        write_results(repo / "results", name, "eeeee", agent="other")  # inconclusive: refused
    result = cli("baseline", "update", "--all", "--allow-agent-mismatch", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("refused") >= 3 and "stays 'ref'" in result.stdout
    assert "unchanged" in result.stdout.splitlines()[-1]
    assert (repo / "baseline.json").read_bytes() == before
    for name in ("task-001-a", "task-002-b", "task-003-c"):
        write_results(repo / "results", name, "ppppp", agent="ref")
    assert cli("compare", cwd=repo).returncode == 0


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("task-009-nope",), ("unknown task 'task-009-nope'", "tasks")),
        ((), ("name the tasks to record, or pass --all",)),
        (("--all", "task-001-a"), ("--all",)),
        (("--all", "--results", "nowhere"), ("nowhere", "results folder not found")),
        (("--all", "--date", "2026-13-01"), ("--date", "YYYY-MM-DD")),
        (("--all", "-k", "0"), ("-k",)),
    ],
)
def test_update_bad_input(repo, args, needles):
    assert_bad_input(cli("baseline", "update", *args, cwd=repo), *needles)


def test_update_task_without_results_is_bad_input(repo):
    write_task(repo, "task-004-d")
    assert_bad_input(cli("baseline", "update", "task-004-d", cwd=repo),
                     "no results for task-004-d", "--results")
    result = cli("baseline", "update", "--all", cwd=repo)
    assert result.returncode == 0 and "task-004-d: skipped: no results" in result.stdout


def test_update_torn_results_line_is_bad_input(repo):
    with open(repo / "results" / "task-001-a.jsonl", "a") as handle:
        handle.write('{"run": 6, "task": "task-0')
    assert_bad_input(cli("baseline", "update", "--all", cwd=repo),
                     "task-001-a.jsonl:6", "torn last line")


def test_update_refuses_a_broken_existing_baseline(repo):
    (repo / "baseline.json").write_text("{")
    assert_bad_input(cli("baseline", "update", "--all", cwd=repo), "baseline.json", "invalid JSON")
    assert (repo / "baseline.json").read_text() == "{"


def test_show_bad_inputs(repo):
    assert_bad_input(cli("baseline", "show", cwd=repo), "baseline.json", "not found")
    (repo / "baseline.json").write_text(json.dumps({"schema_version": 7, "agent": None,
                                                     "tasks": {}}))
    assert_bad_input(cli("baseline", "show", cwd=repo), "$.schema_version", "newer")
    assert_bad_input(cli("baseline", cwd=repo), "baseline")
