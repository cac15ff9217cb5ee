"""`ci-eval comment`: post or update the one sticky ci-eval comment on a pull request."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import add_comment_target_arguments, add_json_argument


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
        "and says so (exit 0). Exit 0 posted (or fell back), 2 bad input or GitHub refused.",
    )
    add_comment_target_arguments(parser)
    parser.add_argument("--body", required=True, metavar="FILE", help="markdown file to post")
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
    from ci_eval.github.comment import post_or_fall_back

    body = read_body(args.body)
    ctx = context.from_env()
    pr = args.pr or ctx.pr_number
    if pr is None:
        raise UserError("no pull request (pass --pr N, or run on a pull_request event)",
                        field="--pr")
    posted = post_or_fall_back(args.repo or ctx.repository, pr, body, summary_has_body=False,
                               author=args.author)
    if posted.result is None and not posted.fell_back:
        raise UserError(posted.problem, field="--pr")
    if posted.fell_back:
        actions.warning(posted.problem, title="ci-eval comment")
    if args.json:
        result = posted.result
        sys.stdout.write(json.dumps({
            "action": result.action if result else "fell-back", "url": result.url if result else None,
            "id": result.id if result else None,
            "truncated": bool(result and result.truncated), "problem": posted.problem or None,
        }, indent=2) + "\n")
    elif posted.result:
        r = posted.result
        print(f"{r.action} comment {r.url}" + (" (truncated to fit)" if r.truncated else ""))
    return 0
