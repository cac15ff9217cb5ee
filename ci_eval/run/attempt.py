"""One try of a run: a fresh workspace, the agent, the checks, its results line.

The line is filled in as the try goes (AttemptLine) and closed once, with the status and the
reason, into an AttemptOutcome that run_one (runner.py) retries or records. The checks' sandbox is
built while the agent runs where both are sandboxed (prepare_checks), and the checks are tried
again, not the agent, while the harness could not run them (checks_with_retries). The attempt's
turn (slots.py) holds an agent slot until the diff is taken and a checks slot for the checks.
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ci_eval.agents.harness import no_harness
from ci_eval.output import mask
from ci_eval.results.records import RunStatus
from ci_eval.run.agent.start import AgentKind, AgentOutcome, RunPaths
from ci_eval.run.agent.usage import joined
from ci_eval.run.checks.scoring import CheckKind, CheckOutcome, ChecksRun
from ci_eval.run.context import RunContext
from ci_eval.run.grade import with_rubric
from ci_eval.run.runners import Runner, isolation_label
from ci_eval.run.sandbox import cancellation
from ci_eval.run.slots import Turn
from ci_eval.run.workspace.build import WorkspaceError, remove_tree
from ci_eval.run.workspace.diff import workspace_diff
from ci_eval.run.workspace.harness_files import lay_copy, lay_workspace, take_back
from ci_eval.tasks.model import Task


@dataclass(frozen=True)
class AttemptOutcome:
    record: dict
    retryable: bool = False  # an error another attempt may clear
    backoff: bool = False  # the provider said "not now": wait before the next attempt
    output: str = ""  # the agent's output (tail, secrets masked): the run's log


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class AttemptLine:
    """The results line of one try: started with what is known up front, the agent's part
    added once it ran, closed by finish() into the AttemptOutcome (its wall time from creation)."""

    def __init__(self, task: Task, run_no: int, attempt: int, ctx: RunContext, runner: Runner):
        self.started = time.monotonic()
        self.output = ""
        self.record = {
            "task": task.id, "run": run_no, "attempt": attempt, "agent": ctx.agent.identity,
            "prompt_hash": task.prompt_hash,
            "harness": (ctx.harness or no_harness(ctx.repo_root)).digest,
            "isolation": isolation_label(runner, ctx.isolation, ctx.agent.placement),
            "tokens": None, "input_tokens": None, "output_tokens": None, "cost_usd": None,
            "agent_seconds": None, "checks_seconds": None, "diff": None, "diff_truncated": False}

    def agent_ran(self, outcome: AgentOutcome) -> None:
        self.record["agent_seconds"] = round(outcome.seconds, 3)
        self.record["agent_exit_code"] = outcome.exit_code
        if outcome.outcome:
            self.record["agent_outcome"] = outcome.outcome
        self.record.update(outcome.usage or {})
        self.output = outcome.output

    def finish(self, status: RunStatus, reason: str, retryable: bool = False,
               backoff: bool = False) -> AttemptOutcome:
        """The line closed: a run that did not pass names the end of the agent's output."""
        if status != "pass" and self.output.strip():
            tail = " | ".join(line.strip() for line in self.output.strip().splitlines()[-3:])
            reason = joined(reason, f"agent output: …{mask(tail[-300:], cut_start=True)}")
        self.record.update(status=status, passed=status == "pass", reason=reason,
                           wall_seconds=round(time.monotonic() - self.started, 3),
                           timestamp=_now())
        return AttemptOutcome(self.record, retryable, backoff, self.output)


def run_attempt(task: Task, run_no: int, attempt: int, ctx: RunContext,
                turn: Turn | None = None) -> AttemptOutcome:
    """One try. The run's folders are removed afterwards unless ctx.keep. `turn`: the slots it
    holds (its agent slot is handed on for a checks slot before the checks; None: no slots).
    Raises cancellation.Cancelled when the invocation is cancelled: a step cut short by the kill
    is not a result."""
    cancellation.raise_if_cancelled()
    run_dir = Path(tempfile.mkdtemp(prefix=f"{task.id}-r{run_no}-a{attempt}-", dir=ctx.runs_base))
    paths = RunPaths(run_dir=run_dir, workspace=run_dir / "workspace")
    runner = ctx.runners.for_task(task)
    line = AttemptLine(task, run_no, attempt, ctx, runner)
    prepared = None
    try:
        try:
            start = runner.repo_state(task)
            ctx.workspaces.create(start, paths.workspace)
            pristine = ctx.workspaces.pristine(start, paths.workspace, paths.pristine)
            identity = _folder_identity(paths.workspace)
            paths.prompt_file.write_bytes(task.prompt_path.read_bytes())
        except (WorkspaceError, OSError) as exc:
            cancellation.raise_if_cancelled()
            return line.finish("error", f"workspace setup failed: {exc}", retryable=True)
        harness = ctx.harness if ctx.harness and ctx.harness.files else None
        if harness is not None:
            try:
                lay_workspace(harness, paths.workspace)
                lay_copy(harness, paths.harness_dir)
            except (WorkspaceError, OSError) as exc:
                return line.finish("error", f"harness not laid: {exc}")
        timeout = ctx.timeout_override or ctx.agent.timeout_seconds or task.agent_timeout
        prepared = prepare_checks(task, paths, ctx) if runner.name == "local" else None
        outcome = runner.run_agent(ctx.agent, task, run_no, paths, placement=ctx.agent.placement,
                                   repo_root=ctx.agent_root, runs_base=ctx.runs_base,
                                   timeout=timeout, isolation=ctx.isolation,
                                   hide=ctx.hidden, pricing=ctx.pricing,
                                   harness=harness)
        cancellation.raise_if_cancelled()
        line.agent_ran(outcome)
        if outcome.kind is AgentKind.INFRA:
            return line.finish("error", outcome.reason, outcome.retryable, backoff=outcome.backoff)
        if _folder_identity(paths.workspace) != identity:
            return line.finish("fail", "the agent replaced its workspace folder (a link, "
                               "another folder or nothing in its place): nothing to score")
        edited = take_back(harness, paths.workspace) if harness is not None else []
        diff = workspace_diff(pristine, paths.workspace)
        line.record["diff"], line.record["diff_truncated"] = diff.text, diff.truncated
        notes = [outcome.reason, *diff.notes]
        if edited:
            notes.append(f"the agent changed its harness (discarded before the checks): "
                         f"{', '.join(edited[:8])}" + (f" and {len(edited) - 8} more"
                                                       if len(edited) > 8 else ""))
        if outcome.kind is AgentKind.TIMEOUT:
            return line.finish("timeout", joined(*notes))
        with (turn or Turn(None)).checks():
            checks = checks_with_retries(task, paths, ctx, prepared)
        cancellation.raise_if_cancelled()
        line.record["checks_seconds"] = round(checks.seconds, 3)
        status, reason = with_rubric(task, checks, diff, line.record)
        return line.finish(status, joined(*notes, reason), checks.retryable)
    finally:
        if prepared is not None:
            prepared.abort()  # the run ended before its checks: nothing is run
        if not ctx.keep:
            _remove_later(ctx, paths.all_paths())


def _remove_later(ctx: RunContext, paths) -> None:
    for path in paths:
        try:
            ctx.cleaner.submit(remove_tree, path)
        except RuntimeError:  # the cleaner was shut down (cancelled): remove it here
            remove_tree(path)


def prepare_checks(task: Task, paths: RunPaths, ctx: RunContext) -> ChecksRun | None:
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
                         host_home=ctx.runners.local.checks_host_home).start()
    finally:
        os.close(held)


def checks_with_retries(task: Task, paths: RunPaths, ctx: RunContext,
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
            _remove_later(ctx, [checks_dir])


def _folder_identity(path: Path) -> tuple[int, int, bool] | None:
    """What the workspace folder is: an agent may swap it for a link or another folder, or
    remove it (None)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, stat.S_ISDIR(info.st_mode)
