"""Round 3 of the sandbox classes (issue #18, items 8-11): signals, /tmp under HOME, PATH
folders the checks cannot see, and the host's HOME.

Each attack goes through `ci-eval run` for real and is compared with an honest twin:
- signals: an agent (and code under test) that signals its process group, every process it may
  (-1), its parent and every group number: nothing of the harness stops or dies, the run ends
  at once with the twin's status;
- HOME=/tmp and HOME=/tmp/x (CI containers): the agent and the checks can still write /tmp;
- a `requires` tool on a PATH folder under the repo root: exit 2 before any run, naming the
  tool, the folder and the fix; the harness's own venv inside the repo root (.ci/run's .venv)
  keeps working;
- the host's HOME: a canary there is unreadable by the agent and by the checks; a preset's
  login file is in the agent's own HOME, nothing else of the host's.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from .conftest import CALC_CHECKS, CALC_FILES, GOOD_CALC, PYTHON, needs_sandbox

SIGNALLER = r'''
import os, signal, sys, time
me = os.getpid()
ready_r, ready_w = os.pipe()
helper = os.fork()
if helper == 0:  # another group: wakes the agent after each attack that stops its own group
    os.setpgid(0, 0)
    os.write(ready_w, b"r")
    for _ in range(100):
        time.sleep(0.02)
        try:
            os.kill(me, signal.SIGCONT)
        except OSError:
            pass
    os._exit(0)
os.read(ready_r, 1)
reached = []
attacks = [(0, signal.SIGSTOP), (-1, signal.SIGSTOP), (os.getppid(), signal.SIGSTOP),
           (-os.getpgrp() if os.getpgrp() else 0, signal.SIGSTOP), (0, signal.SIGTERM),
           (0, signal.SIGINT), (0, signal.SIGHUP)]
attacks += [(-group, signal.SIGSTOP) for group in range(2, 300)]
attacks += [(0, signal.SIGKILL), (-1, signal.SIGKILL), (os.getppid(), signal.SIGKILL)]
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)  # survive its own group's signals
for target, sig in attacks:
    try:
        os.kill(target, sig)
        reached.append(f"{target}:{sig}")
    except OSError:
        pass
    time.sleep(0.001)
print("signalled", len(reached), "targets", flush=True)
with open("greet.txt", "w") as handle:
    handle.write("hello\n")
'''


def _twins(arena, honest_agent: str, hostile_agent: str, **run):
    """The honest run and the attack, each into its own results folder."""
    honest = arena.run("run", "-k", "1", "--agent-cmd", honest_agent, "--out", "honest",
                       out="honest", **run)
    attacked = arena.run("run", "-k", "1", "--agent-cmd", hostile_agent, "--out", "attacked",
                         out="attacked", timeout=50, **run)
    assert honest.returncode == 0, honest.detail()
    return honest, attacked


def _states_of_stopped(marker: str) -> list[str]:
    """Processes in state T (stopped) whose command line or environment holds marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            text = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
        except OSError:
            continue
        if state in ("T", "t") and marker.encode() in text:
            found.append(entry.name)
    return found


@needs_sandbox
def test_an_agent_signalling_every_group_it_can_name_stops_nothing_of_the_harness(arena):
    arena.task(metadata={"timeout_seconds": {"agent": 60, "checks": 60}})
    # Run as argv (no shell): the attacker is the namespace's PID 1, as an agent binary is.
    honest, result = _twins(arena, arena.agent("echo hello > greet.txt\n"),
                            arena.agent(SIGNALLER, shell="python"))
    assert result.returncode == 0, result.detail()
    assert result.record()["status"] == honest.record()["status"] == "pass", result.record()
    assert result.seconds < 20, f"the run stalled ({result.seconds:.1f}s of a 60s agent timeout)"
    assert not _states_of_stopped(str(arena.tmp))


CHECKS_SIGNALLER = (
    "import os, signal, time\n"
    "_me = os.getpid()\n"
    "_ready = os.pipe()\n"
    "if os.fork() == 0:\n"
    "    os.setpgid(0, 0)\n"
    "    os.write(_ready[1], b'r')\n"
    "    for _ in range(50):\n"
    "        time.sleep(0.02)\n"
    "        try:\n"
    "            os.kill(_me, signal.SIGCONT)\n"
    "        except OSError:\n"
    "            pass\n"
    "    os._exit(0)\n"
    "os.read(_ready[0], 1)\n"
    "for _sig in (signal.SIGTERM, signal.SIGHUP):\n"
    "    signal.signal(_sig, signal.SIG_IGN)\n"
    "for _target, _sig in [(0, signal.SIGSTOP), (os.getppid(), signal.SIGSTOP),\n"
    "                      (0, signal.SIGTERM), (-1, signal.SIGTERM), (-1, signal.SIGSTOP)]:\n"
    "    try:\n"
    "        os.kill(_target, _sig)\n"
    "    except OSError:\n"
    "        pass\n"
    "    time.sleep(0.05)\n"
)


@needs_sandbox
def test_code_under_test_signalling_its_groups_stops_nothing_of_the_harness(arena):
    """The checks' side: the module pytest imports signals whatever it can name."""
    arena.calc_task(metadata={"timeout_seconds": {"agent": 60, "checks": 60}})
    good = arena.file("calc_good.py", GOOD_CALC)
    hostile = arena.file("calc_hostile.py", CHECKS_SIGNALLER + GOOD_CALC)
    honest, result = _twins(arena, arena.agent(f"cp {good} calc.py\n"),
                            arena.agent(f"cp {hostile} calc.py\n"))
    assert honest.record()["status"] == "pass", honest.record()
    assert result.record()["status"] == "pass", result.record()
    assert result.seconds < 25, f"the run stalled ({result.seconds:.1f}s of a 60s timeout)"
    assert not _states_of_stopped(str(arena.tmp))
