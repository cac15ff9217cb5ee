"""Task verification: untouched state fails, solution/ passes, each negative fails, and the same
state gives the same verdict twice. Every check run gets a freshly built workspace.

A task with a rubric is judged by checks AND rubric (run/grade.py): solution/ must pass both, a
negative fails when either fails. A task that declares fail_to_pass / pass_to_pass gets the
per-test table (outcomes on the untouched state and after solution/) and is refused when a
fail_to_pass test already passes on the untouched state or a pass_to_pass test does not."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.grading.testids import TestRow, verification_rows
from ci_eval.run.checks.scoring import CheckOutcome
from ci_eval.run.grade import Graded, graded, load_grading
from ci_eval.run.runners import LocalRunner, Runner
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.run.sandbox.views import TEMP_PREFIX
from ci_eval.run.workspace.build import WorkspaceError, WorkspaceFactory, remove_tree
from ci_eval.run.workspace.diff import workspace_diff
from ci_eval.tasks.model import Task


@dataclass
class TaskVerification:
    task: str
    problems: list[str] = field(default_factory=list)
    states: int = 0
    seconds: float = 0.0
    tests: list[TestRow] = field(default_factory=list)  # declared tests: base / golden outcomes
    rubric: list[dict] = field(default_factory=list)  # per state: its rubric score and verdict

    @property
    def valid(self) -> bool:
        return not self.problems

    def to_json(self) -> dict:
        return {"task": self.task, "valid": self.valid, "problems": self.problems,
                "states_checked": self.states, "seconds": round(self.seconds, 2),
                "tests": [row.to_json() for row in self.tests], "rubric": self.rubric}


def judge_state(label: str, expected: str, outcomes: list[CheckOutcome | Graded]) -> str | None:
    """The problem with one state's check outcomes, or None (pure). The outputs verified are
    the task author's, so checks that crash, hang or end without a verdict are broken checks."""
    statuses = [o.verdict for o in outcomes]
    errors = [o for o in outcomes if o.verdict is None]
    if errors:
        return f"{label}: checks error: {errors[0].reason}"
    if len(set(statuses)) > 1:
        return f"{label}: nondeterministic checks ({' then '.join(statuses)} for the same state)"
    if statuses[0] != expected:
        if expected == "fail":
            return f"{label}: checks pass, expected fail"
        return f"{label}: checks fail, expected pass: {outcomes[0].reason}"
    return None


def _states(task: Task) -> list[tuple[str, Path | None, str, int]]:
    """(label, output to apply or None, expected status, times to run checks)."""
    states = [("untouched repo-state", None, "fail", 2)]
    states.append(("solution/", task.solution_dir, "pass", 2))
    for negative in task.negatives():
        states.append((f"negatives/{negative.name}", negative, "fail", 1))
    return states


def verify_task(task: Task, isolation: Isolation, checks_env: tuple[str, ...] = (),
                runner: Runner | None = None) -> TaskVerification:
    """Every check run gets its own fresh workspace, repetitions of a state included. `runner`
    (default: local) says where the workspace starts, how outputs apply, where checks run."""
    runner = runner or LocalRunner(isolation)
    started = time.monotonic()
    result = TaskVerification(task=task.id)
    grading = load_grading(task)
    first_outcomes: dict[str, dict | None] = {}
    if not task.solution_dir.exists():
        result.problems.append("solution/: missing (every task needs a known-good output)")
    base = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX + "verify-"))
    workspaces = WorkspaceFactory(base / "templates")
    try:
        for index, (label, output, expected, times) in enumerate(_states(task)):
            if output is not None and not output.exists():
                continue
            outcomes = []
            for repetition in range(times):
                workspace = base / f"state-{index}-{repetition}"
                try:
                    start = runner.repo_state(task)
                    workspaces.create(start, workspace)
                    pristine = workspaces.pristine(
                        start, workspace, base / f"{workspace.name}.pristine"
                    ) if grading.rubric else None
                    if output is not None:
                        runner.apply_output(task, output, workspace)
                except WorkspaceError as exc:
                    result.problems.append(f"{label}: workspace setup failed: {exc}")
                    break
                diff = workspace_diff(pristine, workspace) if pristine else None
                checks = runner.checks(task, workspace, checks_dir=base / f"{workspace.name}.checks",
                                       runs_base=base, extra_env=checks_env)
                outcomes.append(Graded(checks) if diff is None else graded(grading, checks, diff))
            if len(outcomes) < times:
                continue
            result.states += 1
            problem = judge_state(label, expected, outcomes)
            if problem:
                result.problems.append(problem)
            _note_tests(result, grading.tests, label, outcomes, first_outcomes)
    finally:
        remove_tree(base)
    if grading.tests is not None:
        result.tests, problems = verification_rows(grading.tests,
                                                   first_outcomes.get("untouched repo-state"),
                                                   first_outcomes.get("solution/"))
        result.problems += problems
    result.seconds = time.monotonic() - started
    return result


def _note_tests(result: TaskVerification, tests, label: str, outcomes: list[Graded],
                first: dict) -> None:
    """Remember the state's declared test outcomes (and rubric score); the same state must give
    the same outcomes every time."""
    if outcomes[0].rubric is not None:
        result.rubric.append({"state": label, "score": outcomes[0].rubric.score,
                              "verdict": outcomes[0].rubric.verdict})
    if tests is None:
        return
    seen = [{t: o.test_outcomes.get(t) for t in tests.all} for o in outcomes]
    first[label] = outcomes[0].test_outcomes
    if any(s != seen[0] for s in seen[1:]):
        changed = next(t for t in tests.all if len({s[t] for s in seen}) > 1)
        result.problems.append(f"{label}: nondeterministic test outcomes ({changed}: "
                               f"{' then '.join(str(s[changed]) for s in seen)})")
