"""`ci-eval compare`: results against baseline.json -> per-task statuses and the gate's exit code."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_agent_mismatch_argument,
    add_baseline_argument,
    add_footer_commit_argument,
    add_json_format_alias,
    add_output_argument,
    add_requested_runs_argument,
    add_results_argument,
    add_root_argument,
    add_tasks_argument,
)

FORMATS = ("table", "markdown", "json", "junit")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare results with baseline.json and gate on regressions",
        description="Per task: baseline rate, current passes/runs and rate, delta, 95% "
        "interval and a status (regressed, improved, unchanged, new, missing, aspirational, "
        "inconclusive, prompt-changed). A task regresses when its pass rate over all its runs "
        "drops MORE than 0.30 below its baseline (exact fractions). Exit 1 when a gated task "
        "regressed, is inconclusive or has a changed prompt, or when every run failed the same "
        "way (agent setup broken); 0 otherwise; 2 on bad input. Without a baseline file every "
        "task is new (exit 0). TASK... compares only those tasks. With --against DIR, "
        "another agent's results on the same tasks take the baseline's place: both side by "
        "side, judged by the same rules (docs/compare-agents.md).",
    )
    add_root_argument(parser)
    add_tasks_argument(parser)
    add_results_argument(parser)
    add_baseline_argument(parser)
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (terminal), markdown (PR comment), json, junit")
    add_json_format_alias(parser)
    add_output_argument(parser)
    add_requested_runs_argument(parser)
    add_agent_mismatch_argument(parser)
    add_footer_commit_argument(parser)
    parser.add_argument("--against", metavar="DIR",
                        help="another agent's results folder (relative to --root), compared "
                        "in the baseline's place: is --results' agent worse on any task?")
    parser.add_argument("--main-history", metavar="DIR",
                        help="run summaries of the default branch (`ci-eval history fetch "
                        "--out`, relative to --root): each gated task is judged against main's "
                        "record of its last 8 pushes too (same baseline and agent, at most 14 "
                        "days old): a task main fails as well is drifted, not regressed "
                        "(docs/gate.md)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import os
    import sys
    from pathlib import Path

    from ci_eval.agents.config_file import load_config
    from ci_eval.agents.harness_of import harness_files_of
    from ci_eval.errors import UserError
    from ci_eval.github import context
    from ci_eval.output import emit
    from ci_eval.render.compare import render, verdict_line
    from ci_eval.results.history import RunSummary, load_history
    from ci_eval.verdict.assemble import build_verdict

    root = Path(args.root)
    if args.against is not None:
        return _against(args, root)
    main_history: list[RunSummary] = []
    if args.main_history:
        if not (root / args.main_history).is_dir():
            raise UserError("expected a folder of the default branch's run summaries "
                            "(`ci-eval history fetch --out DIR`)", path=root / args.main_history,
                            field="--main-history")
        main_history = load_history(root / args.main_history)
    verdict = build_verdict(root, root / args.results, args.baseline, k=args.k,
                            allow_agent_mismatch=args.allow_agent_mismatch,
                            selected=args.tasks or None, rules=load_config(root).gate,
                            harness_of=harness_files_of(root), main_history=main_history)
    # the run's variables only: compare never reads (so never fails on) an event payload
    ctx = context.parse(os.environ, {})
    commit = context.footer_commit(args.commit, ctx.sha, root)
    emit(render(verdict, args.format, commit=commit), args.output)
    if args.output:
        print(verdict_line(verdict, emoji=False), file=sys.stderr)
    return verdict.exit_code


def _against(args: argparse.Namespace, root) -> int:
    import sys

    from ci_eval.agents.config_file import load_config
    from ci_eval.errors import UserError
    from ci_eval.output import emit
    from ci_eval.render.agents_compare import FORMATS as AGAINST_FORMATS
    from ci_eval.render.agents_compare import render
    from ci_eval.render.compare import verdict_line
    from ci_eval.verdict.assemble import build_verdict

    if args.baseline is not None:
        raise UserError("--against takes the baseline's place: give one of them",
                        field="--baseline")
    if args.format not in AGAINST_FORMATS:
        raise UserError(f"expected one of {', '.join(AGAINST_FORMATS)} with --against, "
                        f"got {args.format!r}", field="--format")
    verdict = build_verdict(root, root / args.results, None, k=args.k,
                            selected=args.tasks or None, rules=load_config(root).gate,
                            against_dir=root / args.against)
    emit(render(verdict, args.format), args.output)
    if args.output:
        print(verdict_line(verdict, emoji=False), file=sys.stderr)
    return verdict.exit_code
