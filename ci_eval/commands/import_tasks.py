"""`ci-eval import FORMAT SRC [--into ROOT] [--json]`: turn tasks of a foreign format into native
task folders with the next free numbers, and report what was converted or skipped."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import add_json_argument, add_root_argument, add_today_argument

FORMAT_HELP = {
    "fixture-json": "task.json {id, goal, verifier {name, args}} with buggy/ and expected/",
    "harbor": "Harbor / Terminal-Bench 2: instruction.md, task.toml, environment/Dockerfile, "
    "tests/test.sh, solution/solve.sh (runs on the docker runner)",
    "swe-bench": "a JSON-lines FILE of SWE-bench instances (repo, base_commit, patch, "
    "test_patch, problem_statement, FAIL_TO_PASS, PASS_TO_PASS): tasks pinned to base_commit, "
    "which is fetched",
    "task-yaml": "task.yaml, rubric.yaml, golden_patch.diff, repo/ (Dockerfile optional)",
}


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "import",
        help="import tasks of another format (fixture-json, harbor, swe-bench, task-yaml) as "
        "native task folders",
        description="Convert the tasks of SRC (one task folder, or a folder of them) into "
        "tasks/task-NNN-NAME folders with the next free numbers (archived numbers and "
        "baseline.json entries count). Formats: "
        + "; ".join(f"{name}: {text}" for name, text in FORMAT_HELP.items())
        + ". Every converted task is checked (as `ci-eval validate` and the rubric loader "
        "would) before anything is written; a bad source writes nothing. Tasks already imported "
        "from the same source id are skipped. The report lists what was converted, what was "
        "skipped and why, warnings (text verifiers' false positives and negatives), and what a "
        "person must still write. Exit 0, 2 on bad input.",
    )
    parser.add_argument("format", metavar="FORMAT", choices=sorted(FORMAT_HELP),
                        help="the source format: " + ", ".join(sorted(FORMAT_HELP)))
    parser.add_argument("src", metavar="SRC", help="the source folder (swe-bench: the file)")
    parser.add_argument("--into", metavar="ROOT", default=None,
                        help="repo root to write into (default: --root, or the repo found "
                        "upward from here); its tasks/ is created when missing")
    parser.add_argument("--mirror", metavar="OWNER/NAME=PATH", action="append", default=[],
                        help="swe-bench: fetch OWNER/NAME's commits from the local copy at PATH "
                        "(a clone or bare repository) instead of github.com; the tasks keep the "
                        "published URL (repeatable)")
    parser.add_argument("--env-spec", metavar="FILE", default=None,
                        help="swe-bench: SWE-bench environment specifications (JSON, the shape "
                        "of ci-eval's vendored swe_bench_specs.json) used before the vendored "
                        "ones, for environment/Dockerfile")
    parser.add_argument("--wheels", metavar="DIR", default=None,
                        help="swe-bench: a folder of wheels copied into each task's "
                        "environment/wheels/; the Dockerfile installs from them alone (pip "
                        "--no-index), for a build with no package index")
    add_root_argument(parser)
    add_today_argument(parser, "the imported tasks' created date (default: today, UTC)")
    add_json_argument(parser, "print a JSON report")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ci_eval.errors import UserError
    from ci_eval.importers.base import imported_already, write_tasks
    from ci_eval.importers.formats import FORMATS
    from ci_eval.verdict.baseline import baseline_path, load_baseline
    from ci_eval.verdict.gc import parse_day

    root = Path(args.into or args.root)
    if not root.is_dir():
        raise UserError("folder does not exist", path=root, field="--into")
    importer = FORMATS[args.format]
    today = parse_day(args.today, field="--today")
    src = Path(args.src)
    options: dict[str, object] = {}
    if args.mirror and args.format != "swe-bench":
        raise UserError("only the swe-bench format fetches repositories", field="--mirror")
    for option, value in (("--env-spec", args.env_spec), ("--wheels", args.wheels)):
        if value is not None and args.format != "swe-bench":
            raise UserError("only the swe-bench format writes environments", field=option)
    if args.mirror:
        from ci_eval.importers.swe_bench import parse_mirrors

        options["mirrors"] = parse_mirrors(args.mirror)
    if args.env_spec is not None:
        options["env_spec"] = Path(args.env_spec)
    if args.wheels is not None:
        options["wheels"] = Path(args.wheels)
    conversion = importer.convert(src, today=today, already=imported_already(root, args.format),
                                  **options)
    base_file = baseline_path(root)
    taken = list(load_baseline(base_file).entries) if base_file.is_file() else []
    written = write_tasks(root, conversion.tasks, also_taken=taken,
                          check=lambda folder: _check(folder, src))
    report = {
        "format": args.format, "source": str(src), "into": str(root),
        "imported": [{"task": w.task_id, "source_id": w.task.source_id, "path": str(w.path),
                      "warnings": w.task.warnings, "todo": w.task.todo} for w in written],
        "skipped": [{"source_id": s.source_id, "reason": s.reason} for s in conversion.skipped],
        "warnings": conversion.warnings,
    }
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(_render(report, root))
    return 0


def _check(folder, src) -> None:
    """A staged task must load, have a valid rubric and declared tests, and show no problem
    `ci-eval validate` would report except the placeholders a person must still fill."""
    from ci_eval.errors import UserError
    from ci_eval.run.grade import load_grading
    from ci_eval.tasks.load import load_task
    from ci_eval.tasks.model import PLACEHOLDER_MARKER
    from ci_eval.tasks.problems import validate_task

    try:
        load_grading(load_task(folder))
        problems = [p for p in validate_task(folder) if PLACEHOLDER_MARKER not in p.message]
    except UserError as exc:
        raise UserError(f"the imported task would be invalid: {exc}", path=src) from None
    if problems:
        raise UserError(f"the imported task would be invalid: {problems[0]}", path=src)


def _render(report: dict, root) -> str:
    head = (f"imported {len(report['imported'])} task(s) from {report['source']} "
            f"({report['format']}) into {root}/tasks")
    lines = [head]
    for item in report["imported"]:
        lines.append(f"  {item['task']}  <- {item['source_id']}")
        lines += [f"      warning: {w}" for w in item["warnings"]]
    if report["skipped"]:
        lines.append(f"skipped {len(report['skipped'])}:")
        lines += [f"  {s['source_id']}: {s['reason']}" for s in report["skipped"]]
    todo = [f"  {item['task']}/{t}" for item in report["imported"] for t in item["todo"]]
    if todo:
        lines.append("still to write (`ci-eval validate` reports each until it is done):")
        lines += todo
    lines += [f"WARNING: {w}" for w in report["warnings"]]
    if report["imported"]:
        numbers = " ".join(item["task"].split("-")[1] for item in report["imported"])
        lines.append(f"next: ci-eval validate {numbers} && ci-eval verify {numbers}")
    return "\n".join(lines)
