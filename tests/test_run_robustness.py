"""`ci-eval run` under interruption and misuse, and the requested run count that run, report,
compare and baseline update agree on. The real CLI as a subprocess throughout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from harness_helpers import cli, live_pids_with, popen_interruptible, read_lines, write_task

# --- Ctrl-C / SIGTERM ---------------------------------------------------------------------------


def _slow_agent(tmp_path: Path, marker: str) -> Path:
    """Run 1 is quick, later runs sleep first; all pass. (The agent's sandbox has a private
    /tmp, so a flag file in tmp_path cannot switch it: the script itself is rewritten.)"""
    agent = tmp_path / "agent.sh"
    agent.write_text(f'if [ "$CI_EVAL_RUN" != 1 ]; then sleep 3.{marker}; fi\n'
                     "echo hello > greet.txt\n")
    return agent


def _wait_for_lines(path: Path, n: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().splitlines()) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never got {n} line(s)")


def _signal_and_wait(proc: subprocess.Popen, signum: int) -> tuple[str, str, float]:
    """Send signum; (stdout, stderr, seconds until the process exited)."""
    sent = time.monotonic()
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=15)
    return stdout, stderr, time.monotonic() - sent


def _reap(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_stops_the_run_promptly_keeps_finished_runs_and_resume_completes(
        tmp_path, signum, code):
    repo = tmp_path / "repo"
    write_task(repo)
    marker = f"{time.time_ns() % 10**6}{os.getpid()}"
    agent = _slow_agent(tmp_path, marker)
    results = repo / "results" / "task-001-greet.jsonl"
    proc = popen_interruptible(
        [sys.executable, "-m", "ci_eval", "run", "-k", "4", "-j", "1", "--agent-cmd",
         f"bash {agent}"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_lines(results, 1)  # run 1 recorded; run 2 is sleeping
        deadline = time.monotonic() + 10
        while not live_pids_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        stdout, stderr, elapsed = _signal_and_wait(proc, signum)
    finally:
        _reap(proc)
    assert proc.returncode == code, (stdout, stderr)
    assert elapsed < 2.5, elapsed
    assert "Traceback" not in stderr
    notice = stderr.strip().splitlines()[-1]
    assert notice.startswith("ci-eval: interrupted") and "--resume" in notice, notice
    assert "1 run(s) recorded" in notice, notice
    lines = read_lines(results)
    assert [(r["run"], r["status"]) for r in lines] == [(1, "pass")]  # run 2 was not written
    assert live_pids_with(marker) == []  # the in-flight agent's process group was killed
    assert not list(Path(tempfile.gettempdir()).glob(f"ci-eval-run-{proc.pid}-*"))

    agent.write_text("echo hello > greet.txt\n")  # same command: the same agent identity
    resumed = cli("run", "-k", "4", "-j", "4", "--resume", "--agent-cmd", f"bash {agent}",
                  cwd=repo)
    assert resumed.returncode == 0, resumed.stderr
    lines = read_lines(results)
    assert sorted(r["run"] for r in lines) == [1, 2, 3, 4]
    assert {r["status"] for r in lines} == {"pass"}


def test_sigint_during_the_first_runs_records_nothing_bogus(tmp_path):
    """Every run sleeps 3 s; SIGINT ~1.5 s in, while the first two (-j 2) are in flight."""
    repo = tmp_path / "repo"
    write_task(repo)
    marker = f"{time.time_ns() % 10**6}{os.getpid()}"
    agent = tmp_path / "agent.sh"
    agent.write_text(f"sleep 3.{marker}\necho hello > greet.txt\n")
    proc = popen_interruptible(
        [sys.executable, "-m", "ci_eval", "run", "-k", "4", "-j", "2", "--agent-cmd",
         f"bash {agent}"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started = time.monotonic()
        while len(live_pids_with(marker)) < 2 and time.monotonic() < started + 30:
            time.sleep(0.05)  # both agents running (under load start-up may take a while)
        time.sleep(max(0.0, started + 1.5 - time.monotonic()))
        _, stderr, elapsed = _signal_and_wait(proc, signal.SIGINT)
    finally:
        _reap(proc)
    assert proc.returncode == 130, stderr
    assert elapsed < 2.5, elapsed
    results = repo / "results" / "task-001-greet.jsonl"
    assert not results.exists() or read_lines(results) == []
    assert live_pids_with(marker) == []


@pytest.mark.parametrize("signum, code, said", [(signal.SIGINT, 130, "interrupted"),
                                               (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_a_signal_stops_verify_without_waiting_for_the_checks_in_flight(tmp_path, signum, code,
                                                                         said):
    """verify -j 2 judges two states at once, each checks run sleeping 60 s: ^C, or the SIGTERM
    a CI runner sends when the job is cancelled, kills them (it does not wait them out) and
    removes verify's temporary folders."""
    repo = tmp_path / "repo"
    temp = tmp_path / "tmp"
    temp.mkdir()
    marker = f"{time.time_ns() % 10**6}{os.getpid()}"
    write_task(repo, checks=f"import subprocess\nsubprocess.run(['sleep', '60.{marker}'])\n")
    proc = popen_interruptible([sys.executable, "-m", "ci_eval", "verify", "-j", "2"], cwd=repo,
                            env={**os.environ, "TMPDIR": str(temp)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started = time.monotonic()
        while len(live_pids_with(marker)) < 2 and time.monotonic() < started + 60:
            time.sleep(0.05)
        assert len(live_pids_with(marker)) == 2, proc.stderr.read() if proc.poll() else ""
        assert list(temp.iterdir())  # verify's folders exist while it runs
        _, stderr, elapsed = _signal_and_wait(proc, signum)
    finally:
        _reap(proc)
    assert proc.returncode == code and said in stderr, stderr
    assert "Traceback" not in stderr, stderr
    assert elapsed < 10, elapsed
    assert live_pids_with(marker) == []
    assert list(temp.iterdir()) == []


# --- a workspace that cannot be built ----------------------------------------------------------


def _flaky_setup_task(repo: Path, fails: int) -> None:
    """A task whose setup.sh fails its first `fails` attempts: it can write nothing outside its
    workspace to count them (issue #31, item 8), so it reads the attempt from the run folder's
    name (TASK-rRUN-aATTEMPT-...)."""
    setup = ('attempt=$(pwd | sed -n "s/.*-a\\([0-9]*\\)-[^/]*\\/workspace$/\\1/p")\n'
             f'if [ "${{attempt:-1}}" -le {fails} ]; then\n'
             '  echo "package mirror not reachable" >&2; exit 3\nfi\n')
    write_task(repo, files={"greet.txt": "bye\n", "setup.sh": setup})


SETUP_FAILED = "workspace setup failed: setup.sh exited 3: package mirror not reachable"


def test_a_workspace_setup_that_fails_once_is_retried_and_the_run_counts(tmp_path):
    repo = tmp_path / "repo"
    _flaky_setup_task(repo, fails=1)
    proc = cli("run", "-k", "1", "--agent", "reference", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (record,) = read_lines(repo / "results" / "task-001-greet.jsonl")
    assert (record["status"], record["attempt"]) == ("pass", 2), record
    assert record["retried_errors"] == [SETUP_FAILED]
    assert "1/1 valid runs passed" in proc.stdout, proc.stdout


def test_a_workspace_setup_that_keeps_failing_is_an_error_and_the_task_inconclusive(tmp_path):
    repo = tmp_path / "repo"
    _flaky_setup_task(repo, fails=99)
    proc = cli("run", "-k", "1", "--max-attempts", "2", "--agent", "reference", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # inconclusive: no valid run
    assert "Traceback" not in proc.stderr
    assert "inconclusive (fewer valid runs than asked): task-001-greet" in proc.stdout
    assert f"error in task-001-greet: {SETUP_FAILED}" in proc.stdout, proc.stdout
    (record,) = read_lines(repo / "results" / "task-001-greet.jsonl")
    assert (record["status"], record["attempt"]) == ("error", 2), record
    assert record["reason"] == SETUP_FAILED
    assert record["retried_errors"] == [SETUP_FAILED]
    assert record["agent_seconds"] is None  # no agent ran


# --- the requested run count, recorded with each run ---------------------------------------------


def _baseline(repo: Path, agent: str, rates: dict) -> None:
    from ci_eval.tasks.load import load_tasks

    hashes = {t.id: t.prompt_hash for t in load_tasks(repo)}
    tasks = {}
    for tid, (passes, runs) in rates.items():
        tasks[tid] = {"passes": passes, "runs": runs, "pass_rate": passes / runs,
                      "avg_tokens": None, "avg_wall_seconds": None, "recorded": "2026-11-01",
                      "aspirational": False, "prompt_hash": hashes[tid],
                      "snapshots": [{"recorded": "2026-11-01", "passes": passes, "runs": runs}]}
    (repo / "baseline.json").write_text(
        json.dumps({"schema_version": 1, "agent": agent, "tasks": tasks}))


def test_confirmed_tasks_do_not_make_an_all_pass_task_inconclusive(tmp_path):
    repo = tmp_path / "repo"
    names = ["task-001-greet", "task-002-greet", "task-003-steady"]
    for name in names:
        write_task(repo, name)
    agent = tmp_path / "agent.sh"  # tasks 1 and 2 fail runs 1 and 2 (3/5 breaches 1.0 - 0.30)
    agent.write_text('case "$CI_EVAL_TASK_ID-$CI_EVAL_RUN" in task-00[12]-greet-[12]) ;; '
                     '*) echo hello > greet.txt ;; esac\n')
    identity = f"cmd:bash {agent}"
    _baseline(repo, identity, {name: (5, 5) for name in names})
    proc = cli("run", "-k", "5", "-j", "4", "--agent-cmd", f"bash {agent}",
               "--confirm-against", "baseline.json", "--confirm-stages", "5,10", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    counts = {n: len(read_lines(repo / "results" / f"{n}.jsonl")) for n in names}
    assert counts == {"task-001-greet": 10, "task-002-greet": 10, "task-003-steady": 5}

    compare = cli("compare", "--format", "json", cwd=repo)
    assert compare.returncode == 0, compare.stdout + compare.stderr
    data = json.loads(compare.stdout)
    assert {t["task"]: t["status"] for t in data["tasks"]} == dict.fromkeys(names, "unchanged")
    assert data["k"] == 5
    assert {r["k"] for n in names for r in read_lines(repo / "results" / f"{n}.jsonl")} == {5}

    report = cli("report", "--json", cwd=repo)
    assert report.returncode == 0, report.stdout
    assert not any(t["inconclusive"] for t in json.loads(report.stdout)["tasks"])

    update = cli("baseline", "update", "--all", cwd=repo)
    assert update.returncode == 0, update.stderr
    assert "refused" not in update.stdout, update.stdout
    assert "task-003-steady: updated: 5/5 = 1.00 -> 5/5 = 1.00" in update.stdout  # a new date

    # -k stays an explicit override
    assert cli("compare", "-k", "10", cwd=repo).returncode == 1


def test_errored_confirmation_runs_leave_the_task_inconclusive(tmp_path):
    """Confirmation asked for 10 valid runs; when its runs error the task is short of them."""
    repo = tmp_path / "repo"
    write_task(repo)
    # runs 1-2 fail, 3-5 pass; run 5 removes the agent's own program, so the confirmation runs
    # error with "agent command not found" (unsandboxed, the agent can reach it)
    agent = tmp_path / "bin" / "agent"
    agent.parent.mkdir()
    agent.write_text('#!/bin/bash\ncase "$CI_EVAL_RUN" in [12]) ;; [34]) echo hello > greet.txt ;;'
                     f' *) echo hello > greet.txt; rm -f {agent} ;; esac\n')
    agent.chmod(0o755)
    _baseline(repo, f"cmd:{agent}", {"task-001-greet": (5, 5)})
    env = {**os.environ, "CI_EVAL_NO_ISOLATION": "1"}
    proc = cli("run", "-k", "5", "-j", "1", "--max-attempts", "1", "--agent-cmd", str(agent),
               "--confirm-against", "baseline.json", "--confirm-stages", "5,10", cwd=repo, env=env)
    lines = sorted(read_lines(repo / "results" / "task-001-greet.jsonl"), key=lambda r: r["run"])
    assert [r["status"] for r in lines][:5] == ["fail", "fail", "pass", "pass", "pass"]
    assert {r["status"] for r in lines[5:]} == {"error"}
    assert "agent command not found" in lines[5]["reason"]
    assert proc.returncode == 1, proc.stdout  # inconclusive
    compare = cli("compare", "--format", "json", cwd=repo)
    assert compare.returncode == 1
    (task_verdict,) = json.loads(compare.stdout)["tasks"]
    assert task_verdict["status"] == "inconclusive"


# --- --resume refuses to mix agents and prompts ---------------------------------------------------


def assert_one_line_error(proc, *needles):
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_resume_refuses_another_agent(tmp_path):
    write_task(tmp_path)
    assert cli("run", "--agent", "reference", "-k", "2", "--fresh", cwd=tmp_path).returncode == 0
    proc = cli("run", "-k", "4", "--resume", "--agent", "noop", cwd=tmp_path)
    assert_one_line_error(proc, "task-001-greet.jsonl", "agent", "'reference'", "'noop'")
    assert len(read_lines(tmp_path / "results" / "task-001-greet.jsonl")) == 2


def test_resume_refuses_another_prompt(tmp_path):
    task = write_task(tmp_path)
    assert cli("run", "--agent", "reference", "-k", "2", cwd=tmp_path).returncode == 0
    (task / "prompt.md").write_text("Make greet.txt say hello, please.\n")
    proc = cli("run", "--agent", "reference", "-k", "4", "--resume", cwd=tmp_path)
    assert_one_line_error(proc, "task-001-greet.jsonl", "prompt_hash")
    assert cli("run", "--agent", "reference", "-k", "4", "--resume", "--fresh", cwd=tmp_path).returncode == 2
    assert cli("run", "--agent", "reference", "-k", "1", "--fresh", cwd=tmp_path).returncode == 0


def test_resume_with_the_same_agent_and_prompt_continues(tmp_path):
    write_task(tmp_path)
    assert cli("run", "--agent", "reference", "-k", "2", cwd=tmp_path).returncode == 0
    proc = cli("run", "--agent", "reference", "-k", "3", "--resume", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = sorted(read_lines(tmp_path / "results" / "task-001-greet.jsonl"),
                   key=lambda r: r["run"])
    assert [(r["run"], r["k"], r["requested"]) for r in lines] == [(1, 2, 2), (2, 2, 2), (3, 3, 3)]
    assert "3/3 valid runs passed" in proc.stdout


# --- --confirm-stages ----------------------------------------------------------------------------


def test_confirm_stages_is_checked_even_without_confirm_against(tmp_path):
    write_task(tmp_path)
    assert_one_line_error(cli("run", "--agent", "reference", "--fresh", "-k", "1", "--confirm-stages", "5,3", cwd=tmp_path),
                          "--confirm-stages", "increase")
    assert_one_line_error(cli("run", "--agent", "reference", "--fresh", "-k", "1", "--confirm-stages", "5,10",
                              cwd=tmp_path), "--confirm-stages", "--confirm-against")
    assert not (tmp_path / "results").exists()


# --- baseline update messages --------------------------------------------------------------------


def test_baseline_update_without_a_baseline_file_does_not_say_unchanged(tmp_path):
    write_task(tmp_path)
    (tmp_path / "results").mkdir()
    errored = [{"run": n, "task": "task-001-greet", "status": "error", "passed": False,
                "agent": "reference", "k": 2, "requested": 2, "reason": "checks sandbox: x"}
               for n in (1, 2)]  # both runs errored: inconclusive
    (tmp_path / "results" / "task-001-greet.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in errored))
    proc = cli("baseline", "update", "--all", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "refused" in proc.stdout
    assert "unchanged" not in proc.stdout, proc.stdout
    assert "not written" in proc.stdout and "no baseline yet" in proc.stdout
    assert not (tmp_path / "baseline.json").exists()


def test_baseline_update_when_baseline_json_is_a_folder(tmp_path):
    write_task(tmp_path)
    assert cli("run", "--agent", "reference", "-k", "1", cwd=tmp_path).returncode == 0
    (tmp_path / "baseline.json").mkdir()
    proc = cli("baseline", "update", "--all", cwd=tmp_path)
    assert_one_line_error(proc, "baseline.json", "is a folder")
    assert "not found" not in proc.stderr and "baseline update" not in proc.stderr
