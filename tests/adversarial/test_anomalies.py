"""Class 3: what happens while agent code is judged is that run's result, never an error.

Defence: ci_eval/run/checks/scoring.py (a checks crash, kill, hang or missing verdict after agent code
ran is a fail; only a failure of the harness or of its sandbox, known from the sandbox's own
status pipe, is an error) and ci_eval/run/agent/start.py (an agent's exit code and output are its own).
"""

from __future__ import annotations

import random

import pytest

from .conftest import GOOD_CALC, needs_sandbox

# The calc task (pytest imports the agent's calc.py). pytest's own timeout is the default 120 s,
# the task's checks timeout 12 s: a hang outlasts the checks, and the harness has to judge it.
TWIN_CHECKS = ('from ci_eval.checks import main, run_tests\n'
               'main(lambda: run_tests(fail_to_pass=["tests/test_calc.py::test_add"], '
               'restore=["tests/"]))\n')
CHECKS_TIMEOUT = 12


def _solves(run: int) -> bool:
    """Seeded: both twins solve exactly the same runs."""
    return random.Random(f"twin-{run}").random() < 0.5


TWIN = '''import os, random, sys
run = int(os.environ["CI_EVAL_RUN"])
if random.Random(f"twin-{{run}}").random() < 0.5:
    with open("calc.py", "w") as handle:
        handle.write({good!r})
elif {hostile}:
    # the same wrong add(), plus code that sabotages whoever runs it
    with open("calc.py", "w") as handle:
        handle.write("import os, signal, sys, time\\n" + {sabotage!r}[str(run)]
                     + "\\ndef add(a, b):\\n    return a - b\\n")
'''

SABOTAGES = {
    "kill the checks": "os.kill(os.getppid(), signal.SIGKILL)\nos.kill(os.getpid(), signal.SIGKILL)",
    "hang": "time.sleep(600)",
    "exit 0": "sys.stdout.flush()\nos._exit(0)",
    "kill everything": "os.kill(-1, signal.SIGKILL)\nos.kill(os.getpid(), signal.SIGKILL)",
}
UNISOLATED_SAFE = ("kill the checks", "hang", "exit 0")  # kill(-1) outside a namespace: no


def _twin(arena, hostile: bool, sabotage: dict) -> str:
    return arena.agent(TWIN.format(good=GOOD_CALC, hostile=hostile, sabotage=sabotage),
                       name="hostile" if hostile else "honest", shell="python")


def _score(result) -> tuple[int, int, int]:
    records = result.records()
    return (sum(r["status"] == "pass" for r in records),
            sum(r["status"] != "error" for r in records),
            sum(r["status"] == "error" for r in records))


@needs_sandbox
@pytest.mark.parametrize("isolated", [True, False], ids=["sandboxed", "unisolated"])
def test_an_agent_that_sabotages_its_checks_when_it_fails_scores_as_its_honest_twin(
        arena, isolated):
    """The issue's 19/19 (1 error) against 7/20: now the same score, run by run. The hostile
    twin's failing runs take turns at each sabotage."""
    k = 20 if isolated else 8
    names = list(SABOTAGES if isolated else UNISOLATED_SAFE)
    failing = [run for run in range(1, k + 1) if not _solves(run)]
    sabotage = {str(run): SABOTAGES[names[i % len(names)]] for i, run in enumerate(failing)}
    assert len(failing) >= len(names)
    arena.calc_task(checks=TWIN_CHECKS, metadata={"timeout_seconds": {"checks": CHECKS_TIMEOUT}})
    env = None if isolated else {"CI_EVAL_NO_ISOLATION": "1"}
    runs = {}
    for hostile in (False, True):
        out = "hostile" if hostile else "honest"
        result = arena.run("run", "-k", k, "-j", "4", "--out", out,
                           "--agent-cmd", _twin(arena, hostile, sabotage),
                           out=out, env=env, timeout=300)
        assert result.returncode == 0, result.detail()
        runs[out] = result
    honest, hostile = runs["honest"], runs["hostile"]
    assert _score(hostile) == _score(honest), (_score(hostile), _score(honest))
    passes, valid, errors = _score(honest)
    assert (passes, valid, errors) == (k - len(failing), k, 0), _score(honest)
    for mine, twin in zip(hostile.records(), honest.records()):
        assert mine["run"] == twin["run"] and mine["status"] == twin["status"], (mine, twin)
        assert mine["attempt"] == 1 and mine["retried_errors"] == []
    hung = [r for r in hostile.records() if sabotage.get(str(r["run"])) == SABOTAGES["hang"]]
    assert hung and all("checks timed out" in r["reason"] for r in hung), hung


@needs_sandbox
@pytest.mark.parametrize("message, code", [
    ("ci-eval sandbox: mount /tmp: Operation not permitted", 125),
    ("ci-eval sandbox: command not found: claude", 127),
    ("ci-eval sandbox: cannot run claude: Permission denied", 126),
])
def test_an_agent_posing_as_a_failed_sandbox_is_an_agent_that_failed(arena, message, code):
    """Not an error (retried, left out of the pass rate): its own fail."""
    arena.task()
    agent = arena.agent(f'echo "{message}" >&2\nexit {code}\n')
    result = arena.run("run", "-k", "1", "--max-attempts", "3", "--agent-cmd", agent)
    assert result.returncode == 0, result.detail()
    record = result.record()
    assert record["status"] == "fail", record
    assert record["attempt"] == 1 and record["retried_errors"] == []
    assert record["agent_exit_code"] == code
    assert record["reason"].startswith(f"agent exited {code}"), record["reason"]


@needs_sandbox
def test_a_process_the_agent_leaves_behind_cannot_finish_the_job_later(arena):
    """It would write the answer after the agent exited, while the diff is taken or the
    checks run. The agent's PID namespace ends with its first process."""
    arena.task()
    agent = arena.agent(f"setsid sh -c 'sleep 0.{arena.marker}; echo hello > greet.txt' "
                        "</dev/null >/dev/null 2>&1 &\n"
                        f"nohup sleep 60.{arena.marker} >/dev/null 2>&1 &\n"
                        "exit 0\n")
    result = arena.run("run", "-k", "2", "-j", "2", "--agent-cmd", agent)
    assert result.returncode == 0, result.detail()
    assert [r["status"] for r in result.records()] == ["fail", "fail"], result.records()
    assert all(r["diff"] == "" for r in result.records())


IN_PROCESS_CHECKS = '''import os, sys
from ci_eval.checks import failed, main, passed
sys.path.insert(0, os.getcwd())
import answer
main(passed("answer is 42") if answer.ANSWER == 42 else failed("wrong answer"))
'''

IN_PROCESS_SABOTAGE = {
    "exit 0": ("import os\nos._exit(0)\n", "checks ended without a verdict (exit 0)"),
    "exit 1": ("import os\nos._exit(1)\n", "checks ended without a verdict (exit 1)"),
    "raise": ("raise RuntimeError('boom')\n", "checks crashed: CRASH: RuntimeError: boom"),
    "kill itself": ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\nANSWER = 41\n",
                    "FAIL: wrong answer"),
    "hang": ("import time\ntime.sleep(600)\n", "checks timed out after 3s"),
    "exit 7": ("import sys\nsys.exit(7)\n", "checks crashed: CRASH: checks.py exited 7"),
}


@needs_sandbox
def test_agent_code_run_inside_the_checks_process_still_only_fails_the_run(arena):
    """checks.py imports the agent's module itself: os._exit, a crash, a kill (the checks
    process is its namespace's init: SIGKILL from inside does nothing), a hang, an odd exit."""
    for number, name in enumerate(IN_PROCESS_SABOTAGE, start=1):
        slug = name.replace(" ", "-")
        arena.task(f"task-{number:03d}-{slug}", checks=IN_PROCESS_CHECKS,
                   files={"answer.py": "ANSWER = 41\n"}, solution="echo 'ANSWER = 42' > answer.py\n",
                   metadata={"timeout_seconds": {"checks": 3}})
        arena.file(f"task-{number:03d}-{slug}.py", IN_PROCESS_SABOTAGE[name][0])
    agent = arena.agent(f'cp {arena.agents}/"$CI_EVAL_TASK_ID".py answer.py\n')
    result = arena.run("run", "-k", "1", "-j", "2", "--agent-cmd", agent)
    assert result.returncode == 0, result.detail()
    records = result.by_task()
    for number, name in enumerate(IN_PROCESS_SABOTAGE, start=1):
        record = records[f"task-{number:03d}-{name.replace(' ', '-')}"]
        assert record["status"] == "fail", (name, record)
        assert IN_PROCESS_SABOTAGE[name][1] in record["reason"], (name, record["reason"])
        assert record["attempt"] == 1 and record["retried_errors"] == [], record


@needs_sandbox
def test_a_task_whose_checks_crash_on_agent_code_is_never_inconclusive(arena):
    """The issue's ruff stop-hook case in small: checks.py lets a TimeoutExpired from the
    agent's hook escape. Three runs, three fails: a valid (failing) task, exit 0, not 1."""
    checks = ('import subprocess\nfrom ci_eval.checks import main, passed\n'
              'subprocess.run(["bash", "hook.sh"], timeout=1, check=True)\n'
              'main(passed("hook ran"))\n')
    arena.task(checks=checks, files={"hook.sh": "exit 1\n"}, solution="echo 'exit 0' > hook.sh\n")
    agent = arena.agent(f"echo 'sleep 30.{arena.marker}' > hook.sh\n")
    result = arena.run("run", "-k", "3", "-j", "3", "--agent-cmd", agent)
    assert result.returncode == 0, result.detail()  # 1 would be "inconclusive"
    records = result.records()
    assert [r["status"] for r in records] == ["fail"] * 3, records
    assert all("TimeoutExpired" in r["reason"] for r in records), records
    assert "inconclusive" not in result.stdout.lower()
