"""Issue #31, item 12: an extra test report written by code under test. The harness read every
JSON report in the checks' reports folder, so a report the code under test wrote there (every
declared test PASSED) left the status right but lifted rubric_score (36.8 -> 84.2 on a wrong
fix). Now the checks program names the reports ci_eval.checks accepted, with their sha256, on
its verdict pipe, and the harness reads those only, unchanged: a forged extra report, or an
accepted one rewritten by a later step, is ignored and noted.

Each attack runs on a copy of the bundled task-021 through `ci-eval run`, beside its twin (the
same wrong fix without the forgery): the scores must be equal."""

from __future__ import annotations

import json
import shutil

import pytest

from .conftest import REPO_ROOT, needs_sandbox

TASK = "task-021-retry-after-negative-delay"
DECLARED = json.loads((REPO_ROOT / "tasks" / TASK / "metadata.json").read_text())
ALL_PASSED = {"version": 1, "exit_status": 0,
              "tests": {t: "PASSED" for t in DECLARED["fail_to_pass"] + DECLARED["pass_to_pass"]}}

APPLY = '''import subprocess
subprocess.run(["patch", "-p1", "-i", {patch!r}], check=True)
with open("retryutil/parser.py", "a") as handle:
    handle.write({payload!r})
'''
# an extra report beside the real ones
EXTRA = f'''
import os as _os, json as _json
_folder = _os.environ.get("CI_EVAL_REPORT_DIR")
if _folder:
    with open(_os.path.join(_folder, "pytest-99999-1.json"), "w") as _h:
        _json.dump({ALL_PASSED!r}, _h)
'''
# every report already there rewritten (the declared tests' report of step 1, by step 2)
REWRITE = f'''
import os as _os, json as _json
_folder = _os.environ.get("CI_EVAL_REPORT_DIR")
for _name in (_os.listdir(_folder) if _folder else []):
    if _name.endswith(".json"):
        with open(_os.path.join(_folder, _name), "w") as _h:
            _json.dump({ALL_PASSED!r}, _h)
'''
AGENTS = {"task-301-extra": EXTRA, "task-302-rewrite": REWRITE, "task-303-twin": ""}


@pytest.fixture(scope="module")
def records(module_arena):
    arena = module_arena
    patch = arena.file("partial.patch",
                       (REPO_ROOT / "tasks" / TASK / "negatives" / "partial-fix.patch").read_text())
    for name, payload in AGENTS.items():
        shutil.copytree(REPO_ROOT / "tasks" / TASK, arena.repo / "tasks" / name)
        (arena.agents / f"{name}.py").write_text(APPLY.format(patch=str(patch), payload=payload))
    dispatch = arena.agent(
        "import os, runpy\n"
        f"runpy.run_path(os.path.join({str(arena.agents)!r}, "
        "os.environ['CI_EVAL_TASK_ID'] + '.py'))\n", shell="python")
    result = arena.run("run", "-k", "1", "-j", "2", "--agent-cmd", dispatch, timeout=300)
    assert result.returncode in (0, 1), result.detail()
    return result.by_task()


@needs_sandbox
@pytest.mark.parametrize("task", ["task-301-extra", "task-302-rewrite"])
def test_a_report_code_under_test_wrote_lifts_no_score(records, task):
    twin, attack = records["task-303-twin"], records[task]
    assert twin["status"] == "fail" and attack["status"] == "fail", (twin, attack)
    # a rewritten report of its own is ignored: a run can only lower its own score that way
    assert attack["rubric_score"] <= twin["rubric_score"], (attack, twin)
    assert attack["rubric_verdict"] == "FAIL"
    assert "(ignored)" in attack["reason"], attack["reason"]
