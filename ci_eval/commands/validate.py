"""`ci-eval validate [TASK...]`: check tasks (layout, metadata, checks lint) and ci-eval.yaml.

stdout: one line per task ("ok" or "invalid"), then a summary. stderr: every problem, one line
each, `path[:line]: [field: ]message`. Exit 0 when everything is valid, 2 when anything is not.
"""

from __future__ import annotations

import argparse

from ci_eval.cli_options import add_json_argument, add_root_argument, add_tasks_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check task folders, metadata.json, checks.py (lint) and ci-eval.yaml",
        description="Report every problem in the tasks (folder names, duplicate numbers, "
        "prompt.md, checks.py, metadata.json against `ci-eval schema metadata`, rubric.yaml and "
        "the declared fail_to_pass / pass_to_pass tests (`ci-eval schema rubric`), "
        "repo-state/, solution/, negatives/, the checks lint) and in ci-eval.yaml. Exit 2 if any.",
    )
    add_root_argument(parser)
    parser.add_argument("--no-lint", action="store_true", help="skip the static lint of checks.py")
    add_json_argument(parser, "print {valid, tasks: {id: [problems]}, config: [problems]}")
    add_tasks_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from ci_eval.agents.config_file import CONFIG_FILE, config_path, load_config
    from ci_eval.agents.harness import harness_problems
    from ci_eval.errors import EXIT_BAD_INPUT, EXIT_OK, UserError
    from ci_eval.tasks.problems import validate_tasks

    report = validate_tasks(args.root, args.tasks or None, lint=not args.no_lint)
    for task_id, found in report.items():
        found += _grading_problems(Path(args.root) / "tasks" / task_id, found)
    try:
        config = load_config(args.root)
        root = Path(args.root)
        config_problems = harness_problems(
            config.agents.values(), root, [(t, root / "tasks" / t / "repo-state") for t in report],
            config_path(root) or root / CONFIG_FILE)
    except UserError as exc:
        config_problems = [str(exc)]
    warnings = _warnings(Path(args.root) / "tasks", report)
    if args.json:
        valid = not config_problems and not any(report.values())
        print(json.dumps({"valid": valid, "tasks": {t: [str(p) for p in found]
                                                    for t, found in report.items()},
                          "config": config_problems, "warnings": warnings}, indent=2))
        return EXIT_OK if valid else EXIT_BAD_INPUT
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    problems = 0
    for task_id, found in report.items():
        state = "ok" if not found else f"invalid ({len(found)} problem{'s' * (len(found) != 1)})"
        print(f"{task_id}: {state}")
        for problem in found:
            print(problem, file=sys.stderr)
        problems += len(found)
    for config_problem in config_problems:
        print(config_problem, file=sys.stderr)
        problems += 1
    invalid = sum(1 for found in report.values() if found)
    print(
        f"{len(report) - invalid} of {len(report)} tasks valid"
        + (f", {problems} problem{'s' * (problems != 1)}" if problems else "")
    )
    return EXIT_BAD_INPUT if problems else EXIT_OK


def _warnings(tasks, report: dict) -> list[str]:
    """What is valid but likely a mistake: a file:// upstream (tasks/upstream.file_url_warning)."""
    from ci_eval.tasks.metadata_problems import read_metadata
    from ci_eval.tasks.model import METADATA_FILE
    from ci_eval.tasks.upstream import file_url_warning

    found = []
    for task_id in report:
        path = tasks / task_id / METADATA_FILE
        metadata, _ = read_metadata(path, task=task_id) if path.is_file() else (None, [])
        warning = file_url_warning(metadata)
        if warning:
            found.append(f"{path}: $.repo.url: {warning}")
    return found


def _grading_problems(folder, found: list) -> list:
    """rubric.yaml and the declared tests (ci_eval/grading/rubric.py), as one problem: the
    first the loader finds. Skipped when metadata.json is unreadable or its schema problems
    already name the declared tests."""
    from pathlib import Path

    from ci_eval.errors import UserError
    from ci_eval.grading.rubric import RUBRIC_FILE, task_grading
    from ci_eval.output import read_user_file
    from ci_eval.tasks.metadata_problems import read_metadata
    from ci_eval.tasks.model import Problem

    rubric = folder / RUBRIC_FILE
    metadata, unreadable = read_metadata(folder / "metadata.json", task=folder.name)
    if unreadable or any((p.field or "").startswith(("$.fail_to_pass", "$.pass_to_pass"))
                         for p in found):
        return []
    try:
        text = None
        if rubric.exists():
            try:
                text = read_user_file(rubric).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UserError(f"not UTF-8 text (byte {exc.start})", path=rubric) from None
        task_grading(metadata, text, metadata_source=folder / "metadata.json",
                     rubric_source=rubric)
    except UserError as exc:
        return [Problem(Path(str(exc.path)) if exc.path is not None else rubric,
                        exc.message, field=exc.field, task=folder.name)]
    return []
