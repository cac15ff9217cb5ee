"""`ci-eval comment`: post or update the one sticky ci-eval comment on a pull request."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import add_comment_target_arguments, add_json_argument
from ci_eval.github.comment_policy import COMMENT_POLICIES


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "comment",
        help="post or update the sticky report comment on a pull request",
        description="Post FILE (e.g. `ci-eval compare --format markdown`) as the pull "
        "request's ci-eval comment: the comment holding the hidden marker <!-- ci-eval-report "
        "--> AND written by the token's own identity is updated in place (every page of "
        "comments is searched), else one is created; never a second one. Bodies over 65,536 "
        "characters are cut with a visible note. 5xx and rate limits are retried with bounded "
        "backoff (Retry-After / x-ratelimit-reset). Uses GITHUB_TOKEN and GITHUB_API_URL. A "
        "plain 403 (no permission to comment) writes the report to the step summary instead "
        "and says so (exit 0). With --in-progress instead of --body: the note that a new run "
        "is under way, on top of the previous run's report (eval.yml's progress job; the "
        "report replaces it). Exit 0 posted (or fell back; with --in-progress also when "
        "skipped or GitHub refused: a notice or warning, never a failed check), 2 bad input "
        "or GitHub refused.",
    )
    add_comment_target_arguments(parser)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--body", metavar="FILE", help="markdown file to post")
    what.add_argument("--in-progress", action="store_true",
                      help="say on the comment that a run for the pull request's head commit "
                      "is under way (linking $GITHUB_RUN_ID's run), keeping the previous "
                      "report below the note; fork and Dependabot pull requests (read-only "
                      "token) are skipped with a notice")
    parser.add_argument("--policy", choices=COMMENT_POLICIES, default=None,
                        help="with --in-progress, the action's `comment` input: always "
                        "(default) updates the comment or creates a short one; on-change and "
                        "on-failure only update a comment that exists; off does nothing")
    add_json_argument(parser, "print the outcome as JSON")
    parser.set_defaults(handler=run)


MAX_BODY_BYTES = 8 * 1024 * 1024  # far over the comment limit; the body is cut anyway


def read_body(path: str) -> str:
    from pathlib import Path

    from ci_eval.errors import UserError

    file = Path(path)
    if not file.is_file():
        raise UserError("not found (expected a markdown file)" if not file.exists() else
                        "is not a file", path=file, field="--body")
    try:
        with open(file, "rb") as handle:
            data = handle.read(MAX_BODY_BYTES)
    except OSError as exc:
        raise UserError(f"cannot read ({exc.strerror or exc})", path=file, field="--body") from None
    return data.decode("utf-8", errors="replace")


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from ci_eval.errors import UserError
    from ci_eval.github import actions, context
    from ci_eval.github.comment import marker_for, minimized_note, post_or_fall_back

    marker = marker_for(args.comment_key)
    ctx = context.from_env()
    if args.in_progress:
        return in_progress(args, ctx, marker)
    if args.policy is not None:
        raise UserError("goes with --in-progress (a report's policy is gate --comment)",
                        field="--policy")
    body = read_body(args.body)
    pr = args.pr or ctx.pr_number
    if pr is None:
        raise UserError("no pull request (pass --pr N, or run on a pull_request event)",
                        field="--pr")
    posted = post_or_fall_back(args.repo or ctx.repository, pr, body, summary_has_body=False,
                               author=args.author, marker=marker)
    if posted.result is None and not posted.fell_back:
        raise UserError(posted.problem, field="--pr")
    if posted.fell_back:
        actions.warning(posted.problem, title="ci-eval comment")
    if posted.result and (note := minimized_note(posted.result, pr)):
        actions.notice(note, title="ci-eval comment")
    if args.json:
        result = posted.result
        sys.stdout.write(json.dumps({
            "action": result.action if result else "fell-back", "url": result.url if result else None,
            "id": result.id if result else None,
            "truncated": bool(result and result.truncated), "problem": posted.problem or None,
            "minimized": result.minimized if result else None,
        }, indent=2) + "\n")
    elif posted.result:
        r = posted.result
        print(f"{r.action} comment {r.url}" + (" (truncated to fit)" if r.truncated else ""))
    return 0


def in_progress(args: argparse.Namespace, ctx, marker: str) -> int:
    import json
    import sys

    from ci_eval.github import actions
    from ci_eval.github.in_progress import post_in_progress

    note = post_in_progress(ctx, policy=args.policy or "always", marker=marker, pr=args.pr,
                            repository=args.repo, author=args.author)
    if note.level == "notice":
        actions.notice(note.message, title="ci-eval")
    elif note.level == "warning":
        actions.warning(note.message, title="ci-eval")
    if args.json:
        sys.stdout.write(json.dumps({"action": note.action or "not-posted",
                                     "url": note.url or None, "message": note.message},
                                    indent=2) + "\n")
    else:
        print(f"ci-eval: {note.message}", file=sys.stderr)
    return 0
