"""The golden tasks in tasks/ judge behaviour, not the text of one fix.

For every task, a second correct solution written differently from solution/ is kept in
tests/fixtures/alt-solutions/<task-id>.patch (or .sh). In a fresh workspace built the way the
harness builds it (ci_eval.workspace), the alternative must pass checks.py and the untouched
repo-state must fail it. `ci-eval verify` covers solution/ and negatives/; this covers the rest.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ci_eval.workspace import apply_output, create_workspace

ROOT = Path(__file__).resolve().parent.parent
TASKS = sorted(p for p in (ROOT / "tasks").glob("task-*") if p.is_dir())
ALT_DIR = Path(__file__).resolve().parent / "fixtures" / "alt-solutions"
PASS, FAIL = 0, 1


def alt_solution(task: Path) -> Path | None:
    for suffix in (".patch", ".diff", ".sh"):
        candidate = ALT_DIR / f"{task.name}{suffix}"
        if candidate.exists():
            return candidate
    return None


def skip_unless_requirements(task: Path) -> None:
    metadata = json.loads((task / "metadata.json").read_text())
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    missing = [cmd for cmd in metadata.get("requires", []) if shutil.which(cmd, path=path) is None]
    if missing:
        pytest.skip(f"{task.name} requires {missing}")


def run_checks(task: Path, workspace: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "CI_EVAL_TASK_DIR": str(task),
        "CI_EVAL_WORKSPACE": str(workspace),
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    }
    return subprocess.run(
        [sys.executable, "-I", "-m", "ci_eval._run_checks", str(task / "checks.py")],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120, check=False,
    )


def test_there_are_twenty_golden_tasks():
    assert len(TASKS) == 20
    assert [int(p.name.split("-")[1]) for p in TASKS] == list(range(1, 21))


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_alternative_solution_passes(task, tmp_path):
    alt = alt_solution(task)
    assert alt is not None, f"no alternative solution for {task.name} in {ALT_DIR}"
    skip_unless_requirements(task)
    workspace = create_workspace(task / "repo-state", tmp_path / "ws")
    apply_output(alt, workspace)
    proc = run_checks(task, workspace)
    assert proc.returncode == PASS, f"{alt.name}: checks exited {proc.returncode}:\n{proc.stderr}"


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_untouched_repo_state_fails(task, tmp_path):
    skip_unless_requirements(task)
    workspace = create_workspace(task / "repo-state", tmp_path / "ws")
    proc = run_checks(task, workspace)
    assert proc.returncode == FAIL, f"checks exited {proc.returncode}:\n{proc.stderr}"
    assert "FAIL" in proc.stderr, "a failing check must say why on stderr"


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_alternative_differs_from_reference_solution(task):
    """The alternative is really a second solution, not a copy of solution/."""
    alt = alt_solution(task)
    assert alt is not None
    references = [p.read_text() for p in (task / "solution").iterdir() if p.is_file()]
    assert alt.read_text() not in references
