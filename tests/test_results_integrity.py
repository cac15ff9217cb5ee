"""One invocation owns a results folder; what is read back is checked; readers never write."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from harness_helpers import assert_bad_input, cli, read_lines, write_task


def _record(run: int, status: str = "pass", agent: str = "noop", **extra) -> dict:
    return {"run": run, "task": "task-001-greet", "status": status, "passed": status == "pass",
            "agent": agent, "k": 2, "requested": 2, **extra}


def _write_results(repo: Path, records: list[dict], name: str = "results") -> Path:
    path = repo / name / "task-001-greet.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_second_run_on_a_held_results_folder_exits_2_naming_the_holder(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    agent = tmp_path / "slow.sh"
    agent.write_text("sleep 30\n")
    first = subprocess.Popen([sys.executable, "-m", "ci_eval", "run", "-k", "1", "--agent-cmd",
                              f"bash {agent}"], cwd=repo, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        lock = repo / "results" / ".ci-eval.lock"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (lock.exists() and lock.read_text().strip()):
            time.sleep(0.05)
        started = time.monotonic()
        second = cli("run", "-k", "1", "--resume", "--agent-cmd", f"bash {agent}", cwd=repo)
        assert time.monotonic() - started < 10  # at once, not after the first run finished
        assert_bad_input(second, "in use by another ci-eval run", f"pid {first.pid}", "--out")
    finally:
        first.kill()
        first.wait()
    # the kernel released the lock with the holder: the folder is usable again
    again = cli("run", "-k", "1", "--fresh", "--agent", "noop", cwd=repo)
    assert again.returncode == 0, again.stderr


def test_a_refused_resume_leaves_the_results_file_as_it_was(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    path = _write_results(repo, [_record(1, agent="reference")])
    text = path.read_text() + '{"run": 2, "ta'  # a torn tail that a real resume would drop
    path.write_text(text)
    refused = cli("run", "-k", "2", "--resume", "--agent", "noop", cwd=repo)
    assert_bad_input(refused, "recorded with agent 'reference'")
    assert path.read_text() == text


def test_duplicate_and_out_of_range_lines_are_bad_input_naming_file_and_line(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    _write_results(repo, [_record(1), _record(2), _record(1)])
    assert_bad_input(cli("report", cwd=repo), "task-001-greet.jsonl:3", "run 1 recorded twice")
    _write_results(repo, [_record(1), _record(2), _record(999)])
    assert_bad_input(cli("report", cwd=repo), "task-001-greet.jsonl:3", "run 999 is beyond")
    assert_bad_input(cli("run", "-k", "2", "--resume", "--agent", "noop", cwd=repo),
                     "task-001-greet.jsonl:3", "run 999 is beyond")


def test_results_of_two_agents_in_one_folder_are_bad_input(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    write_task(repo, "task-002-other")
    _write_results(repo, [_record(1), _record(2)])
    other = repo / "results" / "task-002-other.jsonl"
    other.write_text(json.dumps({**_record(1, agent="reference"), "task": "task-002-other"}) + "\n")
    assert_bad_input(cli("report", cwd=repo), "task-002-other.jsonl:1", "mix agents")


def test_results_of_a_removed_task_are_refused_by_run_and_removed_by_fresh(tmp_path):
    """Issue #21 item 13: a leftover results file of a task tasks/ no longer holds (here of
    another agent) was accepted by run, then report and compare refused the folder."""
    repo = tmp_path / "repo"
    write_task(repo)
    (repo / "results").mkdir(parents=True)
    gone = repo / "results" / "task-007-removed.jsonl"
    gone.write_text(json.dumps({**_record(1, agent="reference"), "task": "task-007-removed"})
                    + "\n")
    assert_bad_input(cli("run", "-k", "1", "--agent", "noop", cwd=repo),
                     "task-007-removed.jsonl", "which tasks/ no longer holds", "--fresh")
    assert gone.exists()  # refused: nothing changed, nothing run
    assert not (repo / "results" / "task-001-greet.jsonl").exists()
    fresh = cli("run", "-k", "1", "--fresh", "--agent", "noop", cwd=repo)
    assert fresh.returncode == 0, fresh.stderr
    assert not gone.exists()
    assert f"removed {gone}: its task is no longer in tasks/" in fresh.stderr
    report = cli("report", cwd=repo)
    assert report.returncode == 0 and "task-001-greet" in report.stdout  # read, not refused


def test_run_refuses_a_folder_holding_another_agent_s_runs_of_other_tasks(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    write_task(repo, "task-002-other")
    first = cli("run", "-k", "1", "--agent", "reference", "task-002", cwd=repo)
    assert first.returncode == 0, first.stderr
    assert_bad_input(cli("run", "-k", "1", "--agent", "noop", "task-001", cwd=repo),
                     "task-002-other.jsonl", "holds runs of agent 'reference'", "another --out")
    assert not (repo / "results" / "task-001-greet.jsonl").exists()
    same_agent = cli("run", "-k", "1", "--agent", "reference", "task-001", cwd=repo)
    assert same_agent.returncode == 0, same_agent.stderr  # one agent's runs of more tasks: fine


def test_out_folders_that_would_pool_or_clobber_are_refused(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    first = cli("run", "-k", "1", "--agent", "reference", "--out", "x", cwd=repo)
    assert first.returncode == 0, first.stderr
    # results/ does not exist: the kernel reads results/../x as x, and so must the checks
    pooled = cli("run", "-k", "1", "--agent", "noop", "--out", "results/../x", cwd=repo)
    assert_bad_input(pooled, "results already recorded")
    assert [r["agent"] for r in read_lines(repo / "x" / "task-001-greet.jsonl")] == ["reference"]
    assert_bad_input(cli("run", "-k", "1", "--agent", "noop", "--out", "", cwd=repo),
                     "--out", "empty")
    assert_bad_input(cli("run", "-k", "1", "--agent", "noop", "--out", ".", cwd=repo),
                     "--out", "repo root")
    assert_bad_input(cli("run", "-k", "1", "--agent", "noop", "--out", "tasks/r", cwd=repo),
                     "--out", "inside tasks/")
