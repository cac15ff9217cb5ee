"""Checks prepared while the agent runs (scoring.ChecksRun with a held workspace, attempt's
prepare_checks), for real: they wait for the go and judge what the workspace holds then, they
end with nothing run when aborted, the held folder cannot be swapped under them, and an agent
swapping its workspace while they are built never passes by it."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest
from harness_helpers import cli, read_lines, task_with_workspace, write_task

from ci_eval.run.checks.scoring import CheckKind, ChecksRun
from ci_eval.run.sandbox import isolation, launcher, sandbox_program

SANDBOXED = isolation.detect().checks_sandboxed and isolation.detect().agent_sandboxed
pytestmark = pytest.mark.skipif(not SANDBOXED, reason="no sandboxes on this machine")

GREET = ("import sys\n"
         "open('judged.txt', 'w').write(open('greet.txt').read())\n"
         "sys.exit(0 if open('greet.txt').read() == 'hello\\n' else 1)\n")


def _prepared(tmp_path: Path, held_folder: Path | None = None):
    """Checks of GREET prepared over a fresh workspace, holding that folder (or held_folder)."""
    task, workspace, runs = task_with_workspace(tmp_path, GREET)
    held = os.open(held_folder or workspace, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        return ChecksRun(task, workspace, isolation.detect(), checks_dir=runs / "run.checks",
                         runs_base=runs, held=held).start(), workspace
    finally:
        os.close(held)


def _children_of_the_checks_launcher() -> list[int]:
    pid = launcher.CHECKS.pid
    if pid is None:
        return []
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def test_prepared_checks_wait_for_the_go_and_judge_what_is_there_then(tmp_path):
    prepared, workspace = _prepared(tmp_path)
    time.sleep(0.5)  # built and waiting: nothing judged yet
    assert not (workspace / "judged.txt").exists()
    (workspace / "greet.txt").write_text("hello\n")  # what the agent does meanwhile
    outcome = prepared.outcome()
    assert outcome.kind is CheckKind.PASS, outcome
    assert (workspace / "judged.txt").read_text() == "hello\n"
    assert outcome.seconds < 5  # timed from the go, not from the build
    prepared.abort()  # after the outcome: nothing left to end


def test_aborted_checks_end_with_nothing_run(tmp_path):
    prepared, workspace = _prepared(tmp_path)
    time.sleep(0.3)
    assert _children_of_the_checks_launcher()  # the sandbox is there, waiting
    prepared.abort()
    prepared.abort()  # twice is fine
    deadline = time.monotonic() + 5
    while _children_of_the_checks_launcher() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _children_of_the_checks_launcher() == []
    assert not (workspace / "judged.txt").exists()


def test_a_held_folder_swapped_for_another_or_for_a_link_is_refused(tmp_path):
    """What the sandbox checks while it builds its view (sandbox_program._open_path): the path must still
    be the folder the harness held; the view is never built over another one."""
    real, other = tmp_path / "workspace", tmp_path / "other"
    real.mkdir()
    other.mkdir()
    held = os.open(real, os.O_PATH | os.O_DIRECTORY)
    same = sandbox_program._open_path(str(real), os.dup(held))
    os.close(same)
    real.rename(tmp_path / "moved")
    other.rename(real)  # another folder at the path
    with pytest.raises(OSError) as swapped:
        sandbox_program._open_path(str(real), os.dup(held))
    assert swapped.value.errno == errno.ESTALE
    real.rename(other)
    real.symlink_to(tmp_path / "moved")  # a link to the right folder: refused all the same
    with pytest.raises(OSError) as linked:
        sandbox_program._open_path(str(real), os.dup(held))
    assert linked.value.errno in (errno.ELOOP, errno.ENOTDIR)
    os.close(held)


def test_prepared_checks_over_a_folder_that_is_not_the_held_one_fail_as_infrastructure(tmp_path):
    """The refusal as the runner sees it: a sandbox failure (retryable), nothing judged; the
    runner then builds the checks again after the agent (the test below)."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    prepared, workspace = _prepared(tmp_path, held_folder=other)
    outcome = prepared.outcome()
    assert outcome.kind is CheckKind.INFRA and outcome.retryable, outcome
    assert "was replaced while the sandbox was built" in outcome.reason, outcome.reason
    assert not (workspace / "judged.txt").exists()


def test_an_agent_swapping_its_workspace_while_the_checks_are_built_never_passes(tmp_path):
    """The agent moves a passing copy into its workspace's place at once, puts its own folder
    back a moment later and leaves it failing: every run is an ordinary fail (judged on the
    real folder, the prepared sandbox refused and built again if it saw the swap). A race:
    without the rule above, about one in three runs of this test had a forged pass."""
    root = tmp_path / "repo"
    write_task(root, checks=GREET)
    agent = tmp_path / "agent.sh"
    agent.write_text('cd .. && mkdir fake && echo hello > fake/greet.txt &&\n'
                     'mv workspace real && mv fake workspace && sleep 0.05 &&\n'
                     'mv workspace fake && mv real workspace && echo swapped > workspace/swap.txt\n')
    ran = cli("run", "-k", "20", "-j", "4", "--agent-cmd", f"bash {agent}", cwd=root,
              timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    records = read_lines(root / "results" / "task-001-greet.jsonl")
    assert all("+swapped" in r["diff"] for r in records), records[0]["diff"]  # it did swap
    assert [r["status"] for r in records] == ["fail"] * 20, [r["reason"] for r in records]


def test_a_slow_agent_is_judged_after_it_ended(tmp_path):
    root = tmp_path / "repo"
    write_task(root, checks=GREET)
    ran = cli("run", "-k", "2", "--agent-cmd", "sleep 0.5; echo hello > greet.txt", cwd=root,
              timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert [r["status"] for r in read_lines(root / "results" / "task-001-greet.jsonl")] == \
        ["pass", "pass"]


def _descendants(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        for task in Path(f"/proc/{stack.pop()}/task").iterdir():
            try:
                children = [int(p) for p in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            stack += children
    return found


def test_the_checks_interpreter_starts_while_the_agent_runs_and_waits_for_the_go(tmp_path):
    prepared, workspace = _prepared(tmp_path)
    deadline = time.monotonic() + 30
    waiting = []
    while not waiting and time.monotonic() < deadline:
        time.sleep(0.1)
        for pid in _descendants(launcher.CHECKS.pid):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(b"import checks_program" in arg for arg in argv):
                waiting.append(argv)
    assert waiting, "no checks interpreter started before the go"
    fds = waiting[0][[b"import checks_program" in a for a in waiting[0]].index(True) + 1]
    assert b":" in fds  # VERDICT_FD:GATE_FD, the go read by the checks program itself
    assert not (workspace / "judged.txt").exists()  # started, checks.py not run
    (workspace / "greet.txt").write_text("hello\n")
    outcome = prepared.outcome()
    assert outcome.kind is CheckKind.PASS, outcome
    assert (workspace / "judged.txt").read_text() == "hello\n"
