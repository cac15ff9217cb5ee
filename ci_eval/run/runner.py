"""Running tasks: per (task, run) a fresh workspace, the agent, the checks, one results line.

Infrastructure errors are retried up to `max_attempts` (run_one; one try is attempt.py's); the
final line records the status, the attempt count and the earlier errors' reasons. Runs go on
threads (the work is in subprocesses): `jobs` agents at a time, and the checks of the runs whose
agent is done beside them, as many as the cores (slots.py). A hook may ask for more runs of a
task once its runs are in (confirmation).

Every line records `k` (the -k of the invocation that ran it) and `requested` (the valid runs asked
of the task when it was recorded: k, or the confirmation stage); summary.summarize reads them.

Cancellation (sandbox/cancellation.py, set by SIGINT/SIGTERM): no new run starts, the commands in
flight are killed, runs that were killed are not recorded, and run_tasks returns what is recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from ci_eval.output import mask, write_atomic
from ci_eval.results import store as results_mod
from ci_eval.results.control_arm import mark
from ci_eval.results.records import USAGE_FIELDS, bound_usage
from ci_eval.results.summary import count_runs
from ci_eval.run.agent.retry import backoff_delay
from ci_eval.run.agent.usage import joined
from ci_eval.run.attempt import run_attempt
from ci_eval.run.context import LOGS, RunContext
from ci_eval.run.resume import read_recorded
from ci_eval.run.sandbox import cancellation
from ci_eval.run.slots import RunSlots, unbounded_turn
from ci_eval.tasks.model import Task


def run_one(task: Task, run_no: int, ctx: RunContext, slots: RunSlots | None = None,
            on_start: Callable[[], None] | None = None) -> dict | None:
    """A run with bounded retries of infrastructure errors; the final record, with the usage of
    every attempt summed (what the earlier ones cost in `retried_cost_usd`) and the delays waited
    between them. None when the budget let no attempt start (nothing is recorded).
    Each attempt waits for an agent slot of `slots` (none: it waits for nothing); on_start is
    called once the first attempt has one and the budget let it start."""
    earlier_errors, delays, spent = [], [], {name: None for name in USAGE_FIELDS}
    for attempt in range(1, ctx.max_attempts + 1):
        with slots.agent_turn() if slots is not None else unbounded_turn() as turn:
            if ctx.budget.try_start() is not None:
                if attempt == 1:
                    return None
                break  # the earlier attempt's error stands
            if attempt == 1 and on_start is not None:
                on_start()
            tried = run_attempt(task, run_no, attempt, ctx, turn)
        record = tried.record
        ctx.budget.charge(record.get("cost_usd"))
        _write_log(ctx, task, run_no, tried.output)
        last = (record["status"] != "error" or not tried.retryable
                or attempt == ctx.max_attempts)
        if not last:
            earlier_errors.append(record["reason"])
            spent = {name: _add(spent[name], record.get(name)) for name in USAGE_FIELDS}
            if tried.backoff:
                delays.append(round(backoff_delay(attempt, ctx.rng, base=ctx.backoff_base), 3))
                if cancellation.sleep(delays[-1]):
                    raise cancellation.Cancelled()
            continue
        break
    record["retried_errors"] = earlier_errors
    if delays:
        record["retry_delays_seconds"] = delays
    if spent["cost_usd"] is not None:
        record["retried_cost_usd"] = round(spent["cost_usd"], 8)
    for name in USAGE_FIELDS:
        if spent[name] is not None:
            record[name] = _add(record.get(name), spent[name])
    dropped = bound_usage(record)
    if dropped:
        record["reason"] = joined(record.get("reason", ""), *dropped)
    return record


def _add(a, b):
    return b if a is None else a if b is None else a + b


LOG_CAP_BYTES = 256 * 1024  # of a run's agent output kept in results/logs (the end of it)


def _write_log(ctx: RunContext, task: Task, run_no: int, output: str) -> None:
    """results/logs/<task>/<run>.log: the end of what the agent printed (secrets masked)."""
    if not output:
        return
    data = output.encode("utf-8", errors="replace")
    text = data.decode("utf-8", errors="replace")
    if len(data) > LOG_CAP_BYTES:
        text = ("[ci-eval: log cut to its last 256 KiB]\n"
                + mask(data[-LOG_CAP_BYTES:].decode("utf-8", errors="replace"), cut_start=True))
    folder = ctx.out_dir / LOGS / task.id
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / f"{run_no}.log", text, field=None)


MoreRunsHook = Callable[[Task, list[dict]], int]
# (task, the PR's records, the control arm's records) -> (more PR runs, more control runs)
ArmsHook = Callable[[Task, list[dict], list[dict]], tuple[int, int]]


@dataclass
class ControlArm:
    """The control arm of an invocation (`run --control-ref`): its context (ctx.arm set,
    ctx.out_dir its own folder), what it recorded before (--resume), and the hook that decides
    both arms' further runs once a task's runs of both arms are in."""

    ctx: RunContext
    recorded: dict[str, list[dict]]
    more_runs: ArmsHook


@dataclass
class TaskLedger:
    """One task's runs in this invocation: those recorded, how many are in flight, and what is
    asked of it (run numbers 1..target; `asked` valid runs: k, or the confirmation stage)."""

    task: Task
    records: list[dict]
    target: int
    asked: int
    in_flight: int = 0
    ctx: RunContext | None = None  # another arm's context (None: the invocation's)

    def missing(self) -> list[int]:
        """The run numbers up to the target that have no record."""
        done = {record["run"] for record in self.records}
        return [run_no for run_no in range(1, self.target + 1) if run_no not in done]

    def confirm(self, extra: int) -> None:
        """`extra` more runs asked once the task's runs are in (confirmation)."""
        self.asked = count_runs(self.records).valid + extra
        self.target = len(self.records) + extra


def _numbered(records: list[dict]) -> int:
    """The highest run number recorded (a resumed arm's target), 0 for none."""
    return max((record["run"] for record in records), default=0)


def _started(progress, task: Task, run_no: int, ctx: RunContext,
             slots: RunSlots) -> dict | None:
    """run_one on a worker thread, counted as in flight once its agent has a slot."""
    return run_one(task, run_no, ctx, slots, progress.run_started if progress else None)


POLL_SECONDS = 0.1  # how soon the run loop notices a cancellation
CANCEL_GRACE_SECONDS = 5.0  # how long it waits for killed runs to wind down


class RunLoop:
    """The runs of an invocation on a pool of threads, `jobs` agents and the checks slots' worth
    of checks at once (slots.py): which run of which task is in flight (a future per run), what
    its result line becomes once it is in, and when a task's runs are all in (the confirmation
    hook may then ask for more)."""

    def __init__(self, tasks: list[Task], k: int, jobs: int, ctx: RunContext, *, progress,
                 more_runs: MoreRunsHook | None, recorded: dict[str, list[dict]],
                 control: ControlArm | None = None, checks_jobs: int | None = None):
        self.tasks, self.k, self.ctx = tasks, k, ctx
        self.progress, self.more_runs, self.control = progress, more_runs, control
        self.runs = {task.id: TaskLedger(task, list(recorded.get(task.id, [])), target=k, asked=k)
                     for task in tasks}
        self.control_runs = {}
        if control is not None:
            for task in tasks:
                found = list(control.recorded.get(task.id, []))
                self.control_runs[task.id] = TaskLedger(
                    task, found, target=_numbered(found), asked=count_runs(found).valid,
                    ctx=control.ctx)
        self.slots = RunSlots(jobs, checks_jobs)
        self.pool = ThreadPoolExecutor(max_workers=self.slots.threads)
        self.futures: dict[Future, TaskLedger] = {}

    def run(self) -> dict[str, list[dict]]:
        try:
            if self.progress:
                self.progress.start(self.tasks, sum(max(0, self.k - len(self.runs[t.id].records))
                                                    for t in self.tasks))
            for task in self.tasks:
                if cancellation.cancelled():
                    break
                self._schedule(*self._arms(task.id))
            while self.futures and not cancellation.cancelled():
                done, _ = wait(self.futures, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                for future in done:
                    runs = self.futures[future]
                    if (self._collect(future) and runs.in_flight == 0
                            and not cancellation.cancelled()):
                        self._finished(runs)
            if cancellation.cancelled():
                self._wind_down()
        except BaseException:  # a bug, or KeyboardInterrupt outside `cancellation.on_signals`
            cancellation.request()
            self.pool.shutdown(wait=False, cancel_futures=True)
            cancellation.kill_running()
            raise
        finally:
            cancelling = cancellation.cancelled()
            self.pool.shutdown(wait=not cancelling, cancel_futures=cancelling)
            self.ctx.cleaner.shutdown(wait=not cancelling, cancel_futures=cancelling)
            if self.progress:
                self.progress.close()
        return {task_id: runs.records for task_id, runs in self.runs.items()}

    def _arms(self, task_id: str) -> tuple[TaskLedger, ...]:
        """A task's runs of each arm: the PR's, and the control arm's when there is one."""
        control = self.control_runs.get(task_id)
        return (self.runs[task_id],) if control is None else (self.runs[task_id], control)

    def _schedule(self, *arms: TaskLedger) -> None:
        """Submit every missing run of the task's arms, alternating between the arms (so both
        see the same hours of the model)."""
        queues = [[(runs, run_no) for run_no in runs.missing()] for runs in arms]
        longest = max(len(queue) for queue in queues)
        for index in range(longest):
            for queue in queues:
                if index < len(queue):
                    runs, run_no = queue[index]
                    future = self.pool.submit(_started, self.progress, runs.task, run_no,
                                              runs.ctx or self.ctx, self.slots)
                    self.futures[future] = runs
                    runs.in_flight += 1
        if all(runs.in_flight == 0 for runs in arms):
            self._finished(arms[0])

    def _finished(self, runs: TaskLedger) -> None:
        if self.control is not None:
            self._finished_arms(*self._arms(runs.task.id))
            return
        extra = self.more_runs(runs.task, runs.records) if self.more_runs else 0
        if extra > 0:
            runs.confirm(extra)
            if self.progress:
                self.progress.confirming(runs.task.id, runs.target, extra)
            self._schedule(runs)
        elif self.progress:
            self.progress.task_done(runs.task.id, runs.records)

    def _finished_arms(self, runs: TaskLedger, control: TaskLedger) -> None:
        """Once neither arm of the task has a run in flight: the hook's further runs of each."""
        if runs.in_flight or control.in_flight or self.control is None:
            return
        more, more_control = self.control.more_runs(runs.task, runs.records, control.records)
        if more > 0 or more_control > 0:
            for arm, extra in ((runs, more), (control, more_control)):
                if extra > 0:
                    arm.confirm(extra)
            if self.progress:
                self.progress.confirming(runs.task.id, runs.target + control.target,
                                         max(more, 0) + max(more_control, 0))
            self._schedule(runs, control)
        elif self.progress:
            self.progress.task_done(runs.task.id, runs.records)

    def _collect(self, future: Future) -> bool:
        """Record a finished run; False when there is nothing to record (cancelled)."""
        runs = self.futures.pop(future)
        runs.in_flight -= 1
        if future.cancelled():
            return False
        try:
            record = future.result()
        except cancellation.Cancelled:
            return False
        if record is None:  # the budget let it not start
            return False
        if cancellation.cancelled() and record["status"] == "error":
            return False  # may be the interrupt itself (a killed git); --resume reruns it
        record["k"] = self.k
        record["requested"] = runs.asked
        if runs.ctx is not None:
            mark(record)
        ctx = runs.ctx or self.ctx
        with ctx.write_lock:
            results_mod.append_record(results_mod.results_path(ctx.out_dir, runs.task.id),
                                      record)
        runs.records.append(record)
        if self.progress:
            self.progress.run_done(record)
        return True

    def _wind_down(self) -> None:
        """Cancelled: drop the queued runs, kill the commands in flight, record the runs that
        had finished, and give the killed ones a moment to end (they are not recorded)."""
        self.pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + CANCEL_GRACE_SECONDS
        while self.futures and time.monotonic() < deadline:
            cancellation.kill_running()  # again each round: a command may have started meanwhile
            done, _ = wait(self.futures, timeout=POLL_SECONDS)
            # a future cancelled while queued never counts as done for wait(): take it here
            for future in done | {f for f in self.futures if f.done()}:
                self._collect(future)


def run_tasks(tasks: list[Task], k: int, jobs: int, ctx: RunContext, *,
              progress=None, more_runs: MoreRunsHook | None = None,
              recorded: dict[str, list[dict]] | None = None,
              control: ControlArm | None = None,
              checks_jobs: int | None = None) -> dict[str, list[dict]]:
    """Run each task until it has k recorded runs (resuming `recorded`, task id -> records;
    default: what ctx.out_dir holds), then ask `more_runs` whether a task needs extra runs
    (confirmation). Returns task id -> records.
    When cancelled (cancellation.cancelled()) it returns early with the runs recorded so far;
    the flag stays set until cancellation.reset() (cancellation.on_signals resets it).
    `control`: the control arm; its runs are written to its own folder (control.ctx.out_dir),
    marked, and `control.more_runs` replaces `more_runs`.
    `jobs` agents run at once, and `checks_jobs` checks beside them (default: the cores)."""
    if recorded is None:
        recorded = {task_id: found.records
                    for task_id, found in read_recorded(tasks, ctx.out_dir).items()}
    return RunLoop(tasks, k, jobs, ctx, progress=progress, more_runs=more_runs,
                   recorded=recorded, control=control, checks_jobs=checks_jobs).run()
