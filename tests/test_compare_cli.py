"""`ci-eval compare` driven as a subprocess: the rule's edges end to end, formats, bad input."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from harness_helpers import assert_bad_input


def cli(*args, cwd, env=None):
    import os

    full_env = {k: v for k, v in os.environ.items() if k != "GITHUB_SHA"}
    full_env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])  # this checkout, not an install
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "ci_eval", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=60, env=full_env)


def write_task(root: Path, name: str, *, prompt: str | None = None, **metadata) -> str:
    task = root / "tasks" / name
    task.mkdir(parents=True, exist_ok=True)
    (task / "prompt.md").write_text(prompt or f"Do {name}.\n")
    (task / "checks.py").write_text("raise SystemExit(0)\n")
    data = {"difficulty": 2, "area": "demo", "tags": [], "created": "2026-01-01", **metadata}
    (task / "metadata.json").write_text(json.dumps(data))
    return "sha256:" + hashlib.sha256((task / "prompt.md").read_bytes()).hexdigest()


def prompt_hash(root: Path, name: str) -> str:
    return "sha256:" + hashlib.sha256((root / "tasks" / name / "prompt.md").read_bytes()).hexdigest()


def write_results(root: Path, task: str, outcomes: str, *, agent="ref", hashed=True):
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    status = {"p": "pass", "f": "fail", "t": "timeout", "e": "error"}
    digest = prompt_hash(root, task) if hashed and (root / "tasks" / task).is_dir() else None
    with open(results / f"{task}.jsonl", "w") as handle:
        for run, c in enumerate(outcomes, start=1):
            record = {"run": run, "task": task, "status": status[c], "passed": c == "p",
                      "agent": agent, "tokens": 1200, "wall_seconds": 12.0, "cost_usd": None}
            if digest:
                record["prompt_hash"] = digest
            handle.write(json.dumps(record) + "\n")


def write_baseline(root: Path, entries: dict[str, tuple[int, int]], *, agent="ref",
                   aspirational=(), hashes=None, **extra):
    tasks = {}
    for task, (passes, runs) in entries.items():
        digest = (hashes or {}).get(task) or (
            prompt_hash(root, task) if (root / "tasks" / task).is_dir() else "sha256:" + "9" * 64)
        tasks[task] = {"passes": passes, "runs": runs, "pass_rate": passes / runs,
                       "avg_tokens": 1000.0, "avg_wall_seconds": 10.0, "recorded": "2026-01-01",
                       "prompt_hash": digest, "aspirational": task in aspirational}
    data = {"schema_version": 1, "agent": agent, "tasks": tasks, **extra}
    (root / "baseline.json").write_text(json.dumps(data))


@pytest.fixture
def root(tmp_path):
    return tmp_path / "repo"


def single(root, base, outcomes, **kw):
    write_task(root, "task-001-a")
    write_baseline(root, {"task-001-a": base}, **kw)
    write_results(root, "task-001-a", outcomes)
    result = cli("compare", "--format", "json", cwd=root)
    return result, json.loads(result.stdout) if result.stdout else None


def test_json_interval_of_ten_out_of_ten_is_exactly_one(root):
    result, data = single(root, (10, 10), "p" * 10)
    assert result.returncode == 0, result.stderr
    assert data["tasks"][0]["current"]["interval_95"][1] == 1.0
    assert '0.9999999999999999' not in result.stdout


# --- the rule at its edges ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "outcomes", "status", "code"),
    [
        ((4, 5), "ppfff", "regressed", 1),  # 0.80 -> 0.40
        ((4, 5), "pppff", "unchanged", 0),  # 0.80 -> 0.60
        ((8, 10), "pppppfffff", "unchanged", 0),  # 8/10 -> 5/10: exactly 0.30
        ((8, 10), "ppppffffff", "regressed", 1),  # 8/10 -> 4/10
        ((9, 10), "pppfftpppp", "unchanged", 0),  # 0.90 -> 0.60 (a timeout is a fail)
        ((3, 5), "ppppp", "improved", 0),
    ],
)
def test_rule_edges(root, base, outcomes, status, code):
    result, data = single(root, base, outcomes)
    assert result.returncode == code, result.stderr
    (task,) = data["tasks"]
    assert task["status"] == status
    assert data["passed"] is (code == 0) and data["exit_code"] == code


def test_aspirational_never_gates(root):
    write_task(root, "task-001-a", aspirational=True)
    write_task(root, "task-002-b")
    write_baseline(root, {"task-001-a": (5, 5), "task-002-b": (2, 5)}, aspirational={"task-002-b"})
    write_results(root, "task-001-a", "fffff")
    write_results(root, "task-002-b", "eeeee")
    result = cli("compare", cwd=root)
    assert result.returncode == 0, result.stdout
    assert "2 aspirational" in result.stdout.splitlines()[0]


def test_new_missing_and_renamed_are_visible(root):
    write_task(root, "task-001-a")
    write_task(root, "task-002-new-name")
    write_baseline(root, {"task-001-a": (5, 5), "task-002-old-name": (5, 5),
                          "task-003-gone": (4, 5)})
    write_results(root, "task-001-a", "ppppp")
    write_results(root, "task-002-new-name", "ppppp")
    result = cli("compare", cwd=root)
    assert result.returncode == 0
    first = result.stdout.splitlines()[0]
    assert first.startswith("PASS") and "1 new" in first and "2 missing" in first
    words = " ".join(result.stdout.split())  # notes are wrapped to a 100-column terminal
    assert "renamed from task-002-old-name" in words
    assert "renamed to task-002-new-name" in words
    assert "task-003-gone" in result.stdout
    table = result.stdout.split("\n\n")[1]
    assert max(len(line) for line in table.splitlines()) <= 100  # a 100-column terminal
    # a baseline without per-run distributions: said once, not "unknown" on every row (issue 37)
    assert "Cost, tokens and wall were not judged for any task" in words
    assert "unknown" not in table
    markdown = cli("compare", "--format", "markdown", cwd=root).stdout
    assert "not judged" in markdown and "| unknown |" not in markdown


def test_changed_prompt_fails(root):
    write_task(root, "task-001-a")
    write_baseline(root, {"task-001-a": (5, 5)})
    write_task(root, "task-001-a", prompt="Reworded.\n")
    write_results(root, "task-001-a", "ppppp")
    result = cli("compare", "--format", "json", cwd=root)
    assert result.returncode == 1
    assert json.loads(result.stdout)["tasks"][0]["status"] == "prompt-changed"


def test_inconclusive_fails(root):
    write_task(root, "task-001-a")
    write_task(root, "task-002-b")
    write_baseline(root, {"task-001-a": (5, 5), "task-002-b": (5, 5)})
    write_results(root, "task-001-a", "ppppp")
    write_results(root, "task-002-b", "pppep")
    result = cli("compare", cwd=root)
    assert result.returncode == 1
    assert "1 inconclusive" in result.stdout.splitlines()[0]


def test_confirmation_runs_count_in_the_rule(root):
    # 2/5 after k runs would regress; confirmation brought it to 12/20 = 0.60: unchanged
    write_task(root, "task-001-a")
    write_task(root, "task-002-b")
    write_baseline(root, {"task-001-a": (4, 5), "task-002-b": (5, 5)})
    write_results(root, "task-001-a", "ppfff" + "ppppp" + "ppppp" + "fffff")
    write_results(root, "task-002-b", "ppppp")
    result = cli("compare", "--format", "json", cwd=root)
    assert result.returncode == 0, result.stdout
    data = json.loads(result.stdout)
    assert data["k"] == 5
    current = data["tasks"][0]["current"]
    assert (current["passes"], current["runs"], current["requested"]) == (12, 20, 20)
    assert data["tasks"][0]["status"] == "unchanged"


def test_each_task_is_judged_on_its_own_recorded_k(root):
    # confirmation took 3 of 4 tasks to 10 runs: the 5/5 task is still conclusive
    names = ["task-001-a", "task-002-b", "task-003-c", "task-004-d"]
    for name in names:
        write_task(root, name)
    write_baseline(root, dict.fromkeys(names, (5, 5)))
    for name in names:
        write_results(root, name, "ppppp" if name == "task-004-d" else "ppfff" + "ppppp")
        path = root / "results" / f"{name}.jsonl"
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for rec in lines:
            rec.update(k=5, requested=5 if rec["run"] <= 5 else 10)
        path.write_text("".join(json.dumps(rec) + "\n" for rec in lines))
    result = cli("compare", "--format", "json", cwd=root)
    data = json.loads(result.stdout)
    assert result.returncode == 0, result.stdout
    assert {t["task"]: t["status"] for t in data["tasks"]} == dict.fromkeys(names, "unchanged")
    assert data["k"] == 5
    assert [t["current"]["requested"] for t in data["tasks"]] == [10, 10, 10, 5]
    assert cli("compare", "-k", "10", cwd=root).returncode == 1  # an explicit -k still overrides


# --- agents -------------------------------------------------------------------------------------


def test_agent_mismatch_is_an_error_unless_allowed(root):
    write_task(root, "task-001-a")
    write_baseline(root, {"task-001-a": (5, 5)}, agent="ref")
    write_results(root, "task-001-a", "ppppp", agent="claude")
    assert_bad_input(cli("compare", cwd=root), "results", "agent 'claude'", "'ref'",
                     "--allow-agent-mismatch")
    allowed = cli("compare", "--allow-agent-mismatch", "--format", "markdown", cwd=root)
    assert allowed.returncode == 0
    assert "Agent mismatch (allowed)" in allowed.stdout


# --- formats ------------------------------------------------------------------------------------


def test_formats_and_output_file(root):
    write_task(root, "task-001-a")
    write_task(root, "task-002-b")
    write_baseline(root, {"task-001-a": (5, 5), "task-002-b": (5, 5)})
    write_results(root, "task-001-a", "ppppp")
    write_results(root, "task-002-b", "fffff")

    md = cli("compare", "--format", "markdown", cwd=root, env={"GITHUB_SHA": "abc123def4567890"})
    assert md.returncode == 1
    assert md.stdout.startswith("<!-- ci-eval-report -->\n### ❌ ")
    assert "commit abc123def456" in md.stdout and "k=5" in md.stdout

    junit = cli("compare", "--format", "junit", "--output", "gate.xml", cwd=root)
    assert junit.returncode == 1 and junit.stdout == ""
    assert junit.stderr.startswith("FAIL ci-eval: 1 of 2 task(s) fail the gate")
    suite = ET.parse(root / "gate.xml").getroot().find("testsuite")
    assert suite.get("failures") == "1" and suite.get("tests") == "2"

    table = cli("compare", "--commit", "feedbeef", cwd=root)
    assert "commit feedbeef" in table.stdout and "task-002-b" in table.stdout


def test_explicit_k_makes_short_tasks_inconclusive(root):
    result, _ = single(root, (5, 5), "ppppp")
    assert result.returncode == 0
    again = cli("compare", "-k", "10", cwd=root)
    assert again.returncode == 1 and "inconclusive" in again.stdout


# --- bad input ----------------------------------------------------------------------------------


@pytest.fixture
def ready(root):
    write_task(root, "task-001-a")
    write_baseline(root, {"task-001-a": (5, 5)})
    write_results(root, "task-001-a", "ppppp")
    return root


def test_broken_baseline_json(ready):
    (ready / "baseline.json").write_text('{"schema_version": 1, "agent": "ref", "tasks": {')
    assert_bad_input(cli("compare", cwd=ready), "baseline.json", "invalid JSON", "line 1")


def test_baseline_wrong_type_names_json_path(ready):
    data = json.loads((ready / "baseline.json").read_text())
    data["tasks"]["task-001-a"]["runs"] = "five"
    (ready / "baseline.json").write_text(json.dumps(data))
    assert_bad_input(cli("compare", cwd=ready), "baseline.json", "$.tasks.task-001-a.runs",
                     "expected integer 1-1000000")


def test_baseline_from_a_newer_schema_version(ready):
    data = json.loads((ready / "baseline.json").read_text())
    data["schema_version"] = 99
    (ready / "baseline.json").write_text(json.dumps(data))
    assert_bad_input(cli("compare", cwd=ready), "baseline.json", "$.schema_version", "newer")


def test_missing_baseline_makes_every_task_new(ready):
    """A repo's first PR has results but no baseline yet: a report, exit 0, and how to record
    one (issue 11)."""
    (ready / "baseline.json").unlink()
    for args in ([], ["--baseline", "baseline.json"], ["--baseline", "./baseline.json"]):
        compare = cli("compare", "--json", *args, cwd=ready)
        assert compare.returncode == 0, compare.stderr
        data = json.loads(compare.stdout)
        assert {t["status"] for t in data["tasks"]} == {"new"}
        assert any("No baseline yet" in note for note in data["notes"])


def test_a_named_baseline_that_is_missing_is_bad_input(ready):
    """A typo in --baseline (the action's `baseline:` input) would be green forever: only the
    default path may be absent (issue 37)."""
    for command in (("compare",), ("gate", "--results", "results"), ("plan", "--shards", "2")):
        assert_bad_input(cli(*command, "--baseline", "nope.json", cwd=ready), "nope.json",
                         "--baseline", "baseline file not found")


def test_torn_results_line(ready):
    with open(ready / "results" / "task-001-a.jsonl", "a") as handle:
        handle.write('{"run": 6, "task": "task-0')
    assert_bad_input(cli("compare", cwd=ready), "task-001-a.jsonl:6", "torn last line")


def test_foreign_results_line(ready):
    with open(ready / "results" / "task-001-a.jsonl", "a") as handle:
        handle.write(json.dumps({"run": 6, "task": "task-002-b", "status": "pass",
                                 "passed": True, "agent": "ref"}) + "\n")
    assert_bad_input(cli("compare", cwd=ready), "task-001-a.jsonl:6", "task",
                     "record of task 'task-002-b'")


def test_results_record_missing_a_field(ready):
    (ready / "results" / "task-001-a.jsonl").write_text('{"run": 1, "task": "task-001-a"}\n')
    assert_bad_input(cli("compare", cwd=ready), "task-001-a.jsonl:1", "status")


def test_results_dir_missing_or_empty(ready):
    assert_bad_input(cli("compare", "--results", "nowhere", cwd=ready), "nowhere",
                     "results folder not found")
    (ready / "empty").mkdir()
    assert_bad_input(cli("compare", "--results", "empty", cwd=ready), "empty", "no *.jsonl")


def test_bad_format_and_k(ready):
    assert_bad_input(cli("compare", "--format", "html", cwd=ready), "--format")
    assert_bad_input(cli("compare", "-k", "0", cwd=ready), "-k")
