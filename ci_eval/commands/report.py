"""`ci-eval report`: per-task numbers from a results folder."""

from __future__ import annotations

from ci_eval.cli_options import (
    add_json_format_alias,
    add_output_argument,
    add_requested_runs_argument,
    add_results_argument,
    add_root_argument,
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="summarize a results folder (table, json or junit)",
        description="Per task: runs, passes, pass rate, pass@1, unbiased pass@k, pass^k, mean "
        "tokens, mean and p95 wall seconds, total cost, errors. Exit 0, or 1 when a task is "
        "inconclusive (fewer valid runs than asked), 2 on bad input. In JUnit XML a task is a "
        "failure exactly when it makes the exit code 1 (inconclusive); failing runs are "
        "evidence, not a failure: the gate (`ci-eval compare`) judges them.",
    )
    add_root_argument(parser)
    add_results_argument(parser)
    parser.add_argument("--format", choices=("table", "json", "junit"), default="table")
    add_json_format_alias(parser)
    parser.add_argument("--reasons", action="store_true",
                        help="list, per task, the distinct reasons its runs did not pass, with "
                        "counts")
    add_output_argument(parser)
    add_requested_runs_argument(parser, "is inconclusive; also the k of pass@k and pass^k")
    parser.set_defaults(handler=run)


def run(args) -> int:
    from pathlib import Path

    from ci_eval.errors import EXIT_FAILED, EXIT_OK
    from ci_eval.output import emit
    from ci_eval.render import report
    from ci_eval.results import stream
    from ci_eval.results.notices import label_notices as notices_of
    from ci_eval.results.summary import summarize_results

    loaded = stream.require_runs(Path(args.root) / args.results)  # streamed: no diffs held
    by_task = summarize_results(loaded, args.k)
    summaries = [by_task[task] for task in sorted(by_task)]
    notices = notices_of({label for runs in loaded.values() for label in runs.isolation})
    emit(report.render(summaries, args.format, notices, reasons=args.reasons), args.output)
    return EXIT_FAILED if any(s.inconclusive for s in summaries) else EXIT_OK
