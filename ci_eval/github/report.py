"""The action's report mode (`ci-eval gate`): merge shards, compare, publish, the gate's code.

The steps, in order:
  1. merge   RESULTS/shard-*/ (the downloaded `results-shard-N` artifacts) into RESULTS/merged/
             (`ci-eval merge`; with no shard folders, RESULTS itself is compared)
  2. compare the merged results with baseline.json (verdict/assemble.build_verdict, as
             `ci-eval compare` does)
  3. publish the markdown report to $GITHUB_STEP_SUMMARY, at most 10 ::error annotations for
             the failing tasks, the step outputs (verdict, regressed, failed, comment-url),
             and the sticky PR comment on pull_request events
  4. on the default branch (a push, a manual or scheduled run): the run summary written to
             RESULTS/history/ (`write_run_summary`); its path is the step output
             history-summary, which action.yml uploads as the artifact `ci-eval-history`
             (`ci-eval history fetch` reads them back for the GC)
  5. the gate's code (0 pass, 1 fail); posting never changes it.
Pull requests that get no secrets (forks, Dependabot) are skipped with a notice and pass.
ci-eval.yaml's gate rules and the agent's harness files come in from the caller (agents/ is
above github/)."""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.github import actions, context
from ci_eval.github.comment import Posted, marker_for, minimized_note, post_or_fall_back
from ci_eval.github.comment_policy import may_create
from ci_eval.github.jobs import shard_jobs
from ci_eval.render import no_verdict, trend
from ci_eval.render.compare import (
    fmt_delta,
    fmt_evidence,
    fmt_rate,
    render_markdown,
    render_table,
    verdict_line,
)
from ci_eval.results import history, setup_problem
from ci_eval.results.history import load_history
from ci_eval.results.merge import SHARD_GLOB, merge_shard_folders
from ci_eval.results.stream import require_runs
from ci_eval.verdict import main_drift, planned_shards
from ci_eval.verdict.assemble import build_verdict
from ci_eval.verdict.run_summary import summary_of_results
from ci_eval.verdict.rules import DEFAULT_RULES, GateRules

HISTORY_FOLDER = "history"  # RESULTS/history/: the run summary of a default-branch run


@dataclass(frozen=True)
class ReportRequest:
    """`ci-eval gate`'s options (the names of its argparse destinations), with ci-eval.yaml's
    gate rules (read only once there is something to compare) and the agent's harness files
    (agents/harness_of.harness_files_of(root))."""

    root: str = "."
    results: str = "results"
    baseline: str | None = None
    k: int | None = None
    allow_agent_mismatch: bool = False
    pr: int | None = None
    repo: str | None = None
    author: str | None = None
    comment_key: str | None = None
    no_comment: bool = False
    comment: str = "always"
    commit: str | None = None
    history_out: str | None = None
    no_history: bool = False
    history: str | None = None
    idle: str | None = None
    plan: str | None = None
    plan_result: str | None = None
    rules_of: Callable[[], GateRules] = field(default=lambda: DEFAULT_RULES, compare=False)
    harness_of: Callable | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ReportOutcome:
    """The gate's exit code and the step outputs written (also without $GITHUB_OUTPUT)."""

    exit_code: int
    outputs: dict[str, str]


def report(request: ReportRequest) -> ReportOutcome:
    """The whole report mode for `request`: the outcome says how the gate ended."""
    ctx = context.from_env()
    skip = context.no_secrets_reason(ctx)
    if skip:
        actions.notice(f"ci-eval skipped: {skip}", title="ci-eval")
        actions.append_summary(f"### ⏭️ ci-eval skipped\n\n{skip}\n")
        print(f"ci-eval: skipped: {skip}", file=sys.stderr)
        return ReportOutcome(0, {})
    root = Path(request.root)
    marker_for(request.comment_key)  # a bad key is bad input before anything is posted
    commit = context.footer_commit(request.commit, ctx.sha, root)
    if request.idle and not (request.plan_result and request.plan_result != "success"):
        actions.notice(request.idle, title="ci-eval")
        url = publish(no_verdict.render_idle(request.idle, run_url=ctx.run_url, commit=commit),
                      ctx, request, failed=False, changed=False)
        outputs = {"verdict": "pass", "regressed": "0", "failed": "0", "exit-code": "0",
                   "comment-url": url}
        set_outputs(outputs)
        print(f"PASS ci-eval: {request.idle}", file=sys.stderr)
        return ReportOutcome(0, outputs)
    if request.plan_result and request.plan_result != "success":
        return fail_without_verdict(
            no_verdict.render_plan_failed(request.plan_result, run_url=ctx.run_url,
                                          commit=commit),
            no_verdict.plan_failed_headline(request.plan_result), ctx, request)
    plan = planned_shards.parse_plan(request.plan) if request.plan else None
    jobs = shard_jobs_of(ctx, plan[0]) if plan else {}
    results_dir = root / request.results
    problems = setup_problem.find(results_dir, SHARD_GLOB) if results_dir.is_dir() else []
    if problems:
        job_links = {f"{i}/{plan[0] if plan else 0}": job.url for i, job in jobs.items()}
        return fail_without_verdict(
            no_verdict.render_setup_broken(problems, run_url=ctx.run_url, commit=commit,
                                           job_links=job_links),
            no_verdict.setup_headline(problems), ctx, request)
    return compare_and_publish(request, ctx, commit, plan, jobs)


def compare_and_publish(request: ReportRequest, ctx, commit, plan, jobs) -> ReportOutcome:
    """Steps 1-5 for results that are there to compare."""
    root = Path(request.root)
    results_dir = root / request.results
    count, planned = plan or (0, {})
    if plan:
        results_dir.mkdir(parents=True, exist_ok=True)
    compared, shards = merge_shard_folders(results_dir)
    if shards:
        print(f"ci-eval: merged {shards} shard folder(s) into {compared}", file=sys.stderr)
    main = context.on_default_branch(ctx)
    earlier = _history(root, request.history)
    verdict = build_verdict(root, compared, request.baseline, k=request.k,
                            allow_agent_mismatch=request.allow_agent_mismatch,
                            rules=request.rules_of(), allow_empty=plan is not None,
                            harness_of=request.harness_of,
                            main_history=() if main else earlier)  # main's record, on a PR
    if main:  # no pull request to blame: main below its baseline is drift
        verdict = main_drift.judged_as_main(verdict)
    incomplete = False
    if plan:
        links = {i: jobs[i].url if i in jobs else ctx.run_url for i in planned
                 if i in jobs or ctx.run_url}
        present = present_shards(results_dir)
        incomplete = bool(set(planned) - present)
        verdict = planned_shards.mark_missing(verdict, count, planned, present, links)
    failed_jobs = [(f"shard {i}/{count}", job.conclusion, job.url)
                   for i, job in sorted(jobs.items()) if job.failed]
    markdown = render_markdown(verdict, commit=commit,
                               trends=trend.trends(earlier) if earlier else None,
                               run_url=ctx.run_url, failed_jobs=failed_jobs)
    sys.stdout.write(render_table(verdict, commit=commit))
    annotate(verdict)
    changed = any(t.status != "unchanged" for t in verdict.tasks)
    outputs = outputs_of(verdict, publish(markdown, ctx, request, failed=not verdict.passed,
                                          changed=changed))
    written = record_history(request, ctx, verdict, compared, earlier, incomplete=incomplete,
                             main=main)
    if written is not None:
        outputs["history-summary"] = str(written.resolve())
    set_outputs(outputs)
    print(verdict_line(verdict, emoji=False), file=sys.stderr)
    return ReportOutcome(verdict.exit_code, outputs)


def annotate(verdict) -> None:
    """At most 10 ::error annotations for the failing tasks, 10 warnings for drifted ones."""
    for message in actions.limit_annotations(failure_messages(verdict)):
        actions.error(message, title="ci-eval")
    for message in actions.limit_annotations([f"{t.task} drifted: {t.note}"
                                              for t in verdict.drifted if not t.fails_gate]):
        actions.warning(message, title="ci-eval drift")


def record_history(request: ReportRequest, ctx, verdict, compared, earlier, *,
                   incomplete: bool, main: bool = False) -> Path | None:
    """The charts of this run after the earlier ones, and on the default branch this run's
    summary written (its path returned). An incomplete run (a planned shard missing) is
    neither recorded nor charted."""
    record = context.on_default_branch(ctx) and not request.no_history and not incomplete
    current = (this_run(ctx, verdict, compared, k=request.k, harness_of=request.harness_of,
                        main=main)
               if (earlier or record) and not incomplete else None)
    if earlier and current is not None:
        actions.append_summary(trend.mermaid_charts([*earlier, current]))
    if incomplete and context.on_default_branch(ctx):
        actions.notice("no run summary recorded: a planned shard is missing (the history "
                       "keeps complete runs only)", title="ci-eval")
    if not record:
        return None
    history_dir = Path(request.root) / (request.history_out
                                        or f"{request.results}/{HISTORY_FOLDER}")
    written = write_run_summary(current, history_dir)
    print(f"ci-eval: recorded the run summary {written}", file=sys.stderr)
    return written


def set_outputs(outputs: dict[str, str]) -> None:
    if os.environ.get("GITHUB_OUTPUT"):
        actions.set_outputs(outputs)


def _history(root, history_folder: str | None):
    """The run summaries of the history folder, oldest first; [] without one."""
    folder = Path(root) / history_folder if history_folder else None
    if folder is None or not folder.is_dir():
        return []
    return load_history(folder)


def failure_messages(verdict) -> list[str]:
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


def this_run(ctx, verdict, compared, k=None, harness_of=None, main=False):
    """The run summary of this CI run (per task: valid runs, passes, errors, status, usage
    totals and the gate's status, and the agent's harness; on `main`, the default branch, each
    gated task's drift against its baseline)."""
    sha = (ctx.sha or "").lower()
    now = dt.datetime.now(dt.timezone.utc)
    return summary_of_results(
        require_runs(compared), k=k, day=now.date(), now=now,
        commit=sha if history.COMMIT_RE.match(sha) else None, agent=verdict.agent,
        harness_files=harness_of(verdict.agent) if verdict.agent and harness_of else None,
        ci_run=history.ci_run_from_env(os.environ),
        gate={t.task: t.status for t in verdict.tasks},
        drift={task: (d.drifted, d.baseline_passes, d.baseline_runs)
               for task, d in main_drift.drift_records(verdict).items()} if main else None)


def write_run_summary(summary, history_dir):
    """Runs on the default branch record the run's history: `summary` written as a new file in
    `history_dir`; its path, which action.yml uploads as the `ci-eval-history` artifact."""
    return history.write_summary(history_dir, summary)


def publish(markdown: str, ctx, request, *, failed: bool, changed: bool) -> str:
    """The step summary, then the sticky comment on the pull request as --comment says (never
    raising: posting never changes the exit code); the comment's URL or ""."""
    in_summary = actions.append_summary(markdown)
    pr = request.pr or (ctx.pr_number if ctx.event_name == "pull_request" else None)
    create = may_create("off" if request.no_comment else request.comment, failed=failed,
                        changed=changed)
    if not pr or create is None:
        return ""
    marker = marker_for(request.comment_key)
    try:
        posted = post_or_fall_back(request.repo or ctx.repository, pr, markdown,
                                   summary_has_body=in_summary, author=request.author,
                                   marker=marker, create=create)
    except Exception as exc:  # noqa: BLE001 - posting never changes the gate's exit code
        posted = Posted(None, f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    if posted.result and posted.result.action == "skipped":
        print(f"ci-eval: no comment (--comment {request.comment}: nothing to report, and none "
              "to update)", file=sys.stderr)
        return ""
    if posted.result:
        print(f"ci-eval: {posted.result.action} the comment {posted.result.url}", file=sys.stderr)
        if note := minimized_note(posted.result, pr):
            actions.notice(note, title="ci-eval")
        return posted.result.url
    actions.warning(f"the PR comment was not posted: {posted.problem}", title="ci-eval")
    return ""


def fail_without_verdict(markdown: str, headline: str, ctx, request) -> ReportOutcome:
    """A run with nothing to compare (setup broken, plan failed): one annotation, the comment,
    the outputs of a failed gate, exit 1."""
    actions.error(headline, title="ci-eval")
    url = publish(markdown, ctx, request, failed=True, changed=True)
    outputs = {"verdict": "fail", "regressed": "0", "failed": "0", "exit-code": "1",
               "comment-url": url}
    set_outputs(outputs)
    print(f"FAIL {headline}", file=sys.stderr)
    return ReportOutcome(1, outputs)


def shard_jobs_of(ctx, count: int) -> dict:
    """Each shard's job in this workflow run (for links), {} when GitHub cannot say: the
    comment then links the whole run."""
    jobs, problem = shard_jobs(ctx, count)
    if problem:
        print(f"ci-eval: shard jobs not listed, the comment links the workflow run instead "
              f"({problem})", file=sys.stderr)
    return jobs


def present_shards(results_dir) -> set[int]:
    return {int(p.name.split("-", 1)[1]) for p in results_dir.glob(SHARD_GLOB)
            if p.is_dir() and p.name.split("-", 1)[1].isdigit()}
