"""One `ci-eval run` invocation: the options in (RunRequest), the runs recorded and their
summaries out (RunOutcome).

In order: the agent resolved (--agent, --agent-cmd, --agent-env), the tasks loaded and cut to
--shard, the preflight (run/preflight.py: exit 2 before any agent run, also written to
--setup-problem-file), the confirmation hook (--confirm-against) and the control arm
(--control-ref), then under the results folder's lock what it already holds taken over by
--resume / --fresh (run/take_over.py), the run's context built and the runs run
(run/runner.run_tasks). Rendering the report and the exit code is the command's."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ci_eval.agents.config import inline_agent
from ci_eval.agents.config_file import Config, load_config, resolve_agent
from ci_eval.errors import EXIT_FAILED, EXIT_OK, UserError
from ci_eval.output import ensure_dir
from ci_eval.progress import Progress
from ci_eval.results import setup_problem
from ci_eval.results import store as results
from ci_eval.results.control_arm import control_dir
from ci_eval.results.history import load_history
from ci_eval.results.notices import isolation_notices
from ci_eval.results.summary import TaskSummary, summarize
from ci_eval.run.agent.budget import RunBudget
from ci_eval.run.agent.retry import BACKOFF_BASE_SECONDS
from ci_eval.run.agent.problem import agent_problem
from ci_eval.run.context import LOGS, RunContext
from ci_eval.run.control_ref import control_arm
from ci_eval.run.preflight import checked_harness, preflight, results_dir, with_env
from ci_eval.run.runner import ControlArm, run_tasks
from ci_eval.run.runners import Runners
from ci_eval.run.sandbox import cancellation, isolation
from ci_eval.run.shards import select_shard
from ci_eval.run.take_over import take_over, take_over_control_arm
from ci_eval.run.workspace.build import make_runs_base, remove_tree
from ci_eval.tasks.load import load_tasks
from ci_eval.tasks.model import task_folders
from ci_eval.verdict.baseline import load_baseline, recorded_walls
from ci_eval.verdict.confirmation import DEFAULT_STAGES, confirmation_hook, parse_stages
from ci_eval.verdict.control import arms_hook
from ci_eval.verdict.main_record import references_of


@dataclass(frozen=True)
class RunRequest:
    """`ci-eval run`'s options (the names of its argparse destinations)."""

    root: str
    tasks: list[str] | None = None
    agent: str | None = None
    agent_cmd: str | None = None
    agent_env: list[str] = dataclasses.field(default_factory=list)
    k: int = 5
    jobs: int = 4
    checks_jobs: int | None = None
    out: str = "results"
    resume: bool = False
    fresh: bool = False
    keep: bool = False
    timeout: float | None = None
    max_attempts: int = 3
    confirm_against: str | None = None
    confirm_stages: str | None = None
    control_ref: str | None = None
    main_history: str | None = None
    max_runs: int | None = None
    max_cost_usd: float | None = None
    max_cost_usd_per_run: float | None = None
    shard: str | None = None
    runner: str | None = None
    setup_problem_file: str | None = None


@dataclass(frozen=True)
class RunOutcome:
    """What an invocation recorded: every task's summary (none when interrupted), the notices
    its report carries, and for an interrupted one the signal and the runs still to run."""

    summaries: list[TaskSummary]
    notices: tuple[str, ...]
    out_dir: Path
    tasks: int
    recorded: int
    seconds: float
    signal_number: int | None = None
    missing: int = 0
    interrupted: bool = False

    @property
    def exit_code(self) -> int:
        return EXIT_FAILED if any(s.inconclusive for s in self.summaries) else EXIT_OK


def run_invocation(request: RunRequest) -> RunOutcome:
    """The invocation `request` describes, from its options to its recorded runs."""
    stages = None
    if request.confirm_stages is not None:
        stages = parse_stages(request.confirm_stages)
        if not request.confirm_against:
            raise UserError("only applies with --confirm-against FILE (the baseline the "
                            "confirmation runs are judged against)", field="--confirm-stages")
    if request.main_history is not None and not request.confirm_against:
        raise UserError("only applies with --confirm-against FILE (main's record is judged "
                        "against that baseline)", field="--main-history")
    if request.control_ref is not None and not request.confirm_against:
        raise UserError("only applies with --confirm-against FILE (the control arm runs the "
                        "tasks that fall below that baseline)", field="--control-ref")
    root = Path(request.root)
    if not root.is_dir():
        raise UserError("folder does not exist", path=root, field="--root")
    root = root.resolve()
    config = load_config(root)
    agent = (inline_agent(request.agent_cmd) if request.agent_cmd is not None
             else resolve_agent(config, request.agent, None))
    if request.agent_env:
        agent = with_env(agent, request.agent_env)
    tasks = selected_tasks(request, root)
    try:
        preflight(agent, tasks, root, config)
        harness = checked_harness(agent, tasks, root)
    except UserError as exc:
        if request.setup_problem_file:
            setup_problem.write(root / request.setup_problem_file, exc.message, exc.field,
                                request.shard)
        raise
    out_dir = results_dir(root, request.out)
    more_runs = references = None
    if request.confirm_against:
        baseline = load_baseline(root / request.confirm_against)
        references = main_references(request, root, baseline, agent.identity)
        more_runs = confirmation_hook(baseline, stages or DEFAULT_STAGES, config.gate,
                                      references)
    arm_and_hook = (control_arm_and_hook(request, root, stages, config.gate, references)
                    if request.control_ref else None)
    ensure_dir(out_dir, field="--out")
    try:
        with results.results_lock(out_dir):
            all_task_ids = {folder.name for folder in task_folders(root)}
            resumed = take_over(tasks, all_task_ids, out_dir, agent.identity,
                                resume=request.resume, fresh=request.fresh)
            control = take_over_control_arm(tasks, out_dir, arm_and_hook,
                                            resume=request.resume, fresh=request.fresh)
            return run_locked(request, root, config, agent, tasks, out_dir, more_runs, resumed,
                              harness, control)
    finally:
        if arm_and_hook is not None:
            remove_tree(arm_and_hook[0].harness_root.parent)


def selected_tasks(request: RunRequest, root: Path) -> list:
    """The tasks --tasks names (all by default), cut to --shard's share; never none."""
    tasks = load_tasks(root, request.tasks)
    if request.shard:
        ids = [t.id for t in tasks]
        chosen = select_shard(ids, recorded_walls(root, request.confirm_against, ids),
                              request.shard, runs=request.k)
        by_id = {t.id: t for t in tasks}
        tasks = [by_id[task_id] for task_id in chosen]
    if not tasks:
        raise UserError("no tasks to run", path=root / "tasks")
    return tasks


def main_references(request: RunRequest, root: Path, baseline, agent_identity: str):
    """--main-history: task -> the reference rate main's record gives it (none without)."""
    if request.main_history is None:
        return None
    folder = root / request.main_history
    if not folder.is_dir():
        raise UserError("expected a folder of the default branch's run summaries "
                        "(`ci-eval history fetch --out DIR`)", path=folder, field="--main-history")
    return references_of(load_history(folder), baseline, agent=agent_identity,
                         today=dt.datetime.now(dt.timezone.utc).date())


def control_arm_and_hook(request: RunRequest, root: Path, stages, rules, references=None):
    """(the control arm of --control-ref, the hook that stages both arms)."""
    assert request.confirm_against and request.control_ref  # the caller's condition
    baseline = load_baseline(root / request.confirm_against)
    arm = control_arm(root, request.control_ref, request.agent)
    problem = agent_problem(arm.agent, arm.harness_root)
    if problem:
        remove_tree(arm.harness_root.parent)
        raise UserError(f"{request.control_ref}: {problem}; no run started",
                        field="--control-ref")
    return arm, arms_hook(baseline, stages or DEFAULT_STAGES, rules, references)


def run_context(request: RunRequest, root: Path, config: Config, agent, out_dir: Path,
                harness) -> RunContext:
    """What every run of the invocation shares (run/context.py), isolation notices said."""
    iso = isolation.detect()
    for notice in iso.notices:
        print(f"ci-eval: NOTICE: {notice}", file=sys.stderr)
    budget = RunBudget(config.budget.overridden(
        max_runs=request.max_runs, max_cost_usd=request.max_cost_usd,
        max_cost_usd_per_run=request.max_cost_usd_per_run))
    runners = Runners.of(iso, out_dir / LOGS / "images", request.runner, config.runner,
                         checks_host_home=config.checks_home == "host")
    return RunContext(repo_root=root, out_dir=out_dir, agent=agent, isolation=iso,
                      runs_base=make_runs_base(keep=request.keep),
                      max_attempts=request.max_attempts, keep=request.keep,
                      timeout_override=request.timeout, checks_env=config.checks_env,
                      pricing=config.pricing, budget=budget, backoff_base=backoff_base(),
                      runners=runners, harness=harness)


def control_arm_of(ctx: RunContext, tasks: list, control) -> ControlArm | None:
    """The runner's control arm: the context with REF's agent, harness and results folder."""
    if not control:
        return None
    arm, hook, recorded = control
    control_dir(ctx.out_dir).mkdir(exist_ok=True)
    return ControlArm(dataclasses.replace(ctx, agent=arm.agent, out_dir=control_dir(ctx.out_dir),
                                          arm=arm,
                                          harness=checked_harness(arm.agent, tasks,
                                                                  arm.harness_root)),
                      recorded, hook)


def run_locked(request: RunRequest, root: Path, config: Config, agent, tasks, out_dir: Path,
               more_runs, resumed, harness=None, control=None) -> RunOutcome:
    """The runs, with the results folder locked and taken over."""
    started = time.monotonic()
    if harness is not None and not agent.builtin:
        print(f"ci-eval: agent {agent.identity}: {harness.describe()}", file=sys.stderr)
    ctx = run_context(request, root, config, agent, out_dir, harness)
    assert ctx.runners is not None  # run_context always gives the runners
    arms = control_arm_of(ctx, tasks, control)
    try:
        ctx.runners.prepare(tasks,
                            progress=lambda line: print(f"ci-eval: {line}", file=sys.stderr))
        with cancellation.on_signals():
            records = run_tasks(tasks, request.k, request.jobs, ctx, progress=Progress(),
                                more_runs=more_runs, control=arms,
                                checks_jobs=request.checks_jobs,
                                recorded={t: found.records for t, found in resumed.items()})
    finally:
        if request.keep:
            print(f"ci-eval: workspaces kept under {ctx.runs_base}", file=sys.stderr)
        else:
            remove_tree(ctx.runs_base)
    recorded = sum(len(records[t.id]) for t in tasks)
    if cancellation.cancelled():
        return RunOutcome([], (), out_dir, len(tasks), recorded, time.monotonic() - started,
                          signal_number=cancellation.signal_number(), interrupted=True,
                          missing=sum(max(0, request.k - len(records[t.id])) for t in tasks))
    summaries = [summarize(t.id, records[t.id], fallback_k=request.k) for t in tasks]
    notices = isolation_notices([r for t in tasks for r in records[t.id]])
    if ctx.budget.reason and any(s.inconclusive for s in summaries):
        short = ", ".join(s.task for s in summaries if s.inconclusive)
        notices = (f"{ctx.budget.reason}: no further run started; inconclusive: {short}",
                   *notices)
        print(f"ci-eval: {notices[0]}", file=sys.stderr)
    return RunOutcome(summaries, tuple(notices), out_dir, len(tasks), recorded,
                      time.monotonic() - started)


def backoff_base() -> float:
    """Seconds of the first retry delay; CI_EVAL_BACKOFF_BASE changes it (tests make it tiny)."""
    try:
        return max(0.0, float(os.environ.get("CI_EVAL_BACKOFF_BASE", BACKOFF_BASE_SECONDS)))
    except ValueError:
        return BACKOFF_BASE_SECONDS
