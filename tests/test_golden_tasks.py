"""The golden tasks in tasks/ judge behaviour, not the text of one fix, and cannot be gamed.

For every task, a second correct solution written differently from solution/ is kept in
tests/fixtures/alt-solutions/<task-id>.patch (or .sh); further correct variants, each making a
point about what the checks must accept, are <task-id>--<variant>.patch (e.g. task-001's ruff
settings in ruff.toml). In a fresh workspace built the way the harness builds it, each must pass
checks.py. `ci-eval verify` covers the untouched repo-state (twice), solution/ and negatives/
(tests/test_bundled_suite.py, whose noop run also shows every untouched state's FAIL lines);
this covers the rest, and that every task ships at least one gaming negative
(negatives/game-*: aimed at the checks' surface, see tasks/README.md) besides the named defects.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from ci_eval.run.checks.scoring import run_checks
from ci_eval.run.sandbox import isolation
from ci_eval.run.workspace.build import apply_output, create_workspace
from ci_eval.tasks.load import load_task

ROOT = Path(__file__).resolve().parent.parent
TASKS = sorted(p for p in (ROOT / "tasks").glob("task-*") if p.is_dir())
ALT_DIR = Path(__file__).resolve().parent / "fixtures" / "alt-solutions"


def variant_solutions() -> list[Path]:
    return sorted(p for p in ALT_DIR.iterdir() if "--" in p.name)


def variant_task(variant: Path) -> Path:
    return ROOT / "tasks" / variant.name.split("--", 1)[0]


def alt_solution(task: Path) -> Path | None:
    for suffix in (".patch", ".diff", ".sh"):
        candidate = ALT_DIR / f"{task.name}{suffix}"
        if candidate.exists():
            return candidate
    return None


def score(task_dir: Path, workspace: Path):
    """The harness's own scoring: allow-listed env, no network, crash-detecting wrapper."""
    checks_dir = Path(tempfile.mkdtemp(dir=workspace.parent)) / "checks"  # one per checks run
    return run_checks(load_task(task_dir), workspace, isolation.detect(),
                      checks_dir=checks_dir, runs_base=workspace.parent)


def test_there_are_twenty_one_golden_tasks():
    assert len(TASKS) == 21
    assert [int(p.name.split("-")[1]) for p in TASKS] == list(range(1, 22))


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_alternative_solution_passes(task, tmp_path):
    alt = alt_solution(task)
    assert alt is not None, f"no alternative solution for {task.name} in {ALT_DIR}"
    workspace = create_workspace(task / "repo-state", tmp_path / "ws")
    apply_output(alt, workspace)
    outcome = score(task, workspace)
    assert outcome.status == "pass", f"{alt.name}: {outcome.status}: {outcome.reason}"


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_alternative_differs_from_reference_solution(task):
    """The alternative is really a second solution, not a copy of solution/."""
    alt = alt_solution(task)
    assert alt is not None
    references = [p.read_text() for p in (task / "solution").iterdir() if p.is_file()]
    assert alt.read_text() not in references


@pytest.mark.parametrize("variant", variant_solutions(), ids=lambda p: p.name)
def test_variant_solution_passes(variant, tmp_path):
    task = variant_task(variant)
    assert task.is_dir(), f"{variant.name} names no task (expected <task-id>--<variant>.<ext>)"
    workspace = create_workspace(task / "repo-state", tmp_path / "ws")
    apply_output(variant, workspace)
    outcome = score(task, workspace)
    assert outcome.status == "pass", f"{variant.name}: {outcome.status}: {outcome.reason}"


def test_ruff_settings_outside_pyproject_are_accepted():
    """Issue 14: task-001 must accept any configuration ruff honours."""
    names = {p.name for p in variant_solutions()}
    assert {"task-001-stop-hook-blocks-on-ruff--ruff-toml.patch",
            "task-001-stop-hook-blocks-on-ruff--dot-ruff-toml.patch"} <= names
    assert "task-004-pagination-drops-last-page--no-page-count-helper.patch" in names


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_every_task_has_a_gaming_negative(task):
    gaming = [p for p in (task / "negatives").glob("game-*") if p.suffix in (".patch", ".sh")]
    assert gaming, f"{task.name}: no negatives/game-* (a fix aimed at the checks' surface)"


# The wrong-but-passing fixes named in issue 14, each kept as a negative that verify must fail
# (tests/test_bundled_suite.py runs verify, which runs every negative's checks: not again here).
NAMED_DEFECTS = {
    "task-003-retry-after-http-dates": ["zoneless-date-read-as-local-time.patch"],
    "task-005-flaky-worker-test-without-sleep": ["game-compare-as-set-misses-reordering.patch"],
    "task-007-guard-hook-destructive-commands": ["rm-needs-both-recursive-and-force.patch",
                                                 "ignores-sudo.patch"],
    "task-009-ci-workflow-python-matrix": ["lint-piped-through-tee-under-sh.patch"],
    "task-001-stop-hook-blocks-on-ruff": ["game-imitate-e501-without-ruff.patch"],
}


@pytest.mark.parametrize("task_name", sorted(NAMED_DEFECTS))
def test_named_defects_are_kept_as_negatives(task_name):
    task = ROOT / "tasks" / task_name
    for name in NAMED_DEFECTS[task_name]:
        assert (task / "negatives" / name).is_file(), f"{task_name}: negatives/{name} is missing"


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kolkata", "America/New_York", "IST-5:30"])
def test_retry_after_verdict_does_not_depend_on_the_host_zone(zone, tmp_path, monkeypatch):
    """task-003 under any host TZ (passed through to the checks): the solution passes, the fix
    that reads a zone-less date as local time fails."""
    monkeypatch.setenv("TZ", zone)
    task = ROOT / "tasks" / "task-003-retry-after-http-dates"
    for output, expected in [(task / "solution", "pass"),
                             (task / "negatives" / "zoneless-date-read-as-local-time.patch", "fail")]:
        workspace = create_workspace(task / "repo-state", tmp_path / output.name)
        apply_output(output, workspace)
        outcome = run_checks(load_task(task), workspace, isolation.detect(), ("TZ",),
                             checks_dir=tmp_path / f"{output.name}.checks", runs_base=tmp_path)
        assert outcome.status == expected, f"TZ={zone} {output.name}: {outcome.reason}"
        assert os.environ["TZ"] == zone
