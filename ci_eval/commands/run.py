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
                        help=f"agents at once, 1-{MAX_JOBS} (default 4); a run whose agent is "
                        "done is scored beside the next runs' agents")
    parser.add_argument("--checks-jobs", type=bounded_int(MAX_JOBS), metavar="N",
                        help="checks at once, beside the agents (default: the cores)")
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
    parser.add_argument("--main-history", metavar="DIR",
                        help="with --confirm-against: the default branch's run summaries "
                        "(`ci-eval history fetch --out`): a gated task is staged against main's "
                        "record of its last 8 pushes (pooled with the baseline, or alone once "
                        "main is below it) instead of the baseline alone (docs/gate.md)")
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
    import dataclasses
    import sys

    from ci_eval.render import report
    from ci_eval.run.invocation import RunRequest, run_invocation

    request = RunRequest(**{f.name: getattr(args, f.name) for f in dataclasses.fields(RunRequest)})
    outcome = run_invocation(request)
    if outcome.interrupted:
        return _interrupted(outcome.signal_number, outcome.out_dir, outcome.recorded,
                            outcome.missing)
    sys.stdout.write(report.render(outcome.summaries, args.format, outcome.notices))
    print(f"ci-eval: {outcome.recorded} run(s) of {outcome.tasks} task(s) recorded in "
          f"{_elapsed(outcome.seconds)}; results in {outcome.out_dir} (ci-eval report "
          f"--results {args.out}, ci-eval compare --results {args.out})", file=sys.stderr)
    return outcome.exit_code


def _elapsed(seconds: float) -> str:
    """12.3 s, 4 min 05 s, 1 h 02 min."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _interrupted(signum, out_dir, recorded: int, missing: int) -> int:
    """One line on stderr; exit 128 + the signal (130 for Ctrl-C)."""
    import signal
    import sys

    name = signal.Signals(signum).name if signum else "SIGINT"
    print(f"ci-eval: interrupted by {name}: {recorded} run(s) recorded in {out_dir}, "
          f"{missing} still to run; runs in flight were stopped and not recorded "
          "(continue with --resume)", file=sys.stderr)
    return 128 + (signum or signal.SIGINT)
