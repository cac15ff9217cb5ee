"""`ci-eval schema [NAME] [--output FILE]`: print a packaged JSON schema (for editors and CI).

Every ci_eval/tasks/schemas/NAME.schema.json is available by NAME, and by the file it describes
(`ci-eval schema ci-eval.yaml`: tasks/schema.SCHEMA_FOR_FILE); with no NAME the names are listed.
"""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "schema",
        help="print a JSON schema (ci-eval.yaml, metadata, ...) for editors and other tools",
        description="Print the JSON schema NAME (e.g. metadata: tasks/*/metadata.json; "
        "ci-eval: ci-eval.yaml), or the schema of the file NAME (ci-eval.yaml, metadata.json, "
        "rubric.yaml, baseline.json). Without NAME, list the schemas that exist.",
    )
    parser.add_argument("name", nargs="?", metavar="NAME",
                        help="schema name (see: ci-eval schema) or file name (ci-eval.yaml)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from ci_eval.output import write_atomic
    from ci_eval.tasks import schema

    if not args.name:
        for name in schema.known_schemas():
            print(name)
        return 0
    text = schema.schema_text(args.name)
    if not text.endswith("\n"):
        text += "\n"
    if not args.output or args.output == "-":
        sys.stdout.write(text)
        return 0
    write_atomic(args.output, text, field="--output")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0
