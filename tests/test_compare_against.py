"""`ci-eval compare --against DIR`: two agents' results on the same tasks, judged by the gate's
own rules (the other agent's runs in the baseline's place), side by side; driven as a
subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_helpers import assert_bad_input
from test_compare_cli import cli, prompt_hash, write_task


def write_runs(root: Path, folder: str, task: str, outcomes: str, *, agent: str,
               cost: float | None = 0.01, wall: float = 10.0, tokens: int = 1000,
               prompt: str | None = None):
    results = root / folder
    results.mkdir(parents=True, exist_ok=True)
    status = {"p": "pass", "f": "fail", "e": "error"}
    with open(results / f"{task}.jsonl", "w") as handle:
        for run, c in enumerate(outcomes, start=1):
            # a little spread per run, as real runs have (the rank test needs no ties)
            spread = 1 + run / 1000
            handle.write(json.dumps({
                "run": run, "task": task, "status": status[c], "passed": c == "p",
                "agent": agent, "tokens": round(tokens * spread), "wall_seconds": wall * spread,
                "cost_usd": None if cost is None else cost * spread,
                "prompt_hash": prompt or prompt_hash(root, task)}) + "\n")


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "repo"
    write_task(root, "task-001-a")
    write_task(root, "task-002-b")
    return root


def compare(root, *args):
    return cli("compare", "--results", "results-codex", "--against", "results-claude", *args,
               cwd=root)


def as_json(done) -> dict:
    assert done.returncode in (0, 1) and done.stdout, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(("theirs", "ours", "status", "code"), [
    ("ppppppppff", "pppppfffff", "unchanged", 0),  # 0.80 -> 0.50: exactly 0.30 is no regression
    ("ppppppppff", "ppppffffff", "regressed", 1),  # 0.80 -> 0.40
    ("ppppppffff", "pppppppppp", "improved", 0),   # 0.60 -> 1.00
    ("ppffffffff", "ffffffffff", "aspirational", 0),  # theirs below 0.60: shown, not gated
])
def test_the_gates_rule_between_two_agents(root, theirs, ours, status, code):
    for task in ("task-001-a", "task-002-b"):
        write_runs(root, "results-claude", task, theirs if task == "task-001-a" else "ppppp",
                   agent="claude")
        write_runs(root, "results-codex", task, ours if task == "task-001-a" else "ppppp",
                   agent="codex")
    done = compare(root, "--json")
    data = as_json(done)
    assert done.returncode == code == data["exit_code"]
    [first, second] = data["tasks"]
    assert (first["status"], second["status"]) == (status, "unchanged")
    assert first["baseline"]["passes"] == theirs.count("p")
    assert first["current"]["passes"] == ours.count("p")
    assert (data["agent"], data["baseline_agent"]) == ("codex", "claude")


def test_side_by_side_table_names_both_agents_and_judges_cost(root):
    for task in ("task-001-a", "task-002-b"):
        write_runs(root, "results-claude", task, "pppppppppp", agent="claude", cost=0.01,
                   wall=20.0)
        write_runs(root, "results-codex", task, "pppppppppp", agent="codex", cost=0.05,
                   wall=20.0)
    done = compare(root)
    assert done.returncode == 0, done.stderr  # cost is reported, not failing, by default
    out = done.stdout
    header = next(line for line in out.splitlines() if line.startswith("Task"))
    assert header.index("claude") < header.index("codex")
    assert "codex against claude" in out
    assert "claude: 20/20 valid runs passed, $0.2011 in all" in out
    assert "codex: 20/20 valid runs passed, $1.0055 in all" in out
    assert "$0.0101 → $0.0503 (×5.00 regressed)" in out
    assert "20.1s → 20.1s" in out and "Evidence:" in out and "Mann-Whitney" in out

    data = as_json(compare(root, "--format", "json"))
    cost = data["against"]["tasks"]["task-001-a"]["cost"]
    assert cost == {"against": pytest.approx(0.010055), "results": pytest.approx(0.050275)}
    assert data["tasks"][0]["axes"]["cost"]["status"] == "regressed"
    assert data["against"]["total_cost_usd"] == pytest.approx(0.2011)

    (root / "ci-eval.yaml").write_text("gate:\n  cost: {max_increase: 0.5, fail: true}\n")
    assert compare(root).returncode == 1  # the gate's cost rule, from ci-eval.yaml


def test_markdown_quotes_the_agent_names(root):
    write_runs(root, "results-claude", "task-001-a", "ppppp", agent="cl|aude")
    write_runs(root, "results-codex", "task-001-a", "ppppp", agent="co`dex")
    done = compare(root, "--format", "markdown", "task-001-a")
    assert done.returncode == 0, done.stderr
    assert "``co`dex`` against `cl|aude`" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith("| `task-001-a`")]
    assert len(rows) == 1 and rows[0].count(" | ") == 8
    [header] = [line for line in done.stdout.splitlines() if line.startswith("| Task")]
    assert "`cl\\|aude`" in header and header.count(" | ") == 8  # the pipe cannot split a cell


def test_tasks_on_one_side_only(root):
    write_runs(root, "results-claude", "task-001-a", "ppppp", agent="claude")
    write_runs(root, "results-claude", "task-002-b", "ppppp", agent="claude")
    write_runs(root, "results-codex", "task-001-a", "ppppp", agent="codex")
    data = as_json(compare(root, "--json"))
    statuses = {t["task"]: t["status"] for t in data["tasks"]}
    # codex never ran task-002-b: not a pass, inconclusive (the gate's "no results")
    assert statuses == {"task-001-a": "unchanged", "task-002-b": "inconclusive"}
    assert data["exit_code"] == 1


def test_a_task_the_other_agent_never_ran_validly_is_new_with_a_note(root):
    write_runs(root, "results-claude", "task-001-a", "eeeee", agent="claude")
    write_runs(root, "results-codex", "task-001-a", "ppppp", agent="codex")
    data = as_json(compare(root, "--json", "task-001-a"))
    assert [t["status"] for t in data["tasks"]] == ["new"]
    assert any("task-001-a: no valid run of claude (5 errored)" in n for n in data["notes"])


def test_runs_of_another_prompt_are_not_the_same_task(root):
    write_runs(root, "results-claude", "task-001-a", "ppppp", agent="claude",
               prompt="sha256:" + "1" * 64)
    write_runs(root, "results-codex", "task-001-a", "ppppp", agent="codex")
    done = compare(root, "--json", "task-001-a")
    assert [t["status"] for t in as_json(done)["tasks"]] == ["prompt-changed"]
    assert done.returncode == 1


def test_bad_input(root):
    write_runs(root, "results-codex", "task-001-a", "ppppp", agent="codex")
    assert_bad_input(compare(root), "results-claude", "results folder not found")
    (root / "results-claude").mkdir()
    assert_bad_input(compare(root), "results-claude", "--against", "no *.jsonl results")
    write_runs(root, "results-claude", "task-001-a", "ppppp", agent="claude")
    assert_bad_input(compare(root, "--baseline", "baseline.json"), "--baseline",
                     "give one of them")
    assert_bad_input(compare(root, "--format", "junit"), "--format", "table, markdown, json")
    (root / "results-claude" / "task-001-a.jsonl").write_text("{not json\n")
    assert_bad_input(compare(root), "task-001-a.jsonl")
