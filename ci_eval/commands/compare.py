"""`ci-eval compare`: results against baseline.json -> per-task statuses and the gate's exit code."""

from __future__ import annotations

import argparse

from ci_eval.main import add_results_argument, add_root_argument, add_tasks_argument, positive_int

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
        "task is new (exit 0). TASK... compares only those tasks.",
    )
    add_root_argument(parser)
    add_tasks_argument(parser)
    add_results_argument(parser)
    parser.add_argument("--baseline", metavar="FILE",
                        help="baseline file, relative to --root (default baseline.json)")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (terminal), markdown (PR comment), json, junit")
    parser.add_argument("--json", action="store_const", const="json", dest="format",
                        help="same as --format json")
    parser.add_argument("--output", metavar="FILE",
                        help="write to FILE instead of stdout (its folder is created)")
    parser.add_argument("-k", type=positive_int, default=None, metavar="N",
                        help="valid runs asked of every task, overriding what `ci-eval run` "
                        "recorded; a task with fewer is inconclusive (default: each task's own "
                        "k, or confirmation stage, recorded with its runs)")
    parser.add_argument("--allow-agent-mismatch", action="store_true",
                        help="compare results recorded with another agent than the baseline's")
    parser.add_argument("--commit", metavar="SHA",
                        help="commit shown in the report footer (default: $GITHUB_SHA)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import os
    import sys
    from pathlib import Path

    from ci_eval.output import emit
    from ci_eval.render.compare import render, verdict_line

    root = Path(args.root)
    verdict = build_verdict(root, root / args.results, args.baseline, k=args.k,
                            allow_agent_mismatch=args.allow_agent_mismatch,
                            selected=args.tasks or None)
    commit = args.commit or os.environ.get("GITHUB_SHA") or None
    emit(render(verdict, args.format, commit=commit), args.output)
    if args.output:
        print(verdict_line(verdict, emoji=False), file=sys.stderr)
    return verdict.exit_code


NO_BASELINE_NOTE = ("No baseline yet: every task is new. Record one from 40 runs per task: "
                    "`ci-eval run -k 40 --agent NAME`, then `ci-eval baseline update --all`.")


def build_verdict(root, results_dir, baseline_file: str | None, *, k: int | None = None,
                  allow_agent_mismatch: bool = False, selected: list[str] | None = None):
    """Load results, baseline.json and tasks/ and compare them: the gate's Verdict (what
    `ci-eval compare` prints and the action's report mode publishes). A missing baseline file
    makes every task new (a repo's first PR gets a report); `selected` compares those tasks
    only (the others are neither inconclusive nor missing). The results are streamed: per-task
    rows, no diff held."""
    from ci_eval.render.report import label_notices
    from ci_eval.results import stream
    from ci_eval.results.summary import summarize_results, typical_k
    from ci_eval.tasks.load import load_tasks
    from ci_eval.verdict import calibration, gate
    from ci_eval.verdict.baseline import Baseline, baseline_path, load_baseline

    loaded = stream.require_runs(results_dir)
    path = baseline_path(root, baseline_file)
    missing_baseline = not path.exists() and not path.is_symlink()
    baseline = Baseline() if missing_baseline else load_baseline(path)
    tasks = load_tasks(root, selected)
    if selected:
        chosen = {t.id for t in tasks}
        loaded = {task: runs for task, runs in loaded.items() if task in chosen}
        baseline = baseline.without(set(baseline.entries) - chosen)

    shown_k = k or typical_k(loaded)  # shown in the report; each task has its own
    agent = gate.check_agents(
        baseline.agent,
        (agent for runs in loaded.values() for agent in sorted(runs.agents)),
        allow_mismatch=allow_agent_mismatch,
        results_path=results_dir,
    )
    notes = (NO_BASELINE_NOTE,) if missing_baseline else ()
    if agent and baseline.agent and agent != baseline.agent:
        notes += (f"Agent mismatch (allowed): results from {agent!r}, baseline from "
                  f"{baseline.agent!r}.",)
    labels = {label for runs in loaded.values() for label in runs.isolation}
    notes += tuple(f"NOTICE: {n}" for n in label_notices(labels))
    states = {
        t.id: gate.TaskState(t.id, t.number,
                             t.prompt_hash if t.prompt_path.is_file() else None, t.aspirational)
        for t in tasks
    }
    summaries = summarize_results(loaded, k)
    task_results = {
        task: gate.TaskResult(summaries[task], frozenset(runs.prompt_hashes))
        for task, runs in loaded.items()
    }
    warnings = calibration.check_all(
        calibration.expected_rates(tasks),
        {task: [(s.recorded, s.passes, s.runs) for s in entry.history]
         for task, entry in baseline.entries.items()},
    )
    outcomes = (outcome for runs in loaded.values() for outcome in runs.outcomes())
    return gate.compare(baseline, states, task_results, k=shown_k, agent=agent,
                        calibration=tuple(warnings), notes=notes,
                        broken=gate.setup_broken(outcomes))
