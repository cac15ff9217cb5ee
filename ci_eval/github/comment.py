"""The sticky pull-request comment: one per PR, found by its marker AND its author, updated in place.

    result = upsert_comment(client, "acme/widgets", 7, body)   # CommentResult("created", url, id)

Finding it: every page of the PR's issue comments is read; the comment is ours when its body
holds COMMENT_MARKER and its author is the token's own login (client.own_login), so a person who
quotes the marker (or another bot's report that copies it) is never overwritten. The oldest such
comment is updated; none is ever created while one exists. A body already equal is left alone.
The whole find-then-write is retried as one step, so a create that GitHub applied but answered
with a 502 is found on the retry instead of being posted twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from ci_eval.errors import UserError
from ci_eval.github import actions
from ci_eval.github import client as gh_client
from ci_eval.output import mask
from ci_eval.render.compare import COMMENT_MARKER, MAX_COMMENT_CHARS

KEY_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def marker_for(key: str | None) -> str:
    """The hidden marker of the comment: one per key, so two ci-eval workflows on one pull
    request keep two comments (`<!-- ci-eval-report:docs -->`); no key: COMMENT_MARKER."""
    if not key:
        return COMMENT_MARKER
    if not KEY_RE.fullmatch(key):
        raise UserError(f"expected a key of letters, digits, . _ - (at most 64), got {key!r}",
                        field="--comment-key")
    return COMMENT_MARKER.replace(" -->", f":{key} -->")


CommentAction = Literal["created", "updated", "unchanged", "skipped"]  # skipped: none, none wanted


@dataclass(frozen=True)
class CommentResult:
    action: CommentAction
    url: str  # the comment's html_url
    id: int
    truncated: bool = False
    # someone hid ("minimized") the comment: its reason (GitHub's words: outdated, resolved,
    # off-topic, duplicate, spam, abuse); "" when it is shown; None when GitHub did not say
    minimized: str | None = ""


# REST comment objects carry no minimized state; GraphQL's IssueComment does.
MINIMIZED_QUERY = ("query($id: ID!) { node(id: $id) { ... on IssueComment { isMinimized "
                   "minimizedReason } } }")


def minimized_reason(client: gh_client.Client, node_id: str | None) -> str | None:
    """Why the comment is minimized, "" when it is not, None when GitHub cannot say (one try:
    this only decides what ci-eval tells the user, never what it writes)."""
    if not node_id:
        return None
    try:
        _headers, data = client.github.requester.graphql_query(MINIMIZED_QUERY, {"id": node_id})
    except Exception:  # noqa: BLE001 - a GraphQL failure leaves the state unknown
        return None
    node = (data.get("data") or {}).get("node") if isinstance(data, dict) else None
    if not isinstance(node, dict) or not isinstance(node.get("isMinimized"), bool):
        return None
    if not node["isMinimized"]:
        return ""
    reason = node.get("minimizedReason")
    words = re.sub(r"[^a-z-]+", " ", reason.lower()).strip()[:40] if isinstance(reason, str) \
        else ""
    return words or "hidden"


def truncation_note(original: int, limit: int) -> str:
    return (f"\n\n> ⚠️ Truncated: this report was {original:,} characters, over GitHub's "
            f"{limit:,}-character comment limit; the full report is in the run's step summary.\n")


def fit_body(body: str, *, marker: str = COMMENT_MARKER,
             limit: int = MAX_COMMENT_CHARS) -> tuple[str, bool]:
    """(body that starts with the marker and fits in `limit` characters, was it cut)."""
    if marker not in body:
        body = f"{marker}\n{body}"
    if len(body) <= limit:
        return body, False
    note = truncation_note(len(body), limit)
    return body[: limit - len(note)] + note, True


def find_own(comments: Iterable, marker: str, login: str):
    """The first (oldest) comment by `login` whose body holds `marker`, else None."""
    for comment in comments:
        user = comment.user.login if comment.user is not None else None
        if user == login and marker in (comment.body or ""):
            return comment
    return None


def upsert_comment(client: gh_client.Client, repository: str, pr_number: int,
                   body: str | Callable[[str | None], str], *,
                   marker: str = COMMENT_MARKER, author: str | None = None,
                   create: bool = True, sleep=None, clock=None) -> CommentResult:
    """`create` False: update the comment when there is one, else do nothing ("skipped").
    `body` may be a function of the comment's current body (None when there is none)."""
    def final(current: str | None) -> tuple[str, bool]:
        text = body(current) if callable(body) else body
        if marker != COMMENT_MARKER:
            text = text.replace(COMMENT_MARKER, marker, 1)
        return fit_body(mask(text), marker=marker)

    options = {"sleep": sleep, "clock": clock}
    login = author or gh_client.own_login(client, **options)
    issue = client.github.get_repo(repository).get_issue(pr_number)

    def once() -> CommentResult:
        mine = find_own(issue.get_comments(), marker, login)
        if mine is None and not create:
            return CommentResult("skipped", "", 0, False)
        text, truncated = final(None if mine is None else mine.body or "")
        if mine is None:
            created = issue.create_comment(text)
            return CommentResult("created", created.html_url, created.id, truncated)
        # A hidden comment is updated in place and left hidden: never shown again against the
        # choice of whoever hid it, never worked around with a second comment.
        hidden = minimized_reason(client, mine.node_id)
        if mine.body == text:
            return CommentResult("unchanged", mine.html_url, mine.id, truncated, hidden)
        mine.edit(text)
        return CommentResult("updated", mine.html_url, mine.id, truncated, hidden)

    return gh_client.call(once, describe=f"post the report on pull request #{pr_number}",
                          **options)


def minimized_note(result: CommentResult, pr_number: int) -> str:
    """What to tell the user when the comment is hidden ("" when it is not)."""
    if not result.minimized:
        return ""
    return (f"the ci-eval comment on pull request #{pr_number} is hidden (minimized as "
            f"{result.minimized}): it was updated in place and stays hidden, as whoever hid it "
            "chose; \"Show comment\" on the pull request, or this step summary, has the report")


def is_permission_denied(exc: gh_client.GitHubError) -> bool:
    """A plain 403 (not a rate limit): the token may not write here, e.g. a fork's read-only
    token, or a job without `pull-requests: write`."""
    return exc.status == 403


@dataclass(frozen=True)
class CommentAttempt:
    """One upsert_comment, GitHub's failures told apart instead of raised: a result, or the
    problem to print (and, for a plain 403, GitHub's reason in `denied`)."""

    result: CommentResult | None
    problem: str = ""  # why there is no result
    denied: str = ""  # a plain 403: GitHub's reason ("forbidden" when it gave none)


def try_upsert_comment(repository: str, pr_number: int,
                       body: str | Callable[[str | None], str], *, token: str | None = None,
                       api_url: str | None = None, **options) -> CommentAttempt:
    """make_client and upsert_comment(**options), never raising: no token, any GitHub answer,
    even one not in the API's shape (a proxy's page that PyGithub cannot parse), is a problem."""
    try:
        client = gh_client.make_client(token, api_url)
        return CommentAttempt(upsert_comment(client, repository, pr_number, body, **options))
    except UserError as exc:
        return CommentAttempt(None, str(exc))
    except gh_client.GitHubError as exc:
        return CommentAttempt(None, str(exc), (exc.reason or "forbidden") if is_permission_denied(exc)
                       else "")
    except Exception as exc:  # noqa: BLE001 - PyGithub reading an answer not in the API's shape
        text = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        return CommentAttempt(None, f"GitHub's answer was not the API's ({text})")


@dataclass(frozen=True)
class Posted:
    """What became of a report meant for the PR: posted (result set) or not (why)."""

    result: CommentResult | None
    problem: str = ""  # why it was not posted
    fell_back: bool = False  # a plain 403: the step summary carries the report instead


FALLBACK_NOTE = ("> ⚠️ ci-eval could not post its pull-request comment: GitHub answered 403 "
                 "({reason}). The token may not write to this pull request (a fork's read-only "
                 "token, or a job without `pull-requests: write`); the report is in this step "
                 "summary instead.\n")


def post_or_fall_back(repository: str | None, pr_number: int, body: str, *,
                      summary_has_body: bool, token: str | None = None,
                      api_url: str | None = None, author: str | None = None,
                      marker: str = COMMENT_MARKER, create: bool = True,
                      sleep=None, clock=None) -> Posted:
    """upsert_comment, never raising for GitHub's answers: a plain 403 writes the report (unless
    the summary has it already) and a note to the step summary; anything else is returned as a
    problem for the caller to print. Missing repository or token are problems too."""
    if not repository:
        return Posted(None, "no repository (set GITHUB_REPOSITORY or pass --repo OWNER/NAME)")
    attempt = try_upsert_comment(repository, pr_number, body, token=token, api_url=api_url,
                                 author=author, marker=marker, create=create, sleep=sleep,
                                 clock=clock)
    if not attempt.denied:
        return Posted(attempt.result, attempt.problem)
    note = FALLBACK_NOTE.format(reason=attempt.denied)
    text = note if summary_has_body else note + "\n" + fit_body(body)[0]
    written = actions.append_summary(text)
    where = "the step summary" if written else "nowhere (no GITHUB_STEP_SUMMARY)"
    return Posted(None, f"{attempt.problem}; the report went to {where}", fell_back=True)
