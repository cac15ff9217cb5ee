"""`ci-eval list [--json] [TASK...]`: the tasks under tasks/ with their metadata."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import add_json_argument, add_root_argument, add_tasks_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list tasks with difficulty, area, tags, aspirational flag and human label",
        description="List the tasks under tasks/ (all, or the ones named). Loading is strict: "
        "a task with a bad folder name or metadata.json is an error (exit 2).",
    )
    add_root_argument(parser)
    add_json_argument(parser, "print a JSON list of objects")
    add_tasks_argument(parser)
    parser.set_defaults(handler=run)


def task_record(task) -> dict:
    """The JSON object `list --json` prints for a task."""
    return {
        "id": task.id,
        "number": task.number,
        "path": task.path.as_posix(),
        "difficulty": task.difficulty,
        "area": task.area,
        "tags": task.tags,
        "created": task.metadata.get("created"),
        "aspirational": task.aspirational,
        "human_label": task.human_label,
        "requires": task.requires,
        "timeout_seconds": {"agent": task.agent_timeout, "checks": task.checks_timeout},
    }


def _label(task) -> str:
    label = task.human_label
    if not label:
        return "-"
    text = f"{label['expected_pass_rate']:.2f}"
    who = ", ".join(str(label[k]) for k in ("labeled_by", "labeled_at") if label.get(k))
    return f"{text} ({who})" if who else text


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from ci_eval.tasks.load import load_tasks

    tasks = load_tasks(args.root, args.tasks or None)
    if args.json:
        print(json.dumps([task_record(t) for t in tasks], indent=2))
        return 0
    if not tasks:
        print("no tasks under tasks/", file=sys.stderr)
        return 0
    from ci_eval.render.terminal import fit_table

    rows = [
        [
            t.id,
            t.difficulty,
            t.area,
            ", ".join(t.tags) or "-",
            "yes" if t.aspirational else "no",
            _label(t),
        ]
        for t in tasks
    ]
    headers = ["task", "difficulty", "area", "tags", "aspirational", "human label"]
    print(fit_table(rows, headers))
    return 0
