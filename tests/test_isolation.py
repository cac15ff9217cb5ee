"""The agent's sandbox and the lifetime of everything the harness starts, for real: the CLI (or
the sandbox itself) as a subprocess, real agents, real kills. See docs/isolation.md."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness_helpers import cli, read_lines, write_task

from ci_eval import isolation

SANDBOXED = isolation.detect().agent_prefix is not None
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason="no agent sandbox on this machine")


def _marker() -> str:
    return f"{time.time_ns() % 10**6}{os.getpid()}"


def _alive_with(marker: str) -> list[int]:
    """Running (not zombie) processes whose command line holds marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _wait_gone(marker: str, seconds: float = 5) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := _alive_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def _kill_all(marker: str) -> None:
    for pid in _alive_with(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _added_files(diff: str) -> dict[str, list[str]]:
    """File -> added lines, from a recorded diff."""
    files: dict[str, list[str]] = {}
    current = None
    for line in diff.splitlines():
        if line.startswith("+++ b/"):
            current = files.setdefault(line[6:], [])
        elif line.startswith("+") and not line.startswith("+++") and current is not None:
            current.append(line[1:])
    return files


# --- 2. nothing the harness started outlives it ----------------------------------------------


def _start_and_kill_harness(repo: Path, args: list[str], marker: str, env: dict | None = None):
    proc = subprocess.Popen([sys.executable, "-m", "ci_eval", "run", *args], cwd=repo, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(_alive_with(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive_with(marker), "the commands never started"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return _wait_gone(marker)
    finally:
        proc.kill()
        proc.wait()
        _kill_all(marker)


@pytest.mark.parametrize("isolated", [True, False])
def test_kill_9_of_the_harness_kills_every_agent(tmp_path, isolated):
    if isolated and not SANDBOXED:
        pytest.skip("no agent sandbox on this machine")
    marker = _marker()
    repo = tmp_path / "repo"
    write_task(repo)
    env = {**os.environ}
    if not isolated:
        env["CI_EVAL_NO_ISOLATION"] = "1"
    # unisolated, only the agent's own process is guaranteed (docs/isolation.md): exec, no child
    agent = f"sleep 3{marker}" if not isolated else f"bash -c 'sleep 3{marker}; sleep 4{marker}'"
    survivors = _start_and_kill_harness(
        repo, ["-k", "2", "-j", "2", "--timeout", "600", "--agent-cmd", agent], marker, env)
    assert survivors == [], "agents outlived the harness"


def test_kill_9_of_the_harness_kills_running_checks(tmp_path):
    marker = _marker()
    repo = tmp_path / "repo"
    write_task(repo, f"task-001-slow-checks-{marker}",
               checks="import time\ntime.sleep(600)\n",
               metadata={"timeout_seconds": {"checks": 600}})
    survivors = _start_and_kill_harness(repo, ["-k", "2", "-j", "2"], marker)
    assert survivors == [], "checks outlived the harness"


def test_without_setpriv_a_python_shim_arms_the_parent_death_signal(tmp_path):
    """Where util-linux's setpriv is missing, the same guarantee from a small Python prefix."""
    marker = _marker()
    script = tmp_path / "harness.py"
    script.write_text(
        "import os, sys, threading\n"
        "os.environ['PATH'] = '/nonexistent'\n"  # no setpriv to find
        "from ci_eval import process\n"
        "assert 'setpriv' not in process.death_signal_prefix()[0], process.death_signal_prefix()\n"
        "def run():\n"
        f"    print(process.run_process(['/bin/sleep', '3{marker}'], cwd='/', env={{}},\n"
        "                              timeout=600), flush=True)\n"
        "threading.Thread(target=run).start()\n"
        "print('started', flush=True)\n"
        "threading.Event().wait()\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the shim's cmdline holds the marker too: wait for exec
            sleeping = [pid for pid in _alive_with(marker) if _cmdline(pid).startswith("/bin/sleep")]
            if sleeping:
                break
            time.sleep(0.05)
        assert sleeping, "sleep never started"
        proc.send_signal(signal.SIGKILL)
        output = proc.communicate()[0]
        assert _wait_gone(marker) == [], output
    finally:
        proc.kill()
        proc.wait()
        _kill_all(marker)


# --- 4. without isolation, descendants that left the group ---------------------------------------


@pytest.mark.parametrize("ending", ["timeout", "exit"])
def test_unisolated_agent_setsid_children_do_not_outlive_the_run(tmp_path, ending):
    marker = _marker()
    repo = tmp_path / "repo"
    write_task(repo)
    agent = tmp_path / "agent.sh"
    agent.write_text(f"setsid sleep 37{marker} &\n"
                     f"(setsid sleep 38{marker} &)\n"  # a daemon: its parent is gone at once
                     + (f"sleep 60{marker}\n" if ending == "timeout" else "sleep 0.5\n"))
    env = {**os.environ, "CI_EVAL_NO_ISOLATION": "1"}
    try:
        proc = cli("run", "-k", "1", "--timeout", "2", "--agent-cmd", f"bash {agent}",
                   cwd=repo, env=env)
        assert proc.returncode == 0, proc.stderr
        record = read_lines(repo / "results" / "task-001-greet.jsonl")[0]
        assert record["status"] == ("timeout" if ending == "timeout" else "fail"), record
        assert _wait_gone(marker, 2) == []
    finally:
        _kill_all(marker)
