"""The launcher forks each sandboxed command straight into its namespaces (launcher_program.fork_into)
and follows it itself: what the launcher's fork between them used to guarantee, now kept by the
launcher and the command's own process. For real, through the real launcher."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ci_eval.run.sandbox import isolation, launcher, launcher_program, requests, views
from ci_eval.run.sandbox.process import Pipe, run_process

SANDBOXED = isolation.detect().agent_sandboxed
pytestmark = pytest.mark.skipif(not SANDBOXED, reason="no agent sandbox on this machine")
ROOT = str(Path(launcher_program.__file__).resolve().parents[3])
OWN_USER = "(lp.CLONE_NEWUSER if os.geteuid() else 0)"  # namespaces need one unless root


def _agent(run_dir: Path, command: list[str], timeout: float = 30):
    """`command` in a real agent sandbox over run_dir/ws: its ProcessResult."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "ws").mkdir(exist_ok=True)
    (run_dir / "repo").mkdir(exist_ok=True)
    request = requests.agent_request(isolation.detect(), command, repo_root=run_dir / "repo",
                                      runs_base=run_dir.parent, run_dir=run_dir)
    with Pipe() as status:
        try:
            return run_process(command, cwd=run_dir / "ws", env={"PATH": os.defpath},
                               timeout=timeout, pipes=(status,),
                               launch=(launcher.AGENTS, request))
        finally:
            views.release_scratch(run_dir)


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _in_subprocess(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {ROOT!r})\n"
                           + code], capture_output=True, text=True, timeout=60, check=False)


def test_the_command_is_pid_1_of_its_namespace_in_a_group_of_its_own(tmp_path):
    probe = ("import os\n"
             "print(os.getpid(), os.getppid(), os.getpgrp() == os.getpid())\n")
    result = _agent(tmp_path / "runs" / "run", [sys.executable, "-c", probe])
    assert result.exit_code == 0, result
    assert result.output_tail.split() == ["1", "0", "True"]  # its parent is outside


@pytest.mark.parametrize("target", [0, -1])
def test_a_command_that_stops_its_group_or_everything_it_can_name_still_has_its_exit_told(
        tmp_path, target):
    """What tells the exit (the launcher) is in no group the command can name: a child that stops
    the command's group (PID 1 itself ignores it) or every process it may signal leaves the
    launcher running; PID 1 exits 7 and that comes back at once, not at the timeout."""
    stopper = ("import os, signal, time\n"
               "if os.fork() == 0:\n"
               f"    os.kill({target}, signal.SIGSTOP)\n"
               "    os._exit(0)\n"
               "time.sleep(0.5)\n"
               "os._exit(7)\n")
    command = [sys.executable, "-c", stopper]
    started = time.monotonic()
    result = _agent(tmp_path / "runs" / "run", command, timeout=60)
    assert (result.exit_code, result.timed_out) == (7, False), result
    assert time.monotonic() - started < 20
    assert _state(launcher.AGENTS.pid) not in ("T", "t")
    assert _agent(tmp_path / "runs" / "next", ["true"]).exit_code == 0  # it still serves


def test_a_command_cannot_forge_the_exit_of_another_run_the_launcher_follows(tmp_path):
    """The launcher holds the result pipe of every run it follows, and each command is a fork of
    the launcher: the command closes all of them before anything of its own runs. A second
    command writes an exit frame into every descriptor it has while the first still runs."""
    first: dict = {}
    thread = threading.Thread(target=lambda: first.update(
        result=_agent(tmp_path / "runs" / "first", ["sh", "-c", "sleep 1.5; exit 4"])))
    thread.start()
    time.sleep(0.5)  # the first is running: its result pipe is open in the launcher
    forge = ("import os\n"
             "for fd in map(int, os.listdir('/proc/self/fd')):\n"
             "    try: os.write(fd, b'\\n{\"kind\": \"exit\", \"value\": 0}\\n')\n"
             "    except OSError: pass\n"
             "print(sorted(map(int, os.listdir('/proc/self/fd'))), flush=True)\n"
             "os._exit(3)\n")
    second = _agent(tmp_path / "runs" / "second", [sys.executable, "-c", forge])
    thread.join(30)
    assert second.exit_code == 3, second
    assert first["result"].exit_code == 4, first
    # stdin, stdout, stderr and the listing's own descriptor: nothing of the launcher's
    listed = [line for line in second.output_tail.splitlines() if line.startswith("[")]
    assert listed == ["[0, 1, 2, 3]"], second.output_tail


def test_a_command_killed_with_its_group_is_told_as_killed(tmp_path):
    """The harness kills the command's group on a timeout: the launcher reaps the namespace's
    PID 1 and tells -9 (what subprocess gives for SIGKILL), as for a signal from anywhere."""
    marker = f"{time.time_ns() % 10**6}{os.getpid()}"
    outcome: dict = {}
    thread = threading.Thread(target=lambda: outcome.update(
        result=_agent(tmp_path / "runs" / "run", ["sh", "-c", f"sleep 3{marker}; exit 0"])))
    thread.start()
    from harness_helpers import live_pids_with

    deadline = time.monotonic() + 20
    while not live_pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    (pid_1,) = [pid for pid in live_pids_with(marker)
                if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sh\0")]
    os.killpg(os.getpgid(pid_1), signal.SIGKILL)
    thread.join(30)
    assert outcome["result"].exit_code == -signal.SIGKILL, outcome
    assert live_pids_with(marker) == []


def test_fork_into_makes_pid_1_of_a_new_pid_namespace_as_os_fork_makes_a_child():
    done = _in_subprocess(
        "import os\n"
        "from ci_eval.run.sandbox import launcher_program as lp\n"
        f"pid = lp.fork_into(lp.CLONE_NEWPID | lp.CLONE_NEWNS | {OWN_USER})\n"
        "if pid == 0:\n"
        "    os._exit(40 + os.getpid())\n"
        "print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n")
    assert done.stdout.split() == ["41"], done.stderr


def test_fork_into_falls_back_to_clone_where_clone3_is_refused():
    """Docker's default seccomp profile answers clone3 with ENOSYS (as a kernel without it
    does): an unknown syscall number gets the same answer from the kernel."""
    if os.uname().machine not in launcher_program.SYS_CLONE:
        pytest.skip("no clone(2) number known for this architecture")
    done = _in_subprocess(
        "import os\n"
        "from ci_eval.run.sandbox import launcher_program as lp\n"
        "lp.SYS_CLONE3 = 100000\n"
        f"pid = lp.fork_into(lp.CLONE_NEWPID | {OWN_USER})\n"
        "if pid == 0:\n"
        "    os._exit(40 + os.getpid())\n"
        "print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n")
    assert done.stdout.split() == ["41"], done.stderr


def test_fork_into_raises_when_the_kernel_refuses_and_makes_nothing():
    done = _in_subprocess(
        "import os\n"
        "from ci_eval.run.sandbox import launcher_program as lp\n"
        "try:\n"
        "    lp.fork_into(lp.CLONE_NEWUSER | 0x200)  # CLONE_FS with a new user namespace: EINVAL\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
        "try:\n"
        "    os.wait()\n"
        "except ChildProcessError:\n"
        "    print('no child')\n")
    assert done.stdout.split("\n")[:2] == ["refused 22", "no child"], (done.stdout, done.stderr)


@pytest.mark.parametrize("launcher_ended, expected", [(True, launcher_program.DEATH_EXIT),
                                                      (False, 125)])
def test_a_fork_whose_launcher_ended_before_its_death_signal_was_armed_runs_nothing(
        launcher_ended, expected):
    """The window between the fork and its parent-death signal: the fork checks the launcher's
    pidfd (inherited) once the signal is armed. Ended: exit 137 at once. Alive: it goes on (and
    here fails on the empty request: the sandbox's own failure, 125)."""
    done = _in_subprocess(
        "import os, socket, subprocess\n"
        "from ci_eval.run.sandbox import launcher_program as lp\n"
        "other = subprocess.Popen(['sleep', '30'])\n"
        "watched = os.pidfd_open(other.pid)\n"
        f"if {launcher_ended}:\n"
        "    other.kill(); other.wait()\n"
        "ours, theirs = socket.socketpair()\n"
        "fds = [os.open(os.devnull, os.O_WRONLY) for _ in range(3)]\n"
        f"pid = lp.fork_into(lp.CLONE_NEWNS | lp.CLONE_NEWPID | {OWN_USER})  # never the host's\n"
        "if pid == 0:\n"
        "    lp._sandboxed({}, fds, theirs, watched, (0, 0))\n"
        "print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
        "other.kill()\n")
    assert done.stdout.split() == [str(expected)], done.stderr
