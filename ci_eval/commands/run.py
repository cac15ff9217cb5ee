"""`ci-eval run`: k runs per task through an agent, one results line per run."""

from __future__ import annotations

from ci_eval.cli_options import (
    MAX_JOBS,
    MAX_RUNS_PER_TASK,
    add_json_format_alias,
    add_root_argument,
    add_runner_argument,
    add_tasks_argument,
    bounded_int,
    positive_float,
    positive_int,
    positive_seconds,
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run tasks k times through an agent and record results",
        description="Run each task k times through an agent in fresh, isolated workspaces, score "
        "each run with the task's checks.py and append one line per run to OUT/<task-id>.jsonl. "
        "Exit 0 when every task got its k valid runs (whatever they scored), 1 when a task is "
        "inconclusive (infrastructure errors left it short of valid runs), 2 on bad input. "
        "Ctrl-C (SIGINT) or SIGTERM stops it within seconds: runs in flight are killed and not "
        "recorded, finished runs are kept (continue with --resume); exit 130 (SIGINT) or 143 "
        "(SIGTERM).",
    )
    add_root_argument(parser)
    add_tasks_argument(parser)
    agent = parser.add_mutually_exclusive_group()
    agent.add_argument("--agent", metavar="NAME",
                       help="agent named in ci-eval.yaml, a preset (claude-code, codex, gemini, "
                       "aider, goose, mini-swe-agent), or built-in reference (applies each "
                       "task's solution) / noop (default: default_agent of ci-eval.yaml; "
                       "without one, --agent or --agent-cmd is required)")
    agent.add_argument("--agent-cmd", metavar="CMD",
                       help="inline agent command: a bash script run in the workspace, with "
                       "$CI_EVAL_PROMPT_FILE and the other CI_EVAL_* variables")
    parser.add_argument("--agent-env", action="append", default=[], metavar="NAME",
                        help="let the agent see the variable NAME too (repeatable; it must be "
                        "set). The agent sees an allow-list only: PATH, HOME, LANG and the like, "
                        "a preset's key and settings variables, and the env: of its ci-eval.yaml "
                        "entry; any other variable, even one set on this command line, reaches "
                        "it only through --agent-env")
    parser.add_argument("-k", type=bounded_int(MAX_RUNS_PER_TASK), default=5,
                        help=f"runs per task, 1-{MAX_RUNS_PER_TASK} (default 5)")
    parser.add_argument("-j", "--jobs", type=bounded_int(MAX_JOBS), default=4,
                        help=f"runs at once, 1-{MAX_JOBS} (default 4)")
    parser.add_argument("--out", default="results", metavar="DIR",
                        help="results folder, relative to --root (default results/)")
    existing = parser.add_mutually_exclusive_group()
    existing.add_argument("--resume", action="store_true",
                          help="keep recorded runs and run only the missing ones (refused "
                          "when they were recorded with another agent or prompt.md)")
    existing.add_argument("--fresh", action="store_true",
                          help="discard recorded results of the selected tasks first")
    parser.add_argument("--keep", action="store_true", help="keep workspaces (paths are printed)")
    parser.add_argument("--timeout", type=positive_seconds, metavar="SECONDS",
                        help="agent timeout, overriding config and task metadata")
    parser.add_argument("--max-attempts", type=positive_int, default=3,
                        help="tries per run when infrastructure errors occur (default 3)")
    parser.add_argument("--confirm-against", metavar="FILE",
                        help="baseline file: re-run tasks that breach the gate in stages before the verdict")
    parser.add_argument("--confirm-stages", metavar="N,N,...",
                        help="total runs per confirmation stage, with --confirm-against "
                        "(default: the gate's shipped stages)")
    parser.add_argument("--control-ref", metavar="REF",
                        help="with --confirm-against: run tasks that fall below the baseline "
                        "also with REF's agent (its ci-eval.yaml entry and files, e.g. "
                        "origin/main), interleaved, into OUT/control/; compare then tells a PR's "
                        "regression from drift of main")
    parser.add_argument("--max-runs", type=positive_int, metavar="N",
                        help="start at most N agent runs (retries included); overrides "
                        "ci-eval.yaml budget.max_runs")
    parser.add_argument("--max-cost-usd", type=positive_float, metavar="USD",
                        help="start no run once this much was spent; overrides "
                        "budget.max_cost_usd")
    parser.add_argument("--max-cost-usd-per-run", type=positive_float, metavar="USD",
                        help="start no run once a run cost more than this; overrides "
                        "budget.max_cost_usd_per_run")
    parser.add_argument("--shard", metavar="I/N",
                        help="run only shard I of N (as `ci-eval plan --shards N` assigns them: "
                        "balanced by the baseline's wall seconds, from --confirm-against or "
                        "baseline.json); confirmation runs stay in the shard that owns the task")
    add_runner_argument(parser)
    parser.add_argument("--setup-problem-file", metavar="FILE",
                        help="when the agent cannot start or a task's requires is missing (exit "
                        "2, no run started), also write the problem there as JSON, relative to "
                        "--root (the action uploads it; the report posts it on the PR)")
    parser.add_argument("--format", choices=("table", "json", "junit"), default="table",
                        help="report printed at the end (default table)")
    add_json_format_alias(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    from pathlib import Path

    from ci_eval.agents.config import inline_agent
    from ci_eval.agents.config_file import load_config, resolve_agent
    from ci_eval.errors import UserError
    from ci_eval.output import ensure_dir
    from ci_eval.results import setup_problem
    from ci_eval.results import store as results
    from ci_eval.tasks.load import load_tasks
    from ci_eval.tasks.model import task_folders
    from ci_eval.verdict.confirmation import parse_stages

    stages = None
    if args.confirm_stages is not None:
        stages = parse_stages(args.confirm_stages)
        if not args.confirm_against:
            raise UserError("only applies with --confirm-against FILE (the baseline the "
                            "confirmation runs are judged against)", field="--confirm-stages")
    if args.control_ref is not None and not args.confirm_against:
        raise UserError("only applies with --confirm-against FILE (the control arm runs the "
                        "tasks that fall below that baseline)", field="--control-ref")

    root = Path(args.root)
    if not root.is_dir():
        raise UserError("folder does not exist", path=root, field="--root")
    root = root.resolve()
    config = load_config(root)
    if args.agent_cmd is not None:
        agent = inline_agent(args.agent_cmd)
    else:
        agent = resolve_agent(config, args.agent, None)
    if args.agent_env:
        agent = with_env(agent, args.agent_env)
    tasks = load_tasks(root, args.tasks)
    if args.shard:
        from ci_eval.run.shards import select_shard
        from ci_eval.verdict.baseline import recorded_walls

        ids = [t.id for t in tasks]
        chosen = select_shard(ids, recorded_walls(root, args.confirm_against, ids), args.shard,
                              runs=args.k)
        by_id = {t.id: t for t in tasks}
        tasks = [by_id[task_id] for task_id in chosen]
    if not tasks:
        raise UserError("no tasks to run", path=root / "tasks")
    try:
        _preflight(agent, tasks, root, config)
        harness = _harness(agent, tasks, root)
    except UserError as exc:
        if args.setup_problem_file:
            setup_problem.write(root / args.setup_problem_file, exc.message, exc.field,
                                args.shard)
        raise
    out_dir = _results_dir(root, args.out)
    more_runs = None
    if args.confirm_against:
        more_runs = _confirmation_hook(args.confirm_against, stages, root, config.gate)
    arm_and_hook = _control_arm(args, root, stages, config.gate) if args.control_ref else None
    ensure_dir(out_dir, field="--out")
    try:
        with results.results_lock(out_dir):
            all_task_ids = {folder.name for folder in task_folders(root)}
            resumed = _take_over(args, tasks, all_task_ids, out_dir, agent.identity)
            control = _take_over_control(args, tasks, out_dir, arm_and_hook)
            return _run_locked(args, root, config, agent, tasks, out_dir, more_runs, resumed,
                               harness, control)
    finally:
        if arm_and_hook is not None:
            from ci_eval.run.workspace.build import remove_tree

            remove_tree(arm_and_hook[0].harness_root.parent)


def _control_arm(args, root, stages, rules):
    """(the control arm of --control-ref, the hook that stages both arms)."""
    from ci_eval.errors import UserError
    from ci_eval.run.agent.start import agent_problem
    from ci_eval.run.control_ref import control_arm
    from ci_eval.run.workspace.build import remove_tree
    from ci_eval.verdict.baseline import load_baseline
    from ci_eval.verdict.confirmation import DEFAULT_STAGES
    from ci_eval.verdict.control import arms_hook

    baseline = load_baseline(root / args.confirm_against)
    arm = control_arm(root, args.control_ref, args.agent)
    problem = agent_problem(arm.agent, arm.harness_root)
    if problem:
        remove_tree(arm.harness_root.parent)
        raise UserError(f"{args.control_ref}: {problem}; no run started", field="--control-ref")
    return arm, arms_hook(baseline, stages or DEFAULT_STAGES, rules)


def _take_over_control(args, tasks, out_dir, arm_and_hook):
    """The control folder settled (run/control_ref.take_over_control): (arm, hook, what it
    recorded before), or None without a control arm."""
    from ci_eval.results.control_arm import control_dir
    from ci_eval.run.control_ref import take_over_control

    identity = arm_and_hook[0].agent.identity if arm_and_hook else None
    recorded = take_over_control(tasks, control_dir(out_dir), identity, resume=args.resume,
                                 fresh=args.fresh)
    return (*arm_and_hook, recorded) if arm_and_hook else None


def _harness(agent, tasks, root):
    """The agent's harness (agents/harness.py), checked against the tasks' repo-states (named
    on stderr when the runs start: which files make up the agent is never silent)."""
    from ci_eval.agents.config_file import CONFIG_FILE, config_path
    from ci_eval.agents.harness import agent_harness, task_conflicts

    harness = agent_harness(agent, root, config_path=config_path(root) or root / CONFIG_FILE)
    task_conflicts(harness, [(t.id, t.repo_state) for t in tasks])
    return harness


def with_env(agent, names: list[str]):
    """The agent with --agent-env's names added to the variables it may see."""
    import dataclasses
    import re

    from ci_eval.errors import UserError

    for name in names:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", name):
            raise UserError(f"expected a variable name, got {name!r}", field="--agent-env")
    return dataclasses.replace(agent, env=tuple(dict.fromkeys((*agent.env, *names))))


def _preflight(agent, tasks, root, config) -> None:
    """Exit 2 before any agent run when a task is invalid (every problem `ci-eval validate`
    finds: a checks.py that does not parse included), the agent cannot start or a task cannot
    be scored."""
    from ci_eval.errors import UserError
    from ci_eval.run.agent.start import agent_problem
    from ci_eval.run.checks.requirements import requirement_problems
    from ci_eval.run.grade import check_gradings
    from ci_eval.tasks.problems import validate_tasks

    check_gradings(tasks)  # a broken rubric.yaml: exit 2 before any run
    invalid = [p for found in validate_tasks(root, [t.id for t in tasks]).values() for p in found]
    if invalid:  # what `ci-eval validate` refuses is never run (and charged to the agent)
        more = f" (and {len(invalid) - 1} more problem(s))" if len(invalid) > 1 else ""
        raise UserError(f"{invalid[0]}{more}; `ci-eval validate` lists them; no run started",
                        field="tasks")
    problem = agent_problem(agent, root)
    if problem:
        raise UserError(f"{problem}; no run started", field="--agent")
    missing = requirement_problems(tasks, root, host_home=config.checks_home == "host")
    if missing:
        more = f" (and {len(missing) - 1} more task(s))" if len(missing) > 1 else ""
        raise UserError(f"{missing[0]}{more}; no run started", field="requires")


def _results_dir(root, given: str):
    """--out, relative to the repo root, resolved (so `results/../../x` means what the kernel
    will make of it); never the repo root itself or a folder inside tasks/, and a warning when
    a relative one climbs out of the repo root."""
    import sys
    from pathlib import Path

    from ci_eval.errors import UserError

    if not given.strip():
        raise UserError("expected a folder for the results, got an empty string", field="--out")
    out_dir = (root / given).resolve()
    if out_dir == root or out_dir in root.parents:
        raise UserError("is the repo root or above it (expected a folder of its own, e.g. "
                        "results/)", path=out_dir, field="--out")
    if out_dir.is_relative_to(root / "tasks"):
        raise UserError("is inside tasks/ (expected a folder outside the tasks)", path=out_dir,
                        field="--out")
    if not Path(given).is_absolute() and not out_dir.is_relative_to(root):
        print(f"ci-eval: warning: --out {given} climbs out of the repo root {root}: the "
              f"results go to {out_dir}", file=sys.stderr)  # allowed, docs/isolation.md says why
    return out_dir


def _take_over(args, tasks, all_task_ids: set[str], out_dir, agent_identity: str) -> dict:
    """Check what out_dir already holds for these tasks against --resume / --fresh, then (every
    refusal behind us) discard or repair it. Returns the results files being resumed."""
    import sys

    from ci_eval.errors import UserError
    from ci_eval.results import store as results
    from ci_eval.run.resume import check_resumable, leftover_results, read_recorded

    existing = [t.id for t in tasks if results.results_path(out_dir, t.id).exists()]
    removed, foreign = leftover_results(out_dir, {t.id for t in tasks}, all_task_ids,
                                        agent_identity)
    if foreign:
        path, agent = foreign[0]
        raise UserError(f"holds runs of agent {agent!r}, this run uses {agent_identity!r}; a "
                        "results folder holds one agent's runs (report and compare would refuse "
                        "it): use another --out, or remove the file", path=path, field="--out")
    if removed and not args.fresh:
        raise UserError(f"results of {removed[0].stem}, which tasks/ no longer holds (report and "
                        "compare would count them): --fresh removes them, or remove the file",
                        path=removed[0], field="--out")
    resumed = {}
    if existing and args.resume:
        resumed = read_recorded(tasks, out_dir, allow_torn_tail=True)
        check_resumable(tasks, resumed, agent_identity)
    elif existing and not args.fresh:
        raise UserError(f"results already recorded for {len(existing)} task(s), e.g. {existing[0]} "
                        "(use --resume to continue them or --fresh to discard them)", path=out_dir)
    if args.fresh:
        for task_id in existing:
            results.results_path(out_dir, task_id).unlink()
        for path in removed:
            path.unlink()
            print(f"ci-eval: removed {path}: its task is no longer in tasks/", file=sys.stderr)
    for found in resumed.values():
        results.drop_torn_tail(found)
    return resumed


def _run_locked(args, root, config, agent, tasks, out_dir, more_runs, resumed,
                harness=None, control=None) -> int:
    import sys
    import time

    from ci_eval.errors import EXIT_FAILED, EXIT_OK
    from ci_eval.progress import Progress
    from ci_eval.render import report
    from ci_eval.results.notices import isolation_notices
    from ci_eval.results.summary import summarize
    from ci_eval.run.agent.budget import RunBudget
    from ci_eval.run.context import LOGS, RunContext
    from ci_eval.run.runner import ControlArm, run_tasks
    from ci_eval.run.runners import Runners
    from ci_eval.run.sandbox import cancellation, isolation
    from ci_eval.run.workspace.build import make_runs_base, remove_tree

    started = time.monotonic()
    if harness is not None and not agent.builtin:
        print(f"ci-eval: agent {agent.identity}: {harness.describe()}", file=sys.stderr)
    iso = isolation.detect()
    for notice in iso.notices:
        print(f"ci-eval: NOTICE: {notice}", file=sys.stderr)
    runs_base = make_runs_base(keep=args.keep)
    budget = RunBudget(config.budget.overridden(max_runs=args.max_runs,
                                                max_cost_usd=args.max_cost_usd,
                                                max_cost_usd_per_run=args.max_cost_usd_per_run))
    runners = Runners.of(iso, out_dir / LOGS / "images", args.runner, config.runner,
                         checks_host_home=config.checks_home == "host")
    ctx = RunContext(repo_root=root, out_dir=out_dir, agent=agent, isolation=iso,
                     runs_base=runs_base, max_attempts=args.max_attempts, keep=args.keep,
                     timeout_override=args.timeout, checks_env=config.checks_env,
                     pricing=config.pricing, budget=budget, backoff_base=_backoff_base(),
                     runners=runners, harness=harness)
    arms = None
    if control:
        import dataclasses

        from ci_eval.results.control_arm import control_dir

        arm, hook, recorded = control
        control_dir(out_dir).mkdir(exist_ok=True)
        arms = ControlArm(dataclasses.replace(ctx, agent=arm.agent, out_dir=control_dir(out_dir),
                                              arm=arm,
                                              harness=_harness(arm.agent, tasks,
                                                               arm.harness_root)),
                          recorded, hook)
    try:
        runners.prepare(tasks, progress=lambda line: print(f"ci-eval: {line}", file=sys.stderr))
        with cancellation.on_signals():
            records = run_tasks(tasks, args.k, args.jobs, ctx, progress=Progress(),
                                more_runs=more_runs, control=arms,
                                recorded={t: found.records for t, found in resumed.items()})
    finally:
        if args.keep:
            print(f"ci-eval: workspaces kept under {runs_base}", file=sys.stderr)
        else:
            remove_tree(runs_base)
    if cancellation.cancelled():
        return _interrupted(cancellation.signal_number(), out_dir,
                            sum(len(records[t.id]) for t in tasks),
                            sum(max(0, args.k - len(records[t.id])) for t in tasks))
    summaries = [summarize(t.id, records[t.id], fallback_k=args.k) for t in tasks]
    all_records = [r for t in tasks for r in records[t.id]]
    notices = isolation_notices(all_records)
    if budget.reason and any(s.inconclusive for s in summaries):
        short = ", ".join(s.task for s in summaries if s.inconclusive)
        notices = (f"{budget.reason}: no further run started; inconclusive: {short}", *notices)
        print(f"ci-eval: {notices[0]}", file=sys.stderr)
    sys.stdout.write(report.render(summaries, args.format, notices))
    print(f"ci-eval: {len(all_records)} run(s) of {len(tasks)} task(s) recorded in "
          f"{_elapsed(time.monotonic() - started)}; results in {out_dir} (ci-eval report "
          f"--results {args.out}, ci-eval compare --results {args.out})", file=sys.stderr)
    return EXIT_FAILED if any(s.inconclusive for s in summaries) else EXIT_OK


def _elapsed(seconds: float) -> str:
    """12.3 s, 4 min 05 s, 1 h 02 min."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _backoff_base() -> float:
    """Seconds of the first retry delay; CI_EVAL_BACKOFF_BASE changes it (tests make it tiny)."""
    import os

    from ci_eval.run.agent.retry import BACKOFF_BASE_SECONDS

    try:
        return max(0.0, float(os.environ.get("CI_EVAL_BACKOFF_BASE", BACKOFF_BASE_SECONDS)))
    except ValueError:
        return BACKOFF_BASE_SECONDS


def _interrupted(signum, out_dir, recorded: int, missing: int) -> int:
    """One line on stderr; exit 128 + the signal (130 for Ctrl-C)."""
    import signal
    import sys

    name = signal.Signals(signum).name if signum else "SIGINT"
    print(f"ci-eval: interrupted by {name}: {recorded} run(s) recorded in {out_dir}, "
          f"{missing} still to run; runs in flight were stopped and not recorded "
          "(continue with --resume)", file=sys.stderr)
    return 128 + (signum or signal.SIGINT)


def _confirmation_hook(baseline_file, stages, root, rules):
    """Extra runs for a gated task whose pooled runs breach (or nearly breach) the gate."""
    from ci_eval.results.summary import count_runs
    from ci_eval.tasks.model import other_prompts
    from ci_eval.verdict.baseline import load_baseline
    from ci_eval.verdict.confirmation import DEFAULT_STAGES, runs_to_add
    from ci_eval.verdict.gate import gated_baseline_rate

    baseline = load_baseline(root / baseline_file)
    stages = stages or DEFAULT_STAGES

    def more_runs(task, records: list[dict]) -> int:
        entry = baseline.entries.get(task.id)
        rate = (gated_baseline_rate(entry, aspirational=task.aspirational, rules=rules)
                if entry else None)
        if rate is None or other_prompts([task.prompt_hash], entry.prompt_hash):
            return 0  # not gated, or prompt-changed whatever the runs say
        counts = count_runs(records)
        return runs_to_add(rate, counts.passes, counts.valid, stages, recorded_runs=len(records),
                           regression_threshold=rules.regression_threshold)

    return more_runs
