"""Running tasks: per (task, run) a fresh workspace, the agent, the checks, one results line.

Infrastructure errors are retried up to `max_attempts`; the final line records the status, the
attempt count and the earlier errors' reasons. Runs go `jobs` at a time on threads (the work is in
subprocesses). A hook may ask for more runs of a task once its runs are in (confirmation).

Every line records `k` (the -k of the invocation that ran it) and `requested` (the valid runs asked
of the task when it was recorded: k, or the confirmation stage); summary.summarize reads them.

Cancellation (ci_eval.cancellation, set by SIGINT/SIGTERM): no new run starts, the commands in
flight are killed, runs that were killed are not recorded, and run_tasks returns what is recorded.
"""

from __future__ import annotations

import os
import random
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ci_eval.agents.budget import Budget
from ci_eval.agents.config import AgentConfig
from ci_eval.output import mask, write_atomic
from ci_eval.results import store as results_mod
from ci_eval.results.records import USAGE_FIELDS, RunStatus, bound_usage
from ci_eval.results.summary import count_runs
from ci_eval.run.agent.budget import RunBudget
from ci_eval.run.agent.retry import BACKOFF_BASE_SECONDS, backoff_delay
from ci_eval.run.agent.start import AgentKind, RunPaths, joined
from ci_eval.run.checks.scoring import CheckKind, CheckOutcome, ChecksRun
from ci_eval.run.grade import with_rubric
from ci_eval.run.resume import read_recorded
from ci_eval.run.runners import Runners, isolation_label
from ci_eval.run.sandbox import cancellation
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.run.workspace.build import WorkspaceError, WorkspaceFactory, remove_tree
from ci_eval.run.workspace.diff import workspace_diff
from ci_eval.tasks.model import Task


@dataclass
class RunContext:
    repo_root: Path
    out_dir: Path
    agent: AgentConfig
    isolation: Isolation
    runs_base: Path
    max_attempts: int = 3
    keep: bool = False
    timeout_override: float | None = None
    checks_env: tuple[str, ...] = ()
    write_lock: threading.Lock = field(default_factory=threading.Lock)
    workspaces: WorkspaceFactory | None = None
    pricing: dict = field(default_factory=dict)
    budget: RunBudget = field(default_factory=lambda: RunBudget(Budget()))
    backoff_base: float = BACKOFF_BASE_SECONDS
    rng: random.Random = field(default_factory=random.Random)
    runners: Runners | None = None  # each task's runner (default: local for every task)

    # Finished run folders are removed off the critical path, one at a time.
    cleaner: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="cleaner"))

    def __post_init__(self):
        if self.workspaces is None:
            self.workspaces = WorkspaceFactory(self.runs_base / "templates")
        if self.runners is None:
            self.runners = Runners.of(self.isolation, self.out_dir / LOGS / "images", None, None)


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Attempt:
    record: dict
    retryable: bool = False  # an error another attempt may clear
    backoff: bool = False  # the provider said "not now": wait before the next attempt
    output: str = ""  # the agent's output (tail, secrets masked): the run's log


def run_attempt(task: Task, run_no: int, attempt: int, ctx: RunContext) -> Attempt:
    """One try. The run's folders are removed afterwards unless ctx.keep.
    Raises cancellation.Cancelled when the invocation is cancelled: a step cut short by the kill
    is not a result."""
    cancellation.raise_if_cancelled()
    run_dir = Path(tempfile.mkdtemp(prefix=f"{task.id}-r{run_no}-a{attempt}-", dir=ctx.runs_base))
    paths = RunPaths(run_dir=run_dir, workspace=run_dir / "workspace")
    started = time.monotonic()
    prepared = None
    runner = ctx.runners.for_task(task)
    record = {"task": task.id, "run": run_no, "attempt": attempt, "agent": ctx.agent.identity,
              "prompt_hash": task.prompt_hash,
              "isolation": isolation_label(runner, ctx.isolation, ctx.agent.placement),
              "tokens": None, "input_tokens": None, "output_tokens": None, "cost_usd": None,
              "agent_seconds": None, "checks_seconds": None, "diff": None, "diff_truncated": False}
    try:
        try:
            start = runner.repo_state(task)
            ctx.workspaces.create(start, paths.workspace)
            pristine = ctx.workspaces.pristine(start, paths.workspace, paths.pristine)
            identity = _folder_identity(paths.workspace)
            paths.prompt_file.write_bytes(task.prompt_path.read_bytes())
        except (WorkspaceError, OSError) as exc:
            cancellation.raise_if_cancelled()
            return Attempt(_finish(record, "error", f"workspace setup failed: {exc}", started),
                           retryable=True)
        timeout = ctx.timeout_override or ctx.agent.timeout_seconds or task.agent_timeout
        prepared = _prepare_checks(task, paths, ctx) if runner.name == "local" else None
        outcome = runner.run_agent(ctx.agent, task, run_no, paths, placement=ctx.agent.placement,
                                   repo_root=ctx.repo_root, runs_base=ctx.runs_base,
                                   timeout=timeout, isolation=ctx.isolation,
                                   hide=(ctx.out_dir,), pricing=ctx.pricing)
        cancellation.raise_if_cancelled()
        record["agent_seconds"] = round(outcome.seconds, 3)
        record["agent_exit_code"] = outcome.exit_code
        if outcome.outcome:
            record["agent_outcome"] = outcome.outcome
        record.update(outcome.usage or {})
        log = outcome.output

        def done(status: RunStatus, reason: str, retryable: bool = False, backoff: bool = False):
            if status != "pass" and log.strip():
                tail = " | ".join(line.strip() for line in log.strip().splitlines()[-3:])
                reason = joined(reason, f"agent output: …{mask(tail[-300:], cut_start=True)}")
            return Attempt(_finish(record, status, reason, started), retryable, backoff, log)

        if outcome.kind is AgentKind.INFRA:
            return done("error", outcome.reason, outcome.retryable, backoff=outcome.backoff)
        if _folder_identity(paths.workspace) != identity:
            return done("fail", "the agent replaced its workspace folder (a link or another "
                        "folder in its place): nothing to score")
        diff = workspace_diff(pristine, paths.workspace)
        record["diff"], record["diff_truncated"] = diff.text, diff.truncated
        notes = [outcome.reason, *diff.notes]
        if outcome.kind is AgentKind.TIMEOUT:
            return done("timeout", joined(*notes))
        checks = _checks_with_retries(task, paths, ctx, prepared)
        cancellation.raise_if_cancelled()
        record["checks_seconds"] = round(checks.seconds, 3)
        status, reason = with_rubric(task, checks, diff, record)
        return done(status, joined(*notes, reason), checks.retryable)
    finally:
        if prepared is not None:
            prepared.abort()  # the run ended before its checks: nothing is run
        if not ctx.keep:
            for path in paths.all_paths():
                try:
                    ctx.cleaner.submit(remove_tree, path)
                except RuntimeError:  # the cleaner was shut down (cancelled): remove it here
                    remove_tree(path)


def _prepare_checks(task: Task, paths: RunPaths, ctx: RunContext) -> ChecksRun | None:
    """The checks' sandbox, built while the agent runs, when both are sandboxed (the agent, in
    its own PID namespace, cannot see the waiting process). It binds the workspace only while
    the path is still the folder of a descriptor opened now, before the agent could swap it."""
    if not (ctx.isolation.agent_sandboxed and ctx.isolation.checks_sandboxed):
        return None
    held = os.open(paths.workspace, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        return ChecksRun(task, paths.workspace, ctx.isolation, ctx.checks_env,
                         checks_dir=paths.checks_dir, runs_base=ctx.runs_base,
                         hide=(ctx.out_dir,), held=held,
                         host_home=ctx.runners.local.checks_host_home)
    finally:
        os.close(held)


def _checks_with_retries(task: Task, paths: RunPaths, ctx: RunContext,
                         prepared: ChecksRun | None = None) -> CheckOutcome:
    """The checks, tried again (not the agent: its workspace is intact) while the harness could
    not run them for a reason that may pass. A `prepared` sandbox is the first try; when it
    could not judge (the agent swapped its folder while it was built, say), the checks are
    built again after the agent, as the same try: what an agent does cannot turn its fail into
    an error."""
    for attempt in range(1, ctx.max_attempts + 1):
        if attempt == 1 and prepared is not None:
            checks = prepared.outcome()
            if checks.kind is CheckKind.INFRA:
                checks = _checks_in(Path(f"{paths.checks_dir}-again"), task, paths, ctx)
        else:
            checks_dir = paths.checks_dir if attempt == 1 else Path(f"{paths.checks_dir}-{attempt}")
            checks = _checks_in(checks_dir, task, paths, ctx, keep_dir=attempt == 1)
        if not (checks.kind is CheckKind.INFRA and checks.retryable):
            return checks
        cancellation.raise_if_cancelled()
    return checks


def _checks_in(checks_dir: Path, task: Task, paths: RunPaths, ctx: RunContext, *,
               keep_dir: bool = False) -> CheckOutcome:
    """The task's runner's checks with checks_dir; the folder is removed after, unless keep_dir
    (the run's own checks_dir: removed with the run) or --keep."""
    try:
        return ctx.runners.for_task(task).checks(
            task, paths.workspace, checks_dir=checks_dir, runs_base=ctx.runs_base,
            extra_env=ctx.checks_env, hide=(ctx.out_dir,))
    finally:
        if not (keep_dir or ctx.keep):
            ctx.cleaner.submit(remove_tree, checks_dir)


def _folder_identity(path: Path) -> tuple[int, int, bool]:
    """What the workspace folder is: an agent may swap it for a link or another folder."""
    info = os.lstat(path)
    return info.st_dev, info.st_ino, stat.S_ISDIR(info.st_mode)


def _finish(record: dict, status: RunStatus, reason: str, started: float) -> dict:
    record.update(status=status, passed=status == "pass", reason=reason,
                  wall_seconds=round(time.monotonic() - started, 3), timestamp=_now())
    return record


def run_one(task: Task, run_no: int, ctx: RunContext) -> dict | None:
    """A run with bounded retries of infrastructure errors; the final record, with the usage of
    every attempt summed (what the earlier ones cost in `retried_cost_usd`) and the delays waited
    between them. None when the budget let no attempt start (nothing is recorded)."""
    earlier_errors, delays, spent = [], [], {name: None for name in USAGE_FIELDS}
    for attempt in range(1, ctx.max_attempts + 1):
        if ctx.budget.try_start() is not None:
            if attempt == 1:
                return None
            break  # the earlier attempt's error stands
        tried = run_attempt(task, run_no, attempt, ctx)
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
LOGS = "logs"


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


def _started(progress, task: Task, run_no: int, ctx: RunContext) -> dict | None:
    """run_one on a worker thread, counted as in flight while it runs."""
    if progress:
        progress.run_started()
    return run_one(task, run_no, ctx)


POLL_SECONDS = 0.1  # how soon the run loop notices a cancellation
CANCEL_GRACE_SECONDS = 5.0  # how long it waits for killed runs to wind down


def run_tasks(tasks: list[Task], k: int, jobs: int, ctx: RunContext, *,
              progress=None, more_runs: MoreRunsHook | None = None,
              recorded: dict[str, list[dict]] | None = None) -> dict[str, list[dict]]:
    """Run each task until it has k recorded runs (resuming `recorded`, task id -> records;
    default: what ctx.out_dir holds), then ask `more_runs` whether a task needs extra runs
    (confirmation). Returns task id -> records.
    When cancelled (cancellation.cancelled()) it returns early with the runs recorded so far;
    the flag stays set until cancellation.reset() (cancellation.on_signals resets it)."""
    if recorded is None:
        recorded = {task_id: found.records
                    for task_id, found in read_recorded(tasks, ctx.out_dir).items()}
    records = {task.id: list(recorded.get(task.id, [])) for task in tasks}
    by_id = {task.id: task for task in tasks}
    outstanding = {task.id: 0 for task in tasks}
    target = {task.id: k for task in tasks}  # run numbers 1..target
    asked = {task.id: k for task in tasks}  # valid runs asked: k, or the confirmation stage
    pool = ThreadPoolExecutor(max_workers=jobs)
    futures = {}

    def schedule(task: Task) -> None:
        done = {r["run"] for r in records[task.id]}
        for run_no in range(1, target[task.id] + 1):
            if run_no not in done:
                futures[pool.submit(_started, progress, task, run_no, ctx)] = task.id
                outstanding[task.id] += 1
        if outstanding[task.id] == 0:
            finished(task)

    def finished(task: Task) -> None:
        extra = more_runs(task, records[task.id]) if more_runs else 0
        if extra > 0:
            asked[task.id] = count_runs(records[task.id]).valid + extra
            target[task.id] = len(records[task.id]) + extra
            if progress:
                progress.confirming(task.id, target[task.id], extra)
            schedule(task)
        elif progress:
            progress.task_done(task.id, records[task.id])

    def collect(future) -> bool:
        """Record a finished run; False when there is nothing to record (cancelled)."""
        task_id = futures.pop(future)
        outstanding[task_id] -= 1
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
        record["k"] = k
        record["requested"] = asked[task_id]
        with ctx.write_lock:
            results_mod.append_record(results_mod.results_path(ctx.out_dir, task_id), record)
        records[task_id].append(record)
        if progress:
            progress.run_done(record)
        return True

    try:
        if progress:
            progress.start(tasks, sum(max(0, k - len(records[t.id])) for t in tasks))
        for task in tasks:
            if cancellation.cancelled():
                break
            schedule(task)
        while futures and not cancellation.cancelled():
            done, _ = wait(futures, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            for future in done:
                task_id = futures[future]
                if collect(future) and outstanding[task_id] == 0 and not cancellation.cancelled():
                    finished(by_id[task_id])
        if cancellation.cancelled():
            _wind_down(pool, futures, collect)
    except BaseException:  # a bug, or KeyboardInterrupt outside `cancellation.on_signals`
        cancellation.request()
        pool.shutdown(wait=False, cancel_futures=True)
        cancellation.kill_running()
        raise
    finally:
        cancelling = cancellation.cancelled()
        pool.shutdown(wait=not cancelling, cancel_futures=cancelling)
        ctx.cleaner.shutdown(wait=not cancelling, cancel_futures=cancelling)
        if progress:
            progress.close()
    return records


def _wind_down(pool: ThreadPoolExecutor, futures: dict, collect) -> None:
    """Cancelled: drop the queued runs, kill the commands in flight, record the runs that had
    finished, and give the killed ones a moment to end (they are not recorded)."""
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + CANCEL_GRACE_SECONDS
    while futures and time.monotonic() < deadline:
        cancellation.kill_running()  # again each round: a command may have started meanwhile
        done, _ = wait(futures, timeout=POLL_SECONDS)
        # a future cancelled while queued never counts as done for wait(): take it here
        for future in done | {f for f in futures if f.done()}:
            collect(future)
