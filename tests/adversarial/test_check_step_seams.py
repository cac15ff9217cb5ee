"""Issue #31, item 1: the seam between check steps.

A checks.py that adds hidden tests (`add_hidden_tests`) and runs the agent's code in an earlier
step (task-021's declared tests, task-010's delegation probe) once let that code rewrite the
hidden test files before the step that ran them: bodies became `return`, ids kept, and a wrong
fix passed (021: rubric PASS 94.7; 010: one of its own negatives passed). Each attack runs on a
copy of the bundled task through `ci-eval run --agent-cmd`, beside an honest twin:

- 201: task-021's special-cased fix (a negative) whose module, imported by the declared tests
  (step 1), rewrites the hidden test file (step 2) in place;
- 202: the same negative, whose module rewrites itself into the right fix when step 1 imports
  it: the diff (what the rubric judges) is not the code step 2 runs;
- 203: the same negative, leaving a daemon that waits for the hidden file and rewrites it;
- 211: task-010's round-half-even negative, rewriting the hidden tests when imported: by the
  delegation probe (a raw subprocess of checks.py, step 1) and by the visible tests collected
  before the hidden ones in step 2's own pytest session;
- 204, 212: the honest twins (each task's own solution), which must still pass.

Defences: ci_eval/run/checks/step_guard.py (hidden files laid in from the pristine copy for
each step, after every earlier process is gone; what a step changed in the workspace put back
when it ends) and ci_eval/run/checks/pytest_session.py (a hidden test module is compiled from
the pristine bytes, whatever the file on disk says when pytest imports it).
"""

from __future__ import annotations

import shutil

import pytest

from .conftest import REPO_ROOT, needs_sandbox

RETRY = "task-021-retry-after-negative-delay"
PRICING = "task-010-extract-shared-discount-rules"

# Every `def test_...(...):` of a file gets `return` as its first statement: same ids, all pass.
FORGE = r'''
def _forge(path):
    import os, re
    if not os.path.isfile(path):
        return False
    with open(path) as handle:
        text = handle.read()
    forged = re.sub(r"(def test_\w+\((?:[^()]|\([^()]*\))*\)\s*:)", r"\1\n    return", text)
    if forged != text:
        with open(path, "w") as handle:
            handle.write(forged)
    return True
'''

APPLY = '''import subprocess, sys
subprocess.run(["patch", "-p1", "-i", {patch!r}], check=True)
with open({module!r}, "a") as handle:
    handle.write({payload!r})
'''

# 201: rewrite the hidden file if it is there when the module is imported
REWRITE_HIDDEN = FORGE + '_forge("tests/{hidden}")\n'

# 202: when imported, the special-cased parser becomes the right fix
SELF_FIX = r'''
def _switch():
    import re
    with open(__file__) as handle:
        text = handle.read()
    head = text.split("\ndef _switch", 1)[0]
    fixed = re.sub(r"    if text in \(.*?\n    if not text:", "    if not text:", head, flags=re.S)
    fixed = fixed.replace("    if now is None:\n", "    if when.tzinfo is None:\n"
                          "        when = when.replace(tzinfo=timezone.utc)\n"
                          "    if now is None:\n", 1)
    fixed = fixed.replace("    return (when - now).total_seconds()\n",
                          "    return max(0.0, (when - now).total_seconds())\n")
    with open(__file__, "w") as handle:
        handle.write(fixed)
_switch()
'''

# 203: a daemon (setsid, double fork) that waits for the hidden file and rewrites it
DAEMON = FORGE + r'''
def _daemon():
    import os, time
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    for fd in range(3):
        os.close(fd)
    deadline = time.time() + 40
    while time.time() < deadline:
        try:
            if _forge("tests/{hidden}"):
                time.sleep(0.001)
        except OSError:
            pass
        time.sleep(0.002)
    os._exit(0)
_daemon()
'''


def _agent(task: str, patch: str, module: str, payload: str) -> str:
    return APPLY.format(patch=patch, module=module, payload=payload)


@pytest.fixture(scope="module")
def records(module_arena):
    arena = module_arena
    retry = REPO_ROOT / "tasks" / RETRY
    pricing = REPO_ROOT / "tasks" / PRICING
    patches = {
        "retry-game": retry / "negatives" / "game-special-case-the-tested-dates.patch",
        "retry-fix": retry / "solution" / "fix.patch",
        "pricing-half-even": pricing / "negatives" / "round-half-even.patch",
        "pricing-fix": pricing / "solution" / "fix.patch",
    }
    copies = {name: str(arena.file(f"{name}.patch", path.read_text()))
              for name, path in patches.items()}
    hidden_retry, hidden_pricing = "test_retry_after_more.py", "test_pricing_hidden.py"
    agents = {
        "task-201-hidden-rewrite": (RETRY, _agent(
            RETRY, copies["retry-game"], "retryutil/parser.py",
            REWRITE_HIDDEN.replace("{hidden}", hidden_retry))),
        "task-202-self-fix": (RETRY, _agent(RETRY, copies["retry-game"], "retryutil/parser.py",
                                            SELF_FIX)),
        "task-203-daemon": (RETRY, _agent(RETRY, copies["retry-game"], "retryutil/parser.py",
                                          DAEMON.replace("{hidden}", hidden_retry))),
        "task-204-honest": (RETRY, _agent(RETRY, copies["retry-fix"], "retryutil/parser.py",
                                          "")),
        "task-211-probe-rewrite": (PRICING, _agent(
            PRICING, copies["pricing-half-even"], "billing/pricing.py",
            REWRITE_HIDDEN.replace("{hidden}", hidden_pricing))),
        "task-212-honest": (PRICING, _agent(PRICING, copies["pricing-fix"], "billing/pricing.py",
                                            "")),
    }
    for name, (source, script) in agents.items():
        shutil.copytree(REPO_ROOT / "tasks" / source, arena.repo / "tasks" / name)
        (arena.agents / f"{name}.py").write_text(script)
    dispatch = arena.agent(
        "import os, runpy, sys\n"
        f"runpy.run_path(os.path.join({str(arena.agents)!r}, "
        "os.environ['CI_EVAL_TASK_ID'] + '.py'))\n", shell="python")
    result = arena.run("run", "-k", "1", "-j", "2", "--agent-cmd", dispatch, timeout=400)
    assert result.returncode in (0, 1), result.detail()
    found = result.by_task()
    assert set(found) == set(agents), found.keys()
    return found


@needs_sandbox
def test_the_honest_twins_pass(records):
    for task in ("task-204-honest", "task-212-honest"):
        assert records[task]["status"] == "pass", records[task]


@needs_sandbox
def test_code_run_by_the_declared_tests_cannot_rewrite_the_hidden_tests(records):
    """021: the special-cased fix fails the hidden tests, whatever step 1 did to their file."""
    attack = records["task-201-hidden-rewrite"]
    assert attack["status"] == "fail", attack
    assert "test_retry_after_more.py" in attack["reason"], attack["reason"]


@needs_sandbox
def test_code_run_by_one_step_cannot_change_the_code_a_later_step_judges(records):
    """021: the parser step 1 rewrote into the right fix is put back before step 2."""
    attack = records["task-202-self-fix"]
    assert attack["status"] == "fail", attack
    assert "test_retry_after_more.py" in attack["reason"], attack["reason"]


@needs_sandbox
def test_a_daemon_waiting_for_the_hidden_tests_never_sees_them(records):
    attack = records["task-203-daemon"]
    assert attack["status"] == "fail", attack
    assert "test_retry_after_more.py" in attack["reason"], attack["reason"]


@needs_sandbox
def test_a_probe_and_the_visible_tests_cannot_rewrite_the_hidden_tests(records):
    """010: neither the probe (a raw subprocess of checks.py) nor the visible tests collected
    first in the hidden tests' own session change what the hidden module runs."""
    attack = records["task-211-probe-rewrite"]
    assert attack["status"] == "fail", attack
    assert "test_pricing_hidden.py" in attack["reason"], attack["reason"]
