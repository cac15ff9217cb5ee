"""`ci-eval propose-archive`: the action's gc mode -- entropy GC by pull request."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_baseline_argument,
    add_history_argument,
    add_json_argument,
    add_pull_request_arguments,
    add_root_argument,
    add_today_argument,
    history_dir,
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "propose-archive",
        help="gc mode of the action: archive eligible tasks through a pull request",
        description="Plan the entropy GC as `ci-eval gc` does (passed every run in each of the "
        "last 10 recorded runs of --history AND created more than 6 calendar months ago), "
        "archive the candidates in the checkout, commit exactly those changes on top of HEAD "
        "(the checked-out branch is not moved), force-push the branch ci-eval/gc-YYYY-MM-DD "
        "and open a pull request into BASE whose body lists each task with its evidence. An "
        "archive PR already open (found by its marker, from a ci-eval/gc-* branch of this "
        "repository) is updated on its own branch instead: never a second one. Nothing "
        "eligible: no PR, and an open archive PR is closed with a note. Needs contents: write "
        "and pull-requests: write, and the repository setting \"Allow GitHub Actions to create "
        "and approve pull requests\" for GITHUB_TOKEN. Exit 0, 2 bad input or GitHub refused.",
    )
    add_root_argument(parser)
    add_history_argument(parser)
    add_baseline_argument(parser)
    add_today_argument(parser)
    add_pull_request_arguments(parser)
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan and the PR body; change nothing, call no API")
    add_json_argument(parser, "print the plan and the outcome "
                        "as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    import os
    import sys
    from pathlib import Path

    from ci_eval.errors import UserError
    from ci_eval.github import actions, archive_pr, client, context, pulls
    from ci_eval.render.gc import archive_pr as render_archive_pr
    from ci_eval.render.gc import render_text
    from ci_eval.results.history import load_history
    from ci_eval.tasks.load import load_tasks
    from ci_eval.verdict.baseline import baseline_path
    from ci_eval.verdict.gc import parse_day, plan_gc

    root = Path(args.root).resolve()
    today = parse_day(args.today, field="--today")
    ctx = context.from_env()
    repository, base = pulls.pull_request_target(
        root, args.repo, args.base, repository_env=ctx.repository, ref_name=ctx.ref_name,
        required=not args.dry_run)
    tasks = load_tasks(root)
    summaries = load_history(history_dir(args),
                             missing_ok=args.history is None)
    plan = plan_gc({t.id: t.created for t in tasks}, summaries, today)
    title, body = render_archive_pr(plan)
    actions.append_summary(body)
    text = render_text(plan, dry_run=args.dry_run)
    if args.dry_run:
        if args.json:
            print(json.dumps({"plan": plan.to_json(), "title": title, "body": body},
                             indent=2, ensure_ascii=False))
        else:
            sys.stdout.write(text + f"\n{title}\n\n{body}")
        return 0
    if not args.json:
        sys.stdout.write(text)
    assert repository and base  # pull_request_target(required=True) refused them missing
    gh = client.make_client()
    try:
        outcome = archive_pr.propose_archive(root, gh, repository, plan, base=base,
                                             baseline_file=baseline_path(root, args.baseline),
                                             remote=args.remote,
                                             token=os.environ.get("GITHUB_TOKEN"))
    except client.GitHubError as exc:
        raise UserError(f"GitHub refused: {' '.join(str(exc).split())[:400]}") from None
    for note in outcome.notes:
        print(f"ci-eval: note: {note}", file=sys.stderr)
    _print_outcome(outcome, plan, as_json=args.json)
    if os.environ.get("GITHUB_OUTPUT"):
        actions.set_outputs({"pr-url": outcome.url or "", "pr-number": str(outcome.number or ""),
                             "archived": str(len(outcome.archived)), "action": outcome.action})
    return 0


def _print_outcome(outcome, plan, *, as_json: bool) -> None:
    """What happened to the archive pull request (JSON with the plan, or one line)."""
    import json

    if as_json:
        print(json.dumps({"plan": plan.to_json(), "outcome": outcome.to_json()}, indent=2,
                         ensure_ascii=False))
    elif outcome.action == "none":
        print("ci-eval: nothing to archive; no pull request")
    elif outcome.action == "closed":
        print(f"ci-eval: closed the archive pull request #{outcome.number} {outcome.url}: no "
              "task is eligible any more")
    else:
        print(f"ci-eval: {outcome.action} the archive pull request #{outcome.number} "
              f"{outcome.url} (branch {outcome.branch} at {outcome.commit[:12]}): "
              f"{', '.join(outcome.archived)}")
