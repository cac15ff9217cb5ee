"""ChecksRun's steps (run/checks/scoring.py): the constructor only stores, start() starts,
outcome() judges once, and the state is one explicit type at each step. Unsandboxed here
(Isolation without sandboxes): the steps are the same with a sandbox (test_prepared_checks.py)."""

from __future__ import annotations

import pytest
from harness_helpers import task_with_workspace, write_task

from ci_eval.run.checks.scoring import (
    CheckKind,
    ChecksRun,
    Decided,
    Ended,
    Launched,
    NotStarted,
)
from ci_eval.run.sandbox.isolation import UNISOLATED
from ci_eval.tasks.load import load_task

PASSING = "import sys\nsys.exit(0)\n"


def _checks(tmp_path, checks=PASSING, metadata=None):
    task, workspace, runs = task_with_workspace(tmp_path, checks)
    if metadata:
        task = load_task(write_task(tmp_path / "other", checks=checks, metadata=metadata).resolve())
    return ChecksRun(task, workspace, UNISOLATED, checks_dir=runs / "run.checks",
                     runs_base=runs), runs / "run.checks"


def test_the_constructor_only_stores_and_start_starts(tmp_path):
    checks, checks_dir = _checks(tmp_path)
    assert isinstance(checks.state, NotStarted) and not checks_dir.exists()
    with pytest.raises(RuntimeError, match="no checks to judge"):
        checks.outcome()
    assert checks.start() is checks and isinstance(checks.state, Launched)
    assert (checks_dir / "reports").is_dir()
    with pytest.raises(RuntimeError, match="already started"):
        checks.start()
    outcome = checks.outcome()
    assert outcome.kind is CheckKind.PASS, outcome
    assert isinstance(checks.state, Ended)
    checks.abort()  # ended: nothing left to end
    with pytest.raises(RuntimeError, match="no checks to judge"):
        checks.outcome()


def test_an_unmet_requirement_decides_the_outcome_without_starting_anything(tmp_path):
    """A run sees an infrastructure error (not a fail, not retried) whose reason names the
    missing tool; checks.py never ran (it would have passed and left a mark)."""
    marking = "import pathlib, sys\npathlib.Path('checks-ran').write_text('')\nsys.exit(0)\n"
    checks, _ = _checks(tmp_path, checks=marking,
                        metadata={"requires": ["no-such-tool-ci-eval"]})
    checks.start()
    assert isinstance(checks.state, Decided)
    outcome = checks.outcome()
    assert (outcome.kind, outcome.status, outcome.verdict, outcome.retryable) == (
        CheckKind.INFRA, "error", None, False), outcome
    assert outcome.reason == "requires not met: command not found: no-such-tool-ci-eval"
    assert not (checks.workspace / "checks-ran").exists()
    assert checks.outcome() == outcome  # decided: the same outcome, nothing to close
    checks.abort()
    assert isinstance(checks.state, Decided)


def test_an_aborted_run_ends_with_no_outcome(tmp_path):
    """Unsandboxed the checks start at once (the gate is the sandbox's: test_prepared_checks.py
    shows nothing runs there); abort() follows the process to its end and closes the run."""
    checks, _ = _checks(tmp_path)
    checks.start().abort()
    assert isinstance(checks.state, Ended)
    checks.abort()  # twice is fine
    with pytest.raises(RuntimeError, match="no checks to judge"):
        checks.outcome()
