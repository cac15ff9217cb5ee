"""`ci-eval gate`: the action's report mode -- merge shards, compare, publish, exit with the
gate (github/report.py does it: its docstring lists the steps)."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_agent_mismatch_argument,
    add_baseline_argument,
    add_comment_target_arguments,
    add_footer_commit_argument,
    add_requested_runs_argument,
    add_results_argument,
    add_root_argument,
)
from ci_eval.github.comment_policy import COMMENT_POLICIES


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "gate",
        help="report mode of the action: merge shards, compare, publish to GitHub, gate",
        description="Merge RESULTS/shard-*/ into RESULTS/merged/ (every line validated, "
        "duplicates refused), compare with the baseline, write the markdown report to "
        "$GITHUB_STEP_SUMMARY, emit at most 10 ::error annotations for failing tasks, write the "
        "step outputs verdict, regressed, failed and comment-url ($GITHUB_OUTPUT, when set), "
        "post or update the sticky comment on the pull request (GITHUB_TOKEN); on the default "
        "branch write the run summary (history) and its path as the output history-summary; "
        "then exit with "
        "the gate's code: 0 pass, 1 a gated task failed, 2 bad input. A comment that cannot be "
        "posted is a warning, never a different exit code. Pull requests from forks or by "
        "Dependabot (no secrets) are skipped with a notice, exit 0.",
    )
    add_root_argument(parser)
    add_results_argument(parser, shards=True)
    add_baseline_argument(parser)
    add_requested_runs_argument(parser)
    add_agent_mismatch_argument(parser)
    add_comment_target_arguments(parser)
    parser.add_argument("--no-comment", action="store_true",
                        help="do not post the PR comment (same as --comment off)")
    parser.add_argument("--comment", choices=COMMENT_POLICIES, default="always",
                        help="always (default): create or update the comment; on-change: create "
                        "it only when a task's status is not unchanged or the gate fails; "
                        "on-failure: only when the gate fails (an existing comment is updated "
                        "either way, so a fixed PR's comment turns green); off: never")
    add_footer_commit_argument(parser)
    parser.add_argument("--history-out", metavar="DIR",
                        help="on the default branch, where the run summary is written, relative "
                        "to --root (default RESULTS/history/); its path is the step "
                        "output history-summary")
    parser.add_argument("--no-history", action="store_true",
                        help="do not write the run summary on the default branch")
    parser.add_argument("--history", metavar="DIR",
                        help="run summaries of earlier runs (`ci-eval history fetch --out`): "
                        "when the folder holds any, the comment's full table gets a History "
                        "column (a trend of each task's last runs) and the step summary two "
                        "mermaid charts (the suite's pass rate and cost over the last runs and "
                        "this one); relative to --root")
    parser.add_argument("--idle", metavar="REASON",
                        help="the plan job's output `idle`: the pull request changes nothing "
                        "the verdict depends on, no shard ran; post REASON as the comment's one "
                        "line and pass")
    parser.add_argument("--plan", metavar="JSON",
                        help="the plan job's output `plan` ({\"of\": N, \"shards\": {...}}): a "
                        "planned shard whose RESULTS/shard-I/ is missing (its job died before "
                        "the upload) makes its tasks inconclusive, named by shard, and fails "
                        "the gate")
    parser.add_argument("--plan-result", metavar="RESULT",
                        help="the plan job's result (needs.plan.result): anything but success "
                        "posts that no task was evaluated and exits 1")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import dataclasses
    from pathlib import Path

    from ci_eval.agents.config_file import load_config
    from ci_eval.agents.harness_of import harness_files_of
    from ci_eval.github.report import ReportRequest, report

    root = Path(args.root)
    names = {f.name for f in dataclasses.fields(ReportRequest)} - {"rules_of", "harness_of"}
    request = ReportRequest(**{name: getattr(args, name) for name in names},
                            rules_of=lambda: load_config(root).gate,
                            harness_of=harness_files_of(root))
    return report(request).exit_code
