"""`ci-eval gate`: the action's report mode -- merge shards, compare, publish, exit with the gate.

The steps, in order (each a function below, so the action stays a one-line call):
  1. merge   RESULTS/shard-*/ (the downloaded `results-shard-N` artifacts) into RESULTS/merged/
             (`ci-eval merge`; with no shard folders, RESULTS itself is compared)
  2. compare the merged results with baseline.json (verdict/assemble.build_verdict, as
             `ci-eval compare` does)
  3. publish the markdown report to $GITHUB_STEP_SUMMARY, at most 10 ::error annotations for
             the failing tasks, the step outputs (verdict, regressed, failed, comment-url),
             and the sticky PR comment on pull_request events
  4. on the default branch (a push, a manual or scheduled run): the run summary written to
             RESULTS/history/ (`on_default_branch`); its path is the step output
             history-summary, which action.yml uploads as the artifact `ci-eval-history`
             (`ci-eval history fetch` reads them back for the GC)
  5. exit with the gate's code (0 pass, 1 fail); posting never changes it.
Pull requests that get no secrets (forks, Dependabot) are skipped with a notice and exit 0.
"""

from __future__ import annotations

import argparse

from ci_eval.commands.options import add_baseline_argument, add_root_argument, positive_int

HISTORY_FOLDER = "history"  # RESULTS/history/: the run summary of a default-branch run


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
    parser.add_argument("--results", default="results", metavar="DIR",
                        help="folder holding shard-*/ folders, or results, relative to --root "
                        "(default results/)")
    add_baseline_argument(parser)
    parser.add_argument("-k", type=positive_int, default=None, metavar="N",
                        help="valid runs asked of every task (default: as recorded)")
    parser.add_argument("--allow-agent-mismatch", action="store_true",
                        help="compare results of another agent than the baseline's")
    parser.add_argument("--pr", type=positive_int, metavar="N",
                        help="pull request to comment on (default: the event's)")
    parser.add_argument("--repo", metavar="OWNER/NAME", help="default: $GITHUB_REPOSITORY")
    parser.add_argument("--author", metavar="LOGIN",
                        help="whose comment is ours (default: the token's identity)")
    parser.add_argument("--no-comment", action="store_true", help="do not post the PR comment")
    parser.add_argument("--commit", metavar="SHA", help="commit in the footer (default $GITHUB_SHA)")
    parser.add_argument("--history-out", metavar="DIR",
                        help="on the default branch, where the run summary is written, relative "
                        f"to --root (default RESULTS/{HISTORY_FOLDER}/); its path is the step "
                        "output history-summary")
    parser.add_argument("--no-history", action="store_true",
                        help="do not write the run summary on the default branch")
    parser.add_argument("--history", metavar="DIR",
                        help="run summaries of earlier runs (`ci-eval history fetch --out`): "
                        "when the folder holds any, the comment's full table gets a History "
                        "column (a trend of each task's last runs) and the step summary two "
                        "mermaid charts (the suite's pass rate and cost over the last runs and "
                        "this one); relative to --root")
    parser.set_defaults(handler=run)


def _history(root, history: str | None):
    """The run summaries of the history folder, oldest first; [] without one."""
    from pathlib import Path

    from ci_eval.results.history import load_history

    folder = Path(root) / history if history else None
    if folder is None or not folder.is_dir():
        return []
    return load_history(folder)


def failure_messages(verdict) -> list[str]:
    from ci_eval.render.compare import fmt_delta, fmt_evidence, fmt_rate

    lines = []
    for t in verdict.failed:
        text = (f"{t.task} {t.status}: baseline {fmt_rate(t.baseline_passes, t.baseline_runs)}, "
                f"now {fmt_rate(t.passes, t.runs)} ({fmt_delta(t.delta)}), {fmt_evidence(t)}")
        lines.append(text + (f"; {t.note}" if t.note else ""))
        lines += [f"{t.task} {a.axis} regressed: {a.evidence}" for a in t.failing_axes]
    return lines


def outputs_of(verdict, comment_url: str) -> dict[str, str]:
    return {
        "verdict": "pass" if verdict.passed else "fail",
        "regressed": str(sum(1 for t in verdict.tasks if t.status == "regressed" and t.gated)),
        "failed": str(len(verdict.failed)),
        "exit-code": str(verdict.exit_code),
        "comment-url": comment_url,
    }


def this_run(ctx, verdict, compared, k=None):
    """The run summary of this CI run (per task: valid runs, passes, errors, status, usage
    totals and the gate's status)."""
    import datetime as dt
    import os

    from ci_eval import __version__
    from ci_eval.results import history
    from ci_eval.results.stream import require_runs
    from ci_eval.results.summary import summarize_results

    sha = (ctx.sha or "").lower()
    now = dt.datetime.now(dt.timezone.utc)
    return history.build_summary(
        summarize_results(require_runs(compared), k),
        date=now.date().isoformat(),
        recorded_at=history.utc_timestamp(now),
        commit=sha if history.COMMIT_RE.match(sha) else None,
        agent=verdict.agent,
        ci_eval_version=__version__,
        gate={t.task: t.status for t in verdict.tasks},
        ci_run=history.ci_run_from_env(os.environ),
    )


def on_default_branch(summary, history_dir):
    """Runs on the default branch record the run's history: `summary` written as a new file in
    `history_dir`; its path, which action.yml uploads as the `ci-eval-history` artifact."""
    from ci_eval.results import history

    return history.write_summary(history_dir, summary)


def run(args: argparse.Namespace) -> int:
    import os
    import sys
    from pathlib import Path

    from ci_eval.agents.config import load_config
    from ci_eval.github import actions, context
    from ci_eval.github.comment import Posted, post_or_fall_back
    from ci_eval.render import trend
    from ci_eval.render.compare import render_markdown, render_table, verdict_line
    from ci_eval.results.merge import merge_shard_folders
    from ci_eval.verdict.assemble import build_verdict

    ctx = context.from_env()
    skip = context.no_secrets_reason(ctx)
    if skip:
        actions.notice(f"ci-eval skipped: {skip}", title="ci-eval")
        actions.append_summary(f"### ⏭️ ci-eval skipped\n\n{skip}\n")
        print(f"ci-eval: skipped: {skip}", file=sys.stderr)
        return 0

    root = Path(args.root)
    compared, shards = merge_shard_folders(root / args.results)
    if shards:
        print(f"ci-eval: merged {shards} shard folder(s) into {compared}", file=sys.stderr)
    verdict = build_verdict(root, compared, args.baseline, k=args.k,
                            allow_agent_mismatch=args.allow_agent_mismatch,
                            rules=load_config(root).gate)
    commit = args.commit or ctx.sha
    earlier = _history(root, args.history)
    markdown = render_markdown(verdict, commit=commit,
                               trends=trend.trends(earlier) if earlier else None)
    sys.stdout.write(render_table(verdict, commit=commit))
    in_summary = actions.append_summary(markdown)
    record = context.on_default_branch(ctx) and not args.no_history
    current = this_run(ctx, verdict, compared, k=args.k) if earlier or record else None
    if earlier:
        actions.append_summary(trend.mermaid_charts([*earlier, current]))
    for message in actions.limit_annotations(failure_messages(verdict)):
        actions.error(message, title="ci-eval")

    comment_url = ""
    pr = args.pr or (ctx.pr_number if ctx.event_name == "pull_request" else None)
    if pr and not args.no_comment:
        try:
            posted = post_or_fall_back(args.repo or ctx.repository, pr, markdown,
                                       summary_has_body=in_summary, author=args.author)
        except Exception as exc:  # noqa: BLE001 - posting never changes the gate's exit code
            posted = Posted(None, f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
        if posted.result:
            comment_url = posted.result.url
            print(f"ci-eval: {posted.result.action} the comment {comment_url}", file=sys.stderr)
        else:
            actions.warning(f"the PR comment was not posted: {posted.problem}", title="ci-eval")
    outputs = outputs_of(verdict, comment_url)
    if record:
        history_dir = root / (args.history_out or f"{args.results}/{HISTORY_FOLDER}")
        written = on_default_branch(current, history_dir)
        outputs["history-summary"] = str(written.resolve())
        print(f"ci-eval: recorded the run summary {written}", file=sys.stderr)
    if os.environ.get("GITHUB_OUTPUT"):
        actions.set_outputs(outputs)
    print(verdict_line(verdict, emoji=False), file=sys.stderr)
    return verdict.exit_code
