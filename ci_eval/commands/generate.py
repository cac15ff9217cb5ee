"""`ci-eval generate --from-history REPO | --mutations REPO --into DIR`: golden-task candidates
from a repository's own history or from synthesized bugs, each verified, left in DIR for review
(docs/generate.md)."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_json_argument,
    add_root_argument,
    add_today_argument,
    positive_float,
    positive_int,
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "generate",
        help="mine golden-task candidates from a repository's history or from synthesized bugs",
        description="--from-history REPO: every commit that changes source and tests together "
        "becomes a candidate (base = the parent plus the commit's test changes, solution = its "
        "other changes); --mutations REPO: one synthesized bug per candidate (an operator "
        "flipped, an off-by-one, a branch dropped, if/else swapped, a constant changed, an "
        "assignment removed) in functions the tests reach, the function's other breaking "
        "mutants as negatives. The repository's tests run sandboxed, each state twice; a "
        "candidate is kept when some tests fail at base and pass with the solution and every "
        "other test passes in both, its prompt gives no line of the fix, and `ci-eval verify` "
        "proves it. Kept tasks land in DIR/tasks/ for review (accept one with git mv into "
        "tasks/); a stopped run resumes where it was. Exit 0, 2 on bad input.",
    )
    add_root_argument(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--from-history", metavar="REPO",
                        help="a git repository (folder or bundle) whose commits to mine")
    source.add_argument("--mutations", metavar="REPO",
                        help="a git repository (folder or bundle) whose functions to mutate")
    parser.add_argument("--into", metavar="DIR", required=True,
                        help="where candidates land (DIR/tasks/), never tasks/ itself")
    parser.add_argument("--limit", type=positive_int, metavar="N",
                        help="history: the N newest commits; mutations: at most N mutants")
    parser.add_argument("--since", metavar="DATE", help="history: commits after DATE (git's "
                        "--since: 2024-01-01, '6 months ago')")
    parser.add_argument("--rev", metavar="RANGE",
                        help="history: a branch, commit or A..B range (default: HEAD); "
                        "mutations: the commit to mutate (default: HEAD)")
    parser.add_argument("-j", "--jobs", type=positive_int, default=1,
                        help="candidates mined at once (default 1)")
    parser.add_argument("--timeout", type=positive_float, default=120.0, metavar="SECONDS",
                        help="one run of the test suite (default 120)")
    parser.add_argument("--pytest-arg", action="append", default=[], metavar="ARG",
                        help="an argument for every pytest run, and the tasks' checks "
                        "(repeatable; e.g. --pytest-arg=--deselect=tests/test_x.py::test_env)")
    parser.add_argument("--max-files", type=positive_int, default=10,
                        help="history: source files a solution may touch (default 10)")
    parser.add_argument("--max-lines", type=positive_int, default=200,
                        help="history: lines a solution may change (default 200)")
    add_today_argument(parser, "the tasks' created date (default: today, UTC)")
    add_json_argument(parser, "print the summary as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ci_eval.errors import EXIT_OK
    from ci_eval.generate import decide, mining
    from ci_eval.render.generated import summary_text
    from ci_eval.run.sandbox import isolation
    from ci_eval.verdict.gc import parse_day

    root = Path(args.root)
    into = Path(args.into)
    options = mining.Options(
        repo=Path(args.from_history or args.mutations), into=into, root=root, jobs=args.jobs,
        limit=args.limit, since=args.since, rev=args.rev, timeout=args.timeout,
        pytest_args=args.pytest_arg, limits=decide.Limits(args.max_files, args.max_lines),
        today=parse_day(args.today, field="--today"))
    iso = isolation.detect()
    generate = mining.from_history if args.from_history else mining.from_mutations
    summary = generate(options, iso)
    if args.json:
        print(json.dumps(summary.to_json(), indent=2))
    else:
        print(summary_text(summary.to_json(), into))
    return EXIT_OK
