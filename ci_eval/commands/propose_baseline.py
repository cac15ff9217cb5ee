"""`ci-eval propose-baseline`: the action's baseline mode -- record new baselines, open a PR."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_agent_mismatch_argument,
    add_baseline_argument,
    add_pull_request_arguments,
    add_recorded_date_argument,
    add_results_argument,
    add_root_argument,
    add_tasks_argument,
    utc_today,
)

DEFAULT_BRANCH = "ci-eval/baseline-refresh"


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "propose-baseline",
        help="baseline mode of the action: record baselines and open or update a PR",
        description="Merge RESULTS/shard-*/ (as `ci-eval gate` does), run `ci-eval baseline "
        "update` for TASK... (default: every task with results), then commit baseline.json on "
        "top of HEAD to BRANCH (the checkout itself is not touched), force-push it and open a "
        "pull request into BASE whose body is the before/after table -- or update the one "
        "already open from BRANCH. Needs contents: write and pull-requests: write, and the "
        "repository setting \"Allow GitHub Actions to create and approve pull requests\" for "
        "GITHUB_TOKEN. Exit 0 (also when nothing changed: no PR), 2 bad input or GitHub "
        "refused (the setting is named).",
    )
    add_root_argument(parser)
    add_tasks_argument(parser)
    add_results_argument(parser, shards=True)
    add_baseline_argument(parser)
    add_agent_mismatch_argument(parser, records=True)
    add_recorded_date_argument(parser)
    parser.add_argument("--branch", default=DEFAULT_BRANCH,
                        help=f"branch to push (default {DEFAULT_BRANCH})")
    add_pull_request_arguments(parser)
    parser.add_argument("--no-pr", action="store_true",
                        help="update baseline.json and print the table; push nothing")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import os
    import sys
    from pathlib import Path

    from ci_eval.agents.config_file import load_config
    from ci_eval.github import actions, client, context, pulls
    from ci_eval.render.baseline_change import changed_tasks, render_change
    from ci_eval.results.merge import merge_shard_folders
    from ci_eval.verdict.baseline import Baseline, baseline_path, load_baseline
    from ci_eval.verdict.update import update_baseline

    root = Path(args.root).resolve()
    ctx = context.from_env()
    repository, base = pulls.pull_request_target(
        root, args.repo, args.base, repository_env=ctx.repository, ref_name=ctx.ref_name,
        required=not args.no_pr)
    path = baseline_path(root, args.baseline)
    before = load_baseline(path) if path.is_file() else Baseline()

    from ci_eval.agents.harness_of import harness_files_of

    compared, _shards = merge_shard_folders(root / args.results)
    update = update_baseline(root, args.tasks, every=not args.tasks, results_dir=compared,
                             baseline_file=args.baseline, recorded=args.date or utc_today(),
                             allow_agent_mismatch=args.allow_agent_mismatch,
                             min_baseline_rate=load_config(root).gate.min_baseline_rate,
                             harness_of=harness_files_of(root))
    notes = [*update.lines, update.outcome]
    print("\n".join(notes))
    after = load_baseline(path) if path.is_file() else Baseline()
    run_url = None
    if os.environ.get("GITHUB_RUN_ID") and repository:
        run_url = f"{ctx.server_url}/{repository}/actions/runs/{os.environ['GITHUB_RUN_ID']}"
    body = render_change(before, after, notes=notes, run_url=run_url)
    actions.append_summary(body)
    changed = changed_tasks(before, after)
    if not changed and before.agent == after.agent:
        print("ci-eval: the baseline did not change; no pull request", file=sys.stderr)
        return 0
    if args.no_pr:
        sys.stdout.write(body)
        return 0
    assert repository and base  # pull_request_target(required=True) refused them missing
    proposal = pulls.Proposal(
        branch=args.branch, base=base,
        title=f"ci-eval: refresh baselines ({len(changed)} task(s), agent {after.agent})",
        body=body, paths=[os.path.relpath(path, root)],
        message=f"ci-eval: refresh baselines of {len(changed)} task(s)\n\n"
                + "\n".join(f"- {t}" for t in changed) + "\n")
    gh = client.make_client()
    outcome = pulls.propose_change(root, gh, repository, proposal, remote=args.remote,
                                   token=os.environ.get("GITHUB_TOKEN"))
    if outcome is None:
        print("ci-eval: baseline.json is already as committed; no pull request", file=sys.stderr)
        return 0
    print(f"ci-eval: {outcome.action} pull request #{outcome.number} {outcome.url} "
          f"(branch {outcome.branch} at {outcome.commit[:12]})")
    if os.environ.get("GITHUB_OUTPUT"):
        actions.set_outputs({"pr-url": outcome.url, "pr-number": str(outcome.number)})
    return 0
