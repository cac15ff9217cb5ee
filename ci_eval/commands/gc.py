"""`ci-eval gc`: archive tasks that passed every run of the last 10 CI runs and are older than
6 calendar months (entropy GC); `--dry-run` shows the plan."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_baseline_argument,
    add_history_argument,
    add_json_argument,
    add_root_argument,
    add_today_argument,
    history_dir,
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "gc",
        help="archive tasks that always pass and are older than 6 months (entropy GC)",
        description="Archive a task when it passed every run in each of the last 10 recorded "
        "runs (--history) AND its metadata `created` date is more than 6 calendar months "
        "before --today (exactly 6 is not enough). Archiving moves tasks/task-NNN-name to "
        "archive/, drops its baseline.json entry and appends a line to archive/ARCHIVE-LOG.md; "
        "`ci-eval restore` brings it back. With fewer than 10 recorded runs nothing is "
        "archived. --dry-run lists candidates with their evidence and near misses with what "
        "they lack, and changes nothing. Exit 0, 2 on bad input.",
    )
    add_root_argument(parser)
    add_history_argument(parser)
    add_baseline_argument(parser)
    add_today_argument(parser)
    parser.add_argument("--dry-run", action="store_true", help="show the plan, change nothing")
    add_json_argument(parser, "print the plan (and what was done) "
                        "as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ci_eval.render.gc import render_text
    from ci_eval.results.history import load_history
    from ci_eval.tasks.load import load_tasks
    from ci_eval.verdict.archive import apply_archive
    from ci_eval.verdict.baseline import baseline_path
    from ci_eval.verdict.gc import parse_day, plan_gc

    root = Path(args.root)
    today = parse_day(args.today, field="--today")
    tasks = load_tasks(root)
    summaries = load_history(history_dir(args),
                             missing_ok=args.history is None)
    plan = plan_gc({t.id: t.created for t in tasks}, summaries, today)
    result = None
    if not args.dry_run and plan.candidates:
        result = apply_archive(root, plan, baseline_file=baseline_path(root, args.baseline))
    if args.json:
        data = plan.to_json()
        data["dry_run"] = args.dry_run
        data["archived"] = list(result.archived) if result else []
        data["dropped_baseline_entries"] = list(result.dropped_baseline_entries) if result else []
        data["log_lines"] = list(result.log_lines) if result else []
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(render_text(plan, dry_run=args.dry_run, archived=result is not None), end="")
    if result:
        if result.dropped_baseline_entries:
            print(f"dropped baseline entries: {', '.join(result.dropped_baseline_entries)}")
        print(f"logged in {result.log_path}")
    return 0
