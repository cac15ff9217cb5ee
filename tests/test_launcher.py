"""The sandbox launcher (run/sandbox/launcher.py, run/sandbox/launcher_program.py) for real: what a command forked by it
gets (exit codes, signals, pipes, capabilities, sys.path, environment, command line), what it
cannot reach (the launcher's socket, the result pipe), and what happens when the launcher dies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness_helpers import task_with_workspace

from ci_eval.run.checks import checks_program
from ci_eval.run.sandbox import isolation, launcher, requests, sandbox_program, views
from ci_eval.run.sandbox.process import Pipe, run_process

SANDBOXED = isolation.detect().agent_sandboxed
pytestmark = pytest.mark.skipif(not SANDBOXED, reason="no agent sandbox on this machine")


def _agent(run_dir: Path, command: list[str], timeout: float = 30):
    """`command` in a real agent sandbox over run_dir/ws; (result, sandbox failure or None)."""
    request = requests.agent_request(isolation.detect(), command, repo_root=run_dir / "repo",
                                      runs_base=run_dir.parent, run_dir=run_dir)
    with Pipe() as status:
        try:
            result = run_process(command, cwd=run_dir / "ws", env={"PATH": os.defpath},
                                 timeout=timeout, pipes=(status,),
                                 launch=(launcher.AGENTS, request))
        finally:
            views.release_scratch(run_dir)
        return result, sandbox_program.read_failure(status.read(), result.launch_error)


@pytest.fixture
def run_dir(tmp_path):
    folder = tmp_path / "runs" / "run"
    (folder / "ws").mkdir(parents=True)
    (folder / "repo").mkdir()
    return folder


def test_exit_codes_signals_and_a_missing_command_come_back_as_subprocess_gives_them(run_dir):
    assert _agent(run_dir, ["sh", "-c", "exit 7"])[0].exit_code == 7
    # PID 1 of its namespace ignores signals it has no handler for; a fault is still fatal
    crash = [sys.executable, "-c", "import ctypes; ctypes.string_at(0)"]
    assert _agent(run_dir, crash)[0].exit_code == -signal.SIGSEGV
    result, failure = _agent(run_dir, ["no-such-command-ci-eval"])
    assert failure == sandbox_program.Failure(sandbox_program.FailureKind.COMMAND_NOT_FOUND,
                                       "command not found: no-such-command-ci-eval")
    result, failure = _agent(run_dir, ["sh", "-c", "echo out; echo err >&2"])
    assert (result.exit_code, failure) == (0, None)
    assert result.output_tail.split() == ["out", "err"]


def test_a_timeout_kills_the_whole_namespace(run_dir):
    started = time.monotonic()
    result, _ = _agent(run_dir, ["sh", "-c", "(setsid sleep 60 &); sleep 60"], timeout=1)
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 10


def test_the_command_holds_no_pipe_it_could_forge_an_exit_with(run_dir):
    """The agent writes `exit 0` (and `pid 1`) into every descriptor it has, then exits 3."""
    forge = ("import os\n"
             "for fd in map(int, os.listdir('/proc/self/fd')):\n"
             "    try: os.write(fd, b'\\npid 1\\nexit 0\\n')\n"
             "    except OSError: pass\n"
             "os._exit(3)\n")
    result, failure = _agent(run_dir, [sys.executable, "-c", forge])
    assert (result.exit_code, failure) == (3, None)


def test_sandboxed_commands_have_no_capabilities_and_see_hidden_folders_empty(run_dir, tmp_path):
    hidden = [tmp_path / f"results-{n}" for n in range(4)]
    for folder in hidden:
        folder.mkdir()
        (folder / "secret.txt").write_text("solution\n")
    probe = ("import os, sys\n"
             "caps = [l for l in open('/proc/self/status') if l.startswith(('CapEff', 'CapPrm', 'CapBnd'))]\n"
             "print(*[l.split()[1] for l in caps])\n"
             "for path in sys.argv[1:]:\n"
             "    try: open(os.path.join(path, 'x'), 'w'); print('writable', path)\n"
             "    except OSError as exc: print(exc.errno, os.listdir(path))\n")
    request = requests.agent_request(isolation.detect(), [], repo_root=run_dir / "repo",
                                      runs_base=run_dir.parent, run_dir=run_dir,
                                      hide=tuple(hidden))
    command = [sys.executable, "-c", probe, *map(str, hidden)]
    request = launcher.Request(tuple(command), request.view, request.user, request.net)
    with Pipe() as status:
        result = run_process(command, cwd=run_dir / "ws", env={"PATH": os.defpath}, timeout=30,
                             pipes=(status,), launch=(launcher.AGENTS, request))
        views.release_scratch(run_dir)
        assert status.read() == ""
    lines = result.output_tail.splitlines()
    assert lines[0].split() == ["0000000000000000"] * 3, lines
    assert lines[1:] == ["30 []"] * 4, lines  # EROFS, and nothing of what is underneath


def test_sandboxed_checks_run_as_python_I_would_run_them(tmp_path, monkeypatch):
    """sys.path (no workspace, the checks' folder first), the checks' environment only, no
    capabilities, a command line that names the checks, and __main__ as python makes it."""
    from ci_eval.run.checks.scoring import run_checks

    checks = ("import json, os, sys, __main__\n"
              "caps = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')]\n"
              "seen = {'path': sys.path, 'env': sorted(os.environ), 'caps': caps,\n"
              "        'cmdline': open('/proc/self/cmdline', 'rb').read().decode(errors='replace'),\n"
              "        'main': __main__.__file__, 'pid': os.getpid(), 'cwd': os.getcwd()}\n"
              "open('seen.json', 'w').write(json.dumps(seen))\n"
              "import ci_eval.checks\n"
              "sys.exit(0)\n")
    task, workspace, runs = task_with_workspace(tmp_path, checks)
    task_dir = task.path
    monkeypatch.setenv("CI_EVAL_TEST_CANARY", "harness-secret")
    outcome = run_checks(task, workspace, isolation.detect(), checks_dir=runs / "run.checks",
                         runs_base=runs)
    assert outcome.kind.value == "pass", outcome
    seen = json.loads((workspace / "seen.json").read_text())
    assert seen["path"][0] == str(task_dir)
    assert not any(p.startswith(str(runs)) or p in ("", ".") for p in seen["path"])
    expected = subprocess.run([sys.executable, "-I", "-c", "import sys; print('\\n'.join(sys.path))"],
                              capture_output=True, text=True, check=True, cwd="/").stdout.split()
    assert [p for p in expected if "__editable__" not in p] == \
        [p for p in seen["path"][1:] if p in expected]
    assert "CI_EVAL_TEST_CANARY" not in seen["env"] and "CI_EVAL_WORKSPACE" in seen["env"]
    assert seen["caps"] == ["0000000000000000"]
    cmdline = seen["cmdline"].split("\0")
    assert cmdline[:5] == [sys.executable, "-I", "-S", "-B", "-c"]
    assert cmdline[5] == checks_program.command(0, "", [])[5]  # the boot that imports it
    assert cmdline[7] == str(task_dir / "checks.py"), cmdline
    assert seen["main"] == str(task_dir / "checks.py") and seen["pid"] == 1
    assert seen["cwd"] == str(workspace.resolve())


@pytest.mark.parametrize("exit_line, kind", [("sys.exit(0)\n", "pass"), ("sys.exit(1)\n", "fail"),
                                             ("", "task-error")])
def test_sandboxed_checks_end_as_a_program_ends(tmp_path, exit_line, kind):
    """After checks.py, what an interpreter's exit does: a non-daemon thread it started runs to
    its end, its atexit handlers run (after the verdict), the exit status is the checks'."""
    from ci_eval.run.checks.scoring import run_checks

    checks = ("import atexit, os, sys, threading, time\n"
              "def late():\n"
              "    time.sleep(0.3)\n"
              "    open('thread.txt', 'w').write('joined')\n"
              "threading.Thread(target=late).start()\n"
              "atexit.register(lambda: open('atexit.txt', 'w').write(\n"
              "    str(os.path.exists('thread.txt'))))\n" + exit_line)
    task, workspace, runs = task_with_workspace(tmp_path, checks)
    outcome = run_checks(task, workspace, isolation.detect(), checks_dir=runs / "run.checks",
                         runs_base=runs)
    assert outcome.kind.value == kind, outcome
    assert (workspace / "thread.txt").read_text() == "joined"
    assert (workspace / "atexit.txt").read_text() == "True"  # threads first, as at an exit


def test_a_launcher_that_died_fails_that_run_as_infrastructure_and_is_started_again(run_dir):
    assert _agent(run_dir, ["true"])[0].exit_code == 0
    old = launcher.AGENTS.pid
    os.kill(old, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while launcher.AGENTS.alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    result, failure = _agent(run_dir, ["true"])  # the dead one is noticed, a new one started
    assert (result.exit_code, failure) == (0, None), (result, failure)
    assert launcher.AGENTS.pid not in (None, old)


def test_commands_die_with_a_killed_launcher(run_dir):
    marker = f"{time.time_ns() % 10**6}{os.getpid()}"
    outcome = {}
    import threading

    def run():
        outcome["result"] = _agent(run_dir, ["sh", "-c", f"sleep 6{marker}"], timeout=60)

    thread = threading.Thread(target=run)
    thread.start()
    from harness_helpers import live_pids_with

    deadline = time.monotonic() + 20
    while not live_pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert live_pids_with(marker)
    os.kill(launcher.AGENTS.pid, signal.SIGKILL)
    thread.join(30)
    result, failure = outcome["result"]
    assert failure == sandbox_program.Failure(sandbox_program.FailureKind.SANDBOX,
                                       "sandbox launcher: the sandbox launcher ended"), failure
    assert live_pids_with(marker) == []


@pytest.mark.parametrize("sandboxed", [True, False])
def test_checks_get_exit_and_quit_and_the_same_path_with_and_without_the_sandbox(
        tmp_path, sandboxed):
    """Both starts skip the site module (-S): exit() and quit() are still there, as under
    `python checks.py`, and sys.path is the one the harness computed, workspace-free."""
    from ci_eval.run.checks.scoring import run_checks

    checks = ("import json, sys\n"
              "open('seen.json', 'w').write(json.dumps(sys.path))\n"
              "import ci_eval.checks\n"
              "quit if False else exit(0)\n")
    task, workspace, runs = task_with_workspace(tmp_path, checks)
    task_dir = task.path
    where = isolation.detect() if sandboxed else isolation.UNISOLATED
    outcome = run_checks(task, workspace, where, checks_dir=runs / "run.checks", runs_base=runs)
    assert outcome.kind.value == "pass", outcome
    seen = json.loads((workspace / "seen.json").read_text())
    assert seen == [str(task_dir), *requests.checks_sys_path()]
