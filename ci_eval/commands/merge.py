"""`ci-eval merge`: the results folders of shards -> one validated results folder."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import add_json_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "merge",
        help="merge the results folders of shards into one",
        description="Read every *.jsonl of each DIR (every line validated as `ci-eval report` "
        "does), pool each task's runs across the folders and write them to OUT, a new or empty "
        "folder, atomically. The same (task, run) from two folders -- identical or conflicting "
        "-- a run beyond what was asked, or a second agent is refused naming file:line, and "
        "nothing is written. Exit 0, 2 on bad input.",
    )
    parser.add_argument("folders", nargs="+", metavar="DIR", help="shard results folders")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="folder to create with the merged results (must not exist or be "
                        "empty)")
    add_json_argument(parser, "print what was merged as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from ci_eval.results.merge import merge_controls, merge_folders, write_merged

    merged = merge_folders([Path(f) for f in args.folders])
    write_merged(merged, Path(args.out))
    merge_controls([Path(f) for f in args.folders], Path(args.out))
    runs = merged.runs
    if args.json:
        sys.stdout.write(json.dumps({
            "out": str(args.out), "folders": merged.folders, "tasks": len(merged.records),
            "runs": runs, "sources": merged.sources}, indent=2) + "\n")
    else:
        print(f"merged {runs} run(s) of {len(merged.records)} task(s) from {merged.folders} "
              f"folder(s) into {args.out}")
    return 0
