"""Task verification: untouched state fails, solution/ passes, each negative fails, and the same
state gives the same verdict twice. Every check run gets a freshly built workspace; the check
runs of all tasks share one pool of threads (verify_tasks).

A task with a rubric is judged by checks AND rubric (run/grade.py): solution/ must pass both, a
negative fails when either fails. A task that declares fail_to_pass / pass_to_pass gets the
per-test table (outcomes on the untouched state and after solution/) and is refused when a
fail_to_pass test already passes on the untouched state or a pass_to_pass test does not."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.grading.testids import TestRow, verification_rows
from ci_eval.run.sandbox import scratch
from ci_eval.run.checks.scoring import CheckOutcome
from ci_eval.run.grade import Graded, graded, load_grading
from ci_eval.run.runners import LocalRunner, Runner
from ci_eval.run.sandbox import cancellation
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.run.workspace.build import WorkspaceError, WorkspaceFactory, remove_tree
from ci_eval.run.workspace.diff import workspace_diff
from ci_eval.tasks.lint_junit import checks_py_jest_problems
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
    errors = [o for o in outcomes if o.verdict is None]
    if errors:
        return f"{label}: checks error: {errors[0].reason}"
    statuses = [o.verdict for o in outcomes if o.verdict is not None]
    if len(set(statuses)) > 1:
        return f"{label}: nondeterministic checks ({' then '.join(statuses)} for the same state)"
    if statuses[0] != expected:
        if expected == "fail":
            return f"{label}: checks pass, expected fail"
        return f"{label}: checks fail, expected pass: {outcomes[0].reason}"
    return None


def _states(task: Task) -> list[tuple[str, Path | None, str, int]]:
    """(label, output to apply or None, expected status, times to run checks)."""
    states: list[tuple[str, Path | None, str, int]] = [("untouched repo-state", None, "fail", 2)]
    states.append(("solution/", task.solution_dir, "pass", 2))
    for negative in task.negatives():
        states.append((f"negatives/{negative.name}", negative, "fail", 1))
    return states


def verify_task(task: Task, isolation: Isolation, checks_env: tuple[str, ...] = (),
                runner: Runner | None = None) -> TaskVerification:
    """One task verified, its check runs one after another (verify_tasks for many at once)."""
    return next(verify_tasks([task], isolation, checks_env, lambda _: runner, jobs=1))


def verify_tasks(tasks: list[Task], isolation: Isolation, checks_env: tuple[str, ...] = (),
                 runner_for: Callable[[Task], Runner | None] = lambda _: None,
                 jobs: int = 1) -> Iterator[TaskVerification]:
    """Each task's verification, in the order of `tasks`, as soon as it is done. Every check run
    (each state of each task, each repetition) is a job of one pool of `jobs` threads: the
    negatives of a task are judged in parallel, and the last task's runs do not leave the other
    workers idle. Every check run still gets a freshly built workspace and a checks process of
    its own (its own hash seed). `runner_for(task)` (None: local) says where the workspace
    starts, how outputs apply, where checks run."""
    plans: list[_TaskPlan] = []
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        for task in tasks:
            plans.append(_TaskPlan(task, runner_for(task) or LocalRunner(isolation), checks_env))
            plans[-1].submit(pool)
        for plan in plans:
            yield plan.finish()
    except KeyboardInterrupt:  # ^C: the runs in flight are killed (a container with its client)
        cancellation.request()
        cancellation.kill_running()
        raise
    finally:  # stopped early (an error, ^C): the runs not started are not started
        pool.shutdown(wait=True, cancel_futures=True)
        for plan in plans:
            remove_tree(plan.base)


class _TaskPlan:
    """One task's check runs: submitted to the pool, then judged state by state."""

    def __init__(self, task: Task, runner: Runner, checks_env: tuple[str, ...]):
        self.task, self.runner, self.checks_env = task, runner, checks_env
        self.grading = load_grading(task)
        self.base = scratch.make("verify")
        self.workspaces = WorkspaceFactory(self.base / "templates")
        self.states = [state for state in _states(task) if state[1] is None or state[1].exists()]
        self.runs: list[list[Future]] = []

    def submit(self, pool: ThreadPoolExecutor) -> None:
        for index, (label, output, _, times) in enumerate(self.states):
            self.runs.append([pool.submit(self.check_run, index, label, output, repetition)
                              for repetition in range(times)])

    def check_run(self, index: int, label: str, output: Path | None,
                  repetition: int) -> tuple[Graded | str, float]:
        """(the graded outcome of one check run of a state, or the problem that stopped it;
        its seconds)."""
        started = time.monotonic()
        task, runner, base = self.task, self.runner, self.base
        workspace = base / f"state-{index}-{repetition}"
        try:
            start = runner.repo_state(task)
            self.workspaces.create(start, workspace)
            pristine = self.workspaces.pristine(
                start, workspace, base / f"{workspace.name}.pristine"
            ) if self.grading.rubric else None
            if output is not None:
                runner.apply_output(task, output, workspace)
        except WorkspaceError as exc:
            return f"{label}: workspace setup failed: {exc}", time.monotonic() - started
        diff = workspace_diff(pristine, workspace) if pristine else None
        checks = runner.checks(task, workspace, checks_dir=base / f"{workspace.name}.checks",
                               runs_base=base, extra_env=self.checks_env)
        outcome = Graded(checks) if diff is None else graded(self.grading, checks, diff)
        return outcome, time.monotonic() - started

    def finish(self) -> TaskVerification:
        """Wait for the task's check runs and judge them, state by state."""
        task = self.task
        result = TaskVerification(task=task.id)
        first_outcomes: dict[str, dict | None] = {}
        if not task.solution_dir.exists():
            result.problems.append("solution/: missing (every task needs a known-good output)")
        result.problems += checks_py_jest_problems(task.path / "checks.py")
        for (label, _, expected, _), runs in zip(self.states, self.runs):
            done = [run.result() for run in runs]
            result.seconds += sum(seconds for _, seconds in done)
            failed_setup = [outcome for outcome, _ in done if isinstance(outcome, str)]
            if failed_setup:
                result.problems.append(failed_setup[0])
                continue
            outcomes = [outcome for outcome, _ in done]
            result.states += 1
            problem = judge_state(label, expected, outcomes)
            if problem:
                result.problems.append(problem)
            _note_tests(result, self.grading.tests, label, outcomes, first_outcomes)
        remove_tree(self.base)
        if self.grading.tests is not None:
            result.tests, problems = verification_rows(self.grading.tests,
                                                       first_outcomes.get("untouched repo-state"),
                                                       first_outcomes.get("solution/"))
            result.problems += problems
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
