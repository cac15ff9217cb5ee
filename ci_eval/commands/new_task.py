"""`ci-eval new-task NAME [--from-failure-log FILE]` and `ci-eval new-task --list-logs`: start a
task from the template or from an observed failure; list the failure logs not yet tasks."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import add_json_argument, add_root_argument, add_today_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "new-task",
        help="create tasks/task-NNN-NAME from the template or a failure log; list open logs",
        description="Create tasks/task-NNN-NAME with the next free number (archived numbers "
        "and baseline entries count, so none is reused). From a failure log (`ci-eval schema "
        "failure-log`) prompt.md and metadata.json are prefilled (created = today, the log "
        "recorded as x-failure-log); repo-state/, checks.py and solution/ get placeholders "
        "that `ci-eval validate` reports until they are written. Without a log the whole "
        "template is copied. --list-logs lists the logs in the failure-logs folder "
        "(`failure_logs:` in ci-eval.yaml, default .ci-eval/failure-logs/) that no task in "
        "tasks/ or archive/ was made from. Exit 0, 2 on bad input.",
    )
    add_root_argument(parser)
    parser.add_argument("name", nargs="?", metavar="NAME",
                        help="kebab-case name, without task-NNN- (e.g. stop-hook-blocks-on-ruff)")
    parser.add_argument("--from-failure-log", metavar="FILE",
                        help="failure log to prefill from, relative to --root")
    parser.add_argument("--list-logs", action="store_true",
                        help="list the failure logs not yet turned into tasks")
    parser.add_argument("--from-commit", metavar="SHA",
                        help="one candidate from a fix commit and its tests, as `ci-eval "
                        "generate --from-history` makes them (docs/generate.md)")
    parser.add_argument("--repo", metavar="REPO", help="with --from-commit: the repository "
                        "(default: --root's own)")
    parser.add_argument("--into", metavar="DIR", default="generated",
                        help="with --from-commit: where the candidate lands (default generated/)")
    add_today_argument(parser, "the new task's created date (default: today, UTC)")
    add_json_argument(parser, "print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ci_eval.errors import UserError

    if args.from_commit:
        if args.name or args.from_failure_log or args.list_logs:
            raise UserError("--from-commit takes no NAME, --from-failure-log or --list-logs",
                            field="--from-commit")
        return _from_commit(args)
    if args.list_logs:
        if args.name or args.from_failure_log:
            raise UserError("--list-logs takes no NAME or --from-failure-log", field="--list-logs")
        return _list_logs(args)
    if not args.name:
        raise UserError("name the new task (kebab-case), or pass --list-logs", field="NAME")
    return _new_task(args)


def _logs_folder(root):
    from ci_eval.agents.config_file import load_config

    return root / load_config(root).failure_logs


def _list_logs(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ci_eval.tasks.failure_log import list_failure_logs, source_key, turned_logs

    root = Path(args.root)
    folder = _logs_folder(root)
    logs = list_failure_logs(folder)
    turned = turned_logs(root)
    rows = [(log, turned.get(source_key(root, log.path))) for log in logs]
    open_logs = [log for log, task in rows if task is None]
    if args.json:
        print(json.dumps({
            "folder": str(folder),
            "logs": [{"path": str(log.path), "turned_into": task, **log.to_json()}
                     for log, task in rows],
            "not_turned": [str(log.path) for log in open_logs],
        }, indent=2, ensure_ascii=False))
        return 0
    print(f"{folder}: {len(logs)} failure log(s), {len(open_logs)} not yet turned into a task")
    for log in open_logs:
        about = " ".join(log.task_description.split())
        about = about if len(about) <= 72 else about[:71] + "…"
        print(f"  {log.path}  {log.observed_at}  [{log.affected_area}]  {about}")
    if open_logs:
        print("turn one into a task: ci-eval new-task NAME --from-failure-log FILE")
    return 0


def _new_task(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ci_eval.errors import UserError
    from ci_eval.tasks.failure_log import read_failure_log, source_key, turned_logs
    from ci_eval.tasks.scaffold import check_name, create_task
    from ci_eval.verdict.baseline import baseline_path, load_baseline
    from ci_eval.verdict.gc import parse_day

    root = Path(args.root)
    check_name(args.name)
    today = parse_day(args.today, field="--today")
    log = source = None
    if args.from_failure_log:
        log = read_failure_log(root / args.from_failure_log)
        source = source_key(root, log.path)
        earlier = turned_logs(root).get(source)
        if earlier:
            raise UserError(f"already turned into {earlier} (its metadata names this log in "
                            "x-failure-log); one failure, one task", path=log.path,
                            field="--from-failure-log")
    base_file = baseline_path(root)
    taken = list(load_baseline(base_file).entries) if base_file.is_file() else []
    created = create_task(root, args.name, created=today, log=log, source=source,
                          also_taken=taken)
    todo = [str(p.relative_to(root)) if p.is_relative_to(root) else str(p)
            for p in created.placeholders]
    if args.json:
        print(json.dumps({"task": created.task, "number": created.number,
                          "path": str(created.path), "failure_log": source,
                          "placeholders": todo}, indent=2, ensure_ascii=False))
        return 0
    origin = f" from {source}" if source else " from the template"
    print(f"created {created.path}{origin}")
    print("write these (`ci-eval validate` reports each until its placeholder is gone):")
    for path in todo:
        print(f"  {path}")
    short = f"task-{created.number:03d}"
    print(f"then: ci-eval validate {short} && ci-eval verify {short}")
    return 0


def _from_commit(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ci_eval.errors import EXIT_FAILED, EXIT_OK
    from ci_eval.generate import mining
    from ci_eval.render.generated import summary_text
    from ci_eval.run.sandbox import isolation
    from ci_eval.verdict.gc import parse_day

    root = Path(args.root)
    into = root / args.into
    options = mining.Options(repo=Path(args.repo) if args.repo else root, into=into, root=root,
                             today=parse_day(args.today, field="--today"))
    summary = mining.from_commit(options, isolation.detect(), args.from_commit).to_json()
    print(json.dumps(summary, indent=2) if args.json else summary_text(summary, into))
    return EXIT_OK if summary["valid_tasks"] else EXIT_FAILED
