"""The PyGithub client, built from the Actions environment, and the one way its errors are read.

    gh = make_client()                 # GITHUB_TOKEN (or the token given), GITHUB_API_URL
    login = own_login(gh)              # whose comments are "ours"
    value = call(gh_fn, describe="list the comments")   # bounded retries (retry.py)

PyGithub's own retry and request throttling are off: every call goes through `call`, whose
bounded policy (retry.py) is the only one, and ci-eval makes a handful of requests per run.

Identity: GET /user names the token's user (a personal access token). Installation tokens -- the
workflow's GITHUB_TOKEN and GitHub App tokens -- cannot call it ("Resource not accessible by
integration", 403); for them the GraphQL query `viewer { login }` answers the bot's login
(`github-actions[bot]` for GITHUB_TOKEN, `<app-slug>[bot]` for an App). `--author` overrides both.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from ci_eval.errors import UserError
from ci_eval.github import retry

if TYPE_CHECKING:  # PyGithub is imported when a client is made, not with this module
    from github import Github

T = TypeVar("T")
PER_PAGE = 100  # the most GitHub gives per page: fewer round trips when a PR has many comments
TIMEOUT_SECONDS = 30


class GitHubError(Exception):
    """A GitHub answer that retrying will not change (or could not wait out)."""

    def __init__(self, message: str, *, status: int | None = None, reason: str = ""):
        super().__init__(message)
        self.status = status
        self.reason = reason  # GitHub's own message


@dataclass(frozen=True)
class Client:
    github: Github
    api_url: str
    token: str = field(default="", repr=False)  # for the requests PyGithub cannot make (artifacts)


def make_client(token: str | None = None, api_url: str | None = None,
                env: Mapping[str, str] | None = None) -> Client:
    """A PyGithub client for GITHUB_API_URL (default https://api.github.com) with `token` or
    GITHUB_TOKEN. UserError when there is no token."""
    import github

    env = os.environ if env is None else env
    token = token or env.get("GITHUB_TOKEN") or env.get("GH_TOKEN")
    if not token:
        raise UserError("no GitHub token (set GITHUB_TOKEN, or pass the action's github-token "
                        "input)", field="GITHUB_TOKEN")
    api_url = (api_url or env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    gh = github.Github(auth=github.Auth.Token(token), base_url=api_url, retry=None,
                       per_page=PER_PAGE, timeout=TIMEOUT_SECONDS, lazy=True,
                       seconds_between_requests=None, seconds_between_writes=None,
                       user_agent="ci-eval")
    return Client(gh, api_url, token)


def classify(exc: BaseException) -> tuple[int, Mapping, str] | None:
    """(status, headers, GitHub's message) of a PyGithub HTTP error; None for anything else."""
    import github
    import requests

    if isinstance(exc, github.GithubException):
        return exc.status, exc.headers or {}, error_message(exc)
    if isinstance(exc, (requests.ConnectionError, requests.Timeout)):
        return retry.NO_ANSWER, {}, type(exc).__name__
    return None


def error_message(exc: BaseException) -> str:
    data = getattr(exc, "data", None)
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return data["message"]
    return getattr(exc, "message", None) or str(exc)


def call(fn: Callable[[], T], *, describe: str, sleep=None, clock=None) -> T:
    """fn() with bounded retries; a permanent failure becomes GitHubError (status, message)."""
    import time

    try:
        return retry.with_retries(fn, describe=describe, classify=classify, sleep=sleep,
                                  clock=clock or time.time)
    except retry.GaveUp as exc:
        cause = exc.__cause__
        raise GitHubError(str(exc), status=getattr(cause, "status", None),
                          reason=error_message(cause) if cause else "") from None
    except Exception as exc:
        answer = classify(exc)
        if answer is None:
            raise
        status, _headers, message = answer
        answered = f"HTTP {status}" if status != retry.NO_ANSWER else "nothing"
        raise GitHubError(f"GitHub answered {answered} when trying to {describe}: {message}",
                          status=status, reason=message) from None


def own_login(client: Client, **retry_options) -> str:
    """The login the token acts as (see the module docstring)."""
    gh = client.github
    try:
        return call(lambda: gh.get_user().login, describe="read the token's user (GET /user)",
                    **retry_options)
    except GitHubError as exc:
        if exc.status != 403:
            raise
    _headers, data = call(lambda: gh.requester.graphql_query("query { viewer { login } }", {}),
                          describe="read the token's identity (GraphQL viewer)", **retry_options)
    login = ((data.get("data") or {}).get("viewer") or {}).get("login")
    if not isinstance(login, str) or not login:
        raise GitHubError("GitHub did not say whose token this is (no viewer.login)")
    return login
