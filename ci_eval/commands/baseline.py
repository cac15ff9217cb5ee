"""`ci-eval baseline update|show`: the only writer of baseline.json, and a reader."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_agent_mismatch_argument,
    add_baseline_argument,
    add_json_argument,
    add_recorded_date_argument,
    add_requested_runs_argument,
    add_results_argument,
    add_root_argument,
    utc_today,
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "baseline",
        help="record (update) or show the baseline that compare gates against",
        description="`baseline update` records pass rates from a results folder into "
        "baseline.json; `baseline show` prints it.",
    )
    sub = parser.add_subparsers(dest="baseline_command", metavar="ACTION")
    sub.required = True

    update = sub.add_parser(
        "update",
        help="record tasks' pass rates from a results folder",
        description="Record TASK... (or --all tasks that have results) from --results into "
        "baseline.json, atomically, and say what changed. A task below 0.60 is not gated: "
        "if it had no gated entry it is recorded as aspirational; if it had one, the update is "
        "refused and the old entry stays (--allow-below-threshold records it as a gate). "
        "Tasks with fewer valid runs than asked (errors) are refused. Exit 0 (refusals are "
        "reported), 2 on bad input.",
    )
    add_root_argument(update)
    update.add_argument("tasks", nargs="*", metavar="TASK", help="task ids or numbers")
    update.add_argument("--all", action="store_true", help="every task that has results")
    add_results_argument(update)
    add_baseline_argument(update)
    update.add_argument("--allow-below-threshold", action="store_true",
                        help="record (and gate) tasks whose pass rate is below 0.60")
    add_agent_mismatch_argument(update, records=True)
    add_recorded_date_argument(update)
    add_requested_runs_argument(update, "is refused")
    update.set_defaults(handler=run_update)

    show = sub.add_parser("show", help="print baseline.json as a table (or --json)",
                          description="Print the baseline: agent, and per task the pass rate, "
                          "runs, recorded date, gated or aspirational, tokens, wall seconds.")
    add_root_argument(show)
    add_baseline_argument(show)
    add_json_argument(show, "print the validated file as JSON")
    show.set_defaults(handler=run_show)


def run_update(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from ci_eval.agents.config_file import load_config
    from ci_eval.agents.harness_of import harness_files_of
    from ci_eval.verdict.update import update_baseline

    root = Path(args.root)
    rules = load_config(root).gate
    update = update_baseline(
        root, args.tasks, every=args.all, results_dir=root / args.results,
        baseline_file=args.baseline, recorded=args.date or utc_today(), k=args.k,
        allow_below_threshold=args.allow_below_threshold,
        allow_agent_mismatch=args.allow_agent_mismatch,
        min_baseline_rate=rules.min_baseline_rate, harness_of=harness_files_of(root))
    print("\n".join([*update.lines, update.outcome]))
    if update.refused:
        print(f"ci-eval: {update.refused} task(s) refused; see above", file=sys.stderr)
    return 0


def run_show(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from ci_eval.render.terminal import fit_table
    from ci_eval.tasks.model import short_hash
    from ci_eval.verdict.baseline import baseline_path, dumps_baseline, load_baseline

    path = baseline_path(Path(args.root), args.baseline)
    baseline = load_baseline(path)
    if args.json:
        sys.stdout.write(dumps_baseline(baseline))
        return 0
    rows = []
    for task in sorted(baseline.entries):
        e = baseline.entries[task]
        rows.append([
            task,
            f"{float(e.pass_rate):.2f} ({e.passes}/{e.runs})",
            "aspirational" if e.aspirational else "gated",
            e.recorded,
            "—" if e.avg_tokens is None else f"{e.avg_tokens:.0f}",
            "—" if e.avg_wall_seconds is None else f"{e.avg_wall_seconds:.1f}",
            len(e.history),
            short_hash(e.prompt_hash),
        ])
    print(f"{path}: agent {baseline.agent or 'none'}, {len(rows)} task(s)")
    if rows:
        print(fit_table(rows, ["Task", "Pass rate", "Gate", "Recorded", "Tokens", "Wall s",
                               "Observations", "Prompt"]))
    return 0
