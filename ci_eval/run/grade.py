"""The run side of rubric grading: a task's declared tests and rubric read from its folder, a
checks outcome and a diff combined into one verdict, and `ci-eval grade`'s candidate patch judged
in a fresh workspace (the machinery of verify).

A task with a rubric passes only when its checks pass AND the rubric verdict is PASS. The
rubric is scored whenever the checks judged the agent's code (any outcome but INFRA, TASK_ERROR), so a run
that failed its checks still records its score. The diff is taken before the checks run, as in
a run: what the checks write into the workspace (hidden tests, restored files) is not the
agent's change.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.grading.rubric import RUBRIC_FILE, Rubric, task_grading
from ci_eval.grading.score import RubricResult, score, test_counts
from ci_eval.grading.testids import TestIds, passes
from ci_eval.output import read_user_file
from ci_eval.run.sandbox import scratch
from ci_eval.run.checks.scoring import CheckKind, CheckOutcome
from ci_eval.run.runners import LocalRunner, Runner
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.run.workspace.build import WorkspaceError, WorkspaceFactory, apply_patch, remove_tree
from ci_eval.run.workspace.diff import WorkspaceDiff, workspace_diff
from ci_eval.tasks.model import Task


@dataclass(frozen=True)
class TaskGrading:
    tests: TestIds | None  # the declared tests, from metadata.json or rubric.yaml
    rubric: Rubric | None  # None: the task has no rubric.yaml


_cache: dict[tuple, TaskGrading] = {}
_cache_lock = threading.Lock()


def load_grading(task: Task) -> TaskGrading:
    """The task's declared tests and rubric; UserError naming the file and the field. Read
    once per version of rubric.yaml (runs of one task share it)."""
    path = task.path / RUBRIC_FILE
    try:
        info = path.stat()
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
    except FileNotFoundError:
        stamp = None
    key = (str(task.path.resolve()), stamp,
           json.dumps({g: task.metadata.get(g) for g in ("fail_to_pass", "pass_to_pass")}))
    with _cache_lock:
        found = _cache.get(key)
    if found is not None:
        return found
    text = None
    if stamp is not None:
        try:
            text = read_user_file(path).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    tests, rubric = task_grading(task.metadata, text, metadata_source=task.metadata_path,
                                 rubric_source=path)
    loaded = TaskGrading(tests, rubric)
    with _cache_lock:
        _cache[key] = loaded
    return loaded


def check_gradings(tasks: list[Task]) -> None:
    """Load every task's rubric before anything runs: a broken rubric.yaml is bad input (exit
    2), never a crash halfway through."""
    for task in tasks:
        load_grading(task)


@dataclass(frozen=True)
class Graded:
    """A checks outcome with the rubric's verdict folded in."""

    checks: CheckOutcome
    rubric: RubricResult | None = None

    @property
    def status(self) -> str:
        if self.checks.status == "pass" and self.rubric is not None and not self.rubric.passed:
            return "fail"
        return self.checks.status

    @property
    def verdict(self) -> str | None:
        """"pass" / "fail", or None when the checks broke (verify reports broken checks)."""
        if self.checks.verdict is None:
            return None
        return "pass" if self.status == "pass" else "fail"

    @property
    def reason(self) -> str:
        if self.rubric is None:
            return self.checks.reason
        if self.checks.status == "pass":
            return self.rubric.summary if not self.rubric.passed else (
                f"{self.checks.reason}; {self.rubric.summary}")
        return f"{self.checks.reason}; {self.rubric.summary}"

    @property
    def test_outcomes(self) -> dict[str, str]:
        return self.checks.test_outcomes

    def record_fields(self) -> dict:
        if self.rubric is None:
            return {}
        return {"rubric_score": self.rubric.score, "rubric_verdict": self.rubric.verdict,
                "rubric_tripped": list(self.rubric.tripped),
                "rubric_auto_fail": list(self.rubric.auto_fail_tripped)}


def graded(grading: TaskGrading, checks: CheckOutcome, diff: WorkspaceDiff) -> Graded:
    if grading.rubric is None or checks.judged_nothing:
        return Graded(checks)
    return Graded(checks, score(grading.rubric, checks.test_outcomes, diff))


def with_rubric(task: Task, checks: CheckOutcome, diff: WorkspaceDiff,
                record: dict) -> tuple[str, str]:
    """For a run (run/runner.py): the run's status and reason with the task's rubric applied,
    the rubric's fields added to `record` (rubric_score, rubric_verdict, rubric_tripped,
    rubric_auto_fail). A task without rubric.yaml keeps its checks' status and reason."""
    result = graded(load_grading(task), checks, diff)
    record.update(result.record_fields())
    return result.status, result.reason


# --- `ci-eval grade` --------------------------------------------------------------------------


@dataclass
class GradeReport:
    task: str
    patch: str
    checks: CheckOutcome
    rubric: RubricResult | None
    tests_passed: int
    tests_total: int
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        rubric_ok = self.rubric is None or self.rubric.passed
        return "PASS" if self.checks.kind is CheckKind.PASS and rubric_ok else "FAIL"

    @property
    def score(self) -> float:
        """The rubric's score; without a rubric, 100.0 when the checks pass, else 0.0."""
        if self.rubric is not None:
            return self.rubric.score
        return 100.0 if self.checks.kind is CheckKind.PASS else 0.0

    @property
    def reasons(self) -> list[str]:
        found = []
        if self.checks.kind is not CheckKind.PASS:
            found.append(f"checks {self.checks.status}: {self.checks.reason}")
        if self.rubric is not None:
            found += self.rubric.reasons
        return found

    def to_json(self) -> dict:
        data = {"task": self.task, "patch": self.patch, "verdict": self.verdict,
                "score": self.score, "tests_passed": self.tests_passed,
                "tests_total": self.tests_total,
                "checks": {"status": self.checks.status, "reason": self.checks.reason},
                "rubric": self.rubric is not None, "reasons": self.reasons,
                "seconds": round(self.seconds, 2), "notes": self.notes}
        if self.rubric is not None:
            rubric = self.rubric.to_json()
            data.update(criteria=rubric["criteria"], auto_fail_tripped=rubric["auto_fail_tripped"],
                        outstanding_review=rubric["outstanding_review"],
                        pass_threshold=rubric["pass_threshold"])
        else:
            data.update(criteria=[{"id": "checks", "kind": "checks", "description":
                                   "the task's checks.py (this task has no rubric.yaml)",
                                   "weight": 1, "passed": self.checks.kind is CheckKind.PASS,
                                   "points": int(self.checks.kind is CheckKind.PASS),
                                   "reason": self.checks.reason, "auto_fail": False}],
                        auto_fail_tripped=[], outstanding_review=[], pass_threshold=100)
        return data


def grade_patch(task: Task, patch: Path, isolation: Isolation,
                checks_env: tuple[str, ...] = (), host_home: bool = False,
                runner: Runner | None = None) -> GradeReport:
    """Apply `patch` to a fresh workspace of the task, take the diff, run the checks in their
    sandbox (or the runner's container) and score the rubric. UserError when the patch does
    not apply or the checks could not be run at all (a missing requirement, the sandbox
    failing)."""
    runner = runner or LocalRunner(isolation, checks_host_home=host_home)
    started = time.monotonic()
    grading = load_grading(task)
    base = scratch.make("grade")
    try:
        workspaces = WorkspaceFactory(base / "templates")
        workspace = base / "workspace"
        try:
            start = runner.repo_state(task)
            workspaces.create(start, workspace)
            pristine = workspaces.pristine(start, workspace, base / "pristine")
        except WorkspaceError as exc:
            raise UserError(f"workspace setup failed: {exc}", path=task.repo_state) from None
        try:
            apply_patch(Path(patch).resolve(), workspace)
        except WorkspaceError as exc:
            raise UserError(str(exc).replace(f"{Path(patch).name} does not apply",
                                             "does not apply to the task's repo-state"),
                            path=patch, field="--patch") from None
        diff = workspace_diff(pristine, workspace)
        checks = runner.checks(task, workspace, checks_dir=base / "checks", runs_base=base,
                               extra_env=checks_env)
    finally:
        remove_tree(base)
    if checks.judged_nothing:
        raise UserError(f"the checks could not be run: {checks.reason}", path=task.checks_path)
    result = graded(grading, checks, diff)
    if grading.tests is not None:
        passed, total = test_counts(grading.tests, checks.test_outcomes)
    else:
        passed = sum(1 for outcome in checks.test_outcomes.values() if passes(outcome))
        total = len(checks.test_outcomes)
    return GradeReport(task.id, str(patch), checks, result.rubric, passed, total,
                       time.monotonic() - started, list(diff.notes))
