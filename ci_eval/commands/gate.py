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


def this_run(ctx, verdict, compared, k=None, root=".", main=False):
    """The run summary of this CI run (per task: valid runs, passes, errors, status, usage
    totals and the gate's status, and the agent's harness; on `main`, the default branch, each
    gated task's drift against its baseline)."""
    import datetime as dt
    import os

    from ci_eval import __version__
    from ci_eval.agents.harness_of import harness_files_of
    from ci_eval.results import history
    from ci_eval.results.stream import require_runs
    from ci_eval.results.summary import summarize_results
    from ci_eval.verdict.harness_changes import recorded_harness
    from ci_eval.verdict.main_drift import drift_records

    sha = (ctx.sha or "").lower()
    now = dt.datetime.now(dt.timezone.utc)
    loaded = require_runs(compared)
    harness, _note = recorded_harness(
        {d for runs in loaded.values() for d in runs.harnesses},
        harness_files_of(root)(verdict.agent) if verdict.agent else None)
    return history.build_summary(
        summarize_results(loaded, k),
        date=now.date().isoformat(),
        recorded_at=history.utc_timestamp(now),
        commit=sha if history.COMMIT_RE.match(sha) else None,
        agent=verdict.agent,
        ci_eval_version=__version__,
        gate={t.task: t.status for t in verdict.tasks},
        ci_run=history.ci_run_from_env(os.environ),
        harness=harness.to_json() if harness else None,
        drift={task: (d.drifted, d.baseline_passes, d.baseline_runs)
               for task, d in drift_records(verdict).items()} if main else None,
    )


def on_default_branch(summary, history_dir):
    """Runs on the default branch record the run's history: `summary` written as a new file in
    `history_dir`; its path, which action.yml uploads as the `ci-eval-history` artifact."""
    from ci_eval.results import history

    return history.write_summary(history_dir, summary)


def publish(markdown: str, ctx, args, *, failed: bool, changed: bool) -> str:
    """The step summary, then the sticky comment on the pull request as --comment says (never
    raising: posting never changes the exit code); the comment's URL or ""."""
    import sys

    from ci_eval.github import actions
    from ci_eval.github.comment import Posted, marker_for, minimized_note, post_or_fall_back
    from ci_eval.github.comment_policy import may_create

    in_summary = actions.append_summary(markdown)
    pr = args.pr or (ctx.pr_number if ctx.event_name == "pull_request" else None)
    create = may_create("off" if args.no_comment else args.comment, failed=failed,
                        changed=changed)
    if not pr or create is None:
        return ""
    marker = marker_for(args.comment_key)
    try:
        posted = post_or_fall_back(args.repo or ctx.repository, pr, markdown,
                                   summary_has_body=in_summary, author=args.author,
                                   marker=marker, create=create)
    except Exception as exc:  # noqa: BLE001 - posting never changes the gate's exit code
        posted = Posted(None, f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    if posted.result and posted.result.action == "skipped":
        print(f"ci-eval: no comment (--comment {args.comment}: nothing to report, and none to "
              "update)", file=sys.stderr)
        return ""
    if posted.result:
        print(f"ci-eval: {posted.result.action} the comment {posted.result.url}", file=sys.stderr)
        if note := minimized_note(posted.result, pr):
            actions.notice(note, title="ci-eval")
        return posted.result.url
    actions.warning(f"the PR comment was not posted: {posted.problem}", title="ci-eval")
    return ""


def fail_without_verdict(markdown: str, headline: str, ctx, args) -> int:
    """A run with nothing to compare (setup broken, plan failed): one annotation, the comment,
    the outputs of a failed gate, exit 1."""
    import os
    import sys

    from ci_eval.github import actions

    actions.error(headline, title="ci-eval")
    url = publish(markdown, ctx, args, failed=True, changed=True)
    if os.environ.get("GITHUB_OUTPUT"):
        actions.set_outputs({"verdict": "fail", "regressed": "0", "failed": "0",
                             "exit-code": "1", "comment-url": url})
    print(f"FAIL {headline}", file=sys.stderr)
    return 1


def shard_jobs_of(ctx, count: int) -> dict:
    """Each shard's job in this workflow run (for links), {} when GitHub cannot say: the
    comment then links the whole run."""
    import sys

    from ci_eval.github.jobs import shard_jobs

    jobs, problem = shard_jobs(ctx, count)
    if problem:
        print(f"ci-eval: shard jobs not listed, the comment links the workflow run instead "
              f"({problem})", file=sys.stderr)
    return jobs


def present_shards(results_dir) -> set[int]:
    from ci_eval.results.merge import SHARD_GLOB

    return {int(p.name.split("-", 1)[1]) for p in results_dir.glob(SHARD_GLOB)
            if p.is_dir() and p.name.split("-", 1)[1].isdigit()}


def run(args: argparse.Namespace) -> int:
    import os
    import sys
    from pathlib import Path

    from ci_eval.agents.config_file import load_config
    from ci_eval.github import actions, context
    from ci_eval.github.comment import marker_for
    from ci_eval.render import no_verdict, trend
    from ci_eval.render.compare import render_markdown, render_table, verdict_line
    from ci_eval.results import setup_problem
    from ci_eval.results.merge import SHARD_GLOB, merge_shard_folders
    from ci_eval.verdict import planned_shards
    from ci_eval.verdict import main_drift
    from ci_eval.verdict.assemble import build_verdict

    ctx = context.from_env()
    skip = context.no_secrets_reason(ctx)
    if skip:
        actions.notice(f"ci-eval skipped: {skip}", title="ci-eval")
        actions.append_summary(f"### ⏭️ ci-eval skipped\n\n{skip}\n")
        print(f"ci-eval: skipped: {skip}", file=sys.stderr)
        return 0

    root = Path(args.root)
    marker_for(args.comment_key)  # a bad key is bad input before anything is posted
    commit = context.footer_commit(args.commit, ctx.sha, root)
    if args.idle and not (args.plan_result and args.plan_result != "success"):
        actions.notice(args.idle, title="ci-eval")
        url = publish(no_verdict.render_idle(args.idle, run_url=ctx.run_url, commit=commit),
                      ctx, args, failed=False, changed=False)
        if os.environ.get("GITHUB_OUTPUT"):
            actions.set_outputs({"verdict": "pass", "regressed": "0", "failed": "0",
                                 "exit-code": "0", "comment-url": url})
        print(f"PASS ci-eval: {args.idle}", file=sys.stderr)
        return 0
    if args.plan_result and args.plan_result != "success":
        return fail_without_verdict(
            no_verdict.render_plan_failed(args.plan_result, run_url=ctx.run_url, commit=commit),
            no_verdict.plan_failed_headline(args.plan_result), ctx, args)
    plan = planned_shards.parse_plan(args.plan) if args.plan else None
    count, planned = plan or (0, {})
    jobs = shard_jobs_of(ctx, count) if plan else {}
    results_dir = root / args.results
    problems = setup_problem.find(results_dir, SHARD_GLOB) if results_dir.is_dir() else []
    if problems:
        job_links = {f"{i}/{count}": job.url for i, job in jobs.items()}
        return fail_without_verdict(
            no_verdict.render_setup_broken(problems, run_url=ctx.run_url, commit=commit,
                                           job_links=job_links),
            no_verdict.setup_headline(problems), ctx, args)
    if plan:
        results_dir.mkdir(parents=True, exist_ok=True)
    compared, shards = merge_shard_folders(results_dir)
    if shards:
        print(f"ci-eval: merged {shards} shard folder(s) into {compared}", file=sys.stderr)
    from ci_eval.agents.harness_of import harness_files_of

    verdict = build_verdict(root, compared, args.baseline, k=args.k,
                            allow_agent_mismatch=args.allow_agent_mismatch,
                            rules=load_config(root).gate, allow_empty=plan is not None,
                            harness_of=harness_files_of(root))
    main = context.on_default_branch(ctx)
    if main:  # no pull request to blame: main below its baseline is drift
        verdict = main_drift.on_default_branch(verdict)
    incomplete = False
    if plan:
        links = {i: jobs[i].url if i in jobs else ctx.run_url for i in planned
                 if i in jobs or ctx.run_url}
        present = present_shards(results_dir)
        incomplete = bool(set(planned) - present)
        verdict = planned_shards.mark_missing(verdict, count, planned, present, links)
    earlier = _history(root, args.history)
    failed_jobs = [(f"shard {i}/{count}", job.conclusion, job.url)
                   for i, job in sorted(jobs.items()) if job.failed]
    markdown = render_markdown(verdict, commit=commit,
                               trends=trend.trends(earlier) if earlier else None,
                               run_url=ctx.run_url, failed_jobs=failed_jobs)
    sys.stdout.write(render_table(verdict, commit=commit))
    for message in actions.limit_annotations(failure_messages(verdict)):
        actions.error(message, title="ci-eval")
    for message in actions.limit_annotations([f"{t.task} drifted: {t.note}"
                                              for t in verdict.drifted if not t.fails_gate]):
        actions.warning(message, title="ci-eval drift")
    changed = any(t.status != "unchanged" for t in verdict.tasks)
    outputs = outputs_of(verdict, publish(markdown, ctx, args, failed=not verdict.passed,
                                          changed=changed))
    # an incomplete run (a planned shard missing) is neither recorded nor charted
    record = context.on_default_branch(ctx) and not args.no_history and not incomplete
    current = (this_run(ctx, verdict, compared, k=args.k, root=root, main=main)
               if (earlier or record) and not incomplete else None)
    if earlier and current is not None:
        actions.append_summary(trend.mermaid_charts([*earlier, current]))
    if incomplete and context.on_default_branch(ctx):
        actions.notice("no run summary recorded: a planned shard is missing (the history "
                       "keeps complete runs only)", title="ci-eval")
    if record:
        history_dir = root / (args.history_out or f"{args.results}/{HISTORY_FOLDER}")
        written = on_default_branch(current, history_dir)
        outputs["history-summary"] = str(written.resolve())
        print(f"ci-eval: recorded the run summary {written}", file=sys.stderr)
    if os.environ.get("GITHUB_OUTPUT"):
        actions.set_outputs(outputs)
    print(verdict_line(verdict, emoji=False), file=sys.stderr)
    return verdict.exit_code
