"""`ci-eval restore TASK`: bring an archived task back from archive/ (its baseline must be
re-recorded)."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_baseline_argument,
    add_json_argument,
    add_root_argument,
    add_today_argument,
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "restore",
        help="bring an archived task back from archive/ to tasks/",
        description="Move archive/task-NNN-name back to tasks/ and append a line to "
        "archive/ARCHIVE-LOG.md. Its baseline entry was dropped when it was archived: run it "
        "and record a new one (`ci-eval baseline update task-NNN`). Exit 0, 2 on bad input.",
    )
    add_root_argument(parser)
    parser.add_argument("task", metavar="TASK", help="archived task: task-NNN-name, task-NNN or NNN")
    add_baseline_argument(parser)
    add_today_argument(parser, "date of the log line (default: today, UTC)")
    add_json_argument(parser, "print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ci_eval.verdict.archive import restore_task
    from ci_eval.verdict.baseline import baseline_path
    from ci_eval.verdict.gc import parse_day

    root = Path(args.root)
    today = parse_day(args.today, field="--today")
    result = restore_task(root, args.task, today,
                          baseline_file=baseline_path(root, args.baseline))
    agent = _baseline_agent(baseline_path(root, args.baseline))
    rerecord = (f"ci-eval run {result.task} --agent {agent or 'NAME'} -k 40 && "
                f"ci-eval baseline update {result.task}")
    if args.json:
        print(json.dumps({"restored": result.task, "path": str(result.path),
                          "log_line": result.log_line, "baseline_must_be_recorded": True,
                          "baseline_entry_present": result.baseline_entry_present,
                          "next": rerecord}, indent=2, ensure_ascii=False))
        return 0
    print(f"restored {result.task} to {result.path}")
    print(f"logged in {result.log_path}: {result.log_line}")
    if result.baseline_entry_present:
        print(f"note: baseline.json still has an entry for {result.task}; it predates the "
              "archive: re-record it")
    print(f"its baseline must be re-recorded: {rerecord}")
    return 0


def _baseline_agent(path) -> str:
    """The agent the baseline was recorded with ("" when there is no baseline or none named):
    the re-recording must use it, or the update is refused as another agent's."""
    from ci_eval.errors import UserError
    from ci_eval.verdict.baseline import load_baseline

    if not path.is_file():
        return ""
    try:
        return load_baseline(path).agent or ""
    except UserError:
        return ""
