"""The paths a pull request changes, for the plan's "can this change the verdict?" question
(verdict/relevance.py). GitHub's pull request files API (GET /repos/{owner}/{repo}/pulls/{n}/files,
PyGithub `PullRequest.get_files()`; needs `pull-requests: read` on a private repository) lists
each changed file's `filename`, and for a rename its `previous_filename` too (both count). It
lists at most 3,000 files; a pull request at that limit is taken as touching everything. Any
failure to ask is a reason to run everything, never an error.
"""

from __future__ import annotations

from ci_eval.github import client as gh_client
from ci_eval.github.context import Context

MAX_FILES = 3000  # what the API lists at most


def changed_paths(ctx: Context, *, token: str | None = None, api_url: str | None = None,
                  sleep=None, clock=None) -> tuple[list[str] | None, str]:
    """(the pull request's changed paths, why they are not known: "" when they are). None
    outside a pull request, or when GitHub could not say."""
    if ctx.event_name != "pull_request" or not ctx.pr_number or not ctx.repository:
        return None, "not a pull request"
    try:
        client = gh_client.make_client(token, api_url)
        pull = client.github.get_repo(ctx.repository).get_pull(ctx.pr_number)

        def once() -> list[str]:
            paths = []
            for changed in pull.get_files():
                paths += [changed.filename, *([changed.previous_filename]
                                              if changed.previous_filename else [])]
                if len(paths) >= MAX_FILES:
                    break
            return paths

        paths = gh_client.call(once, describe=f"list the files of pull request "
                               f"#{ctx.pr_number}", sleep=sleep, clock=clock)
    except Exception as exc:  # noqa: BLE001 - not knowing means running everything
        return None, f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    if len(paths) >= MAX_FILES:
        return None, f"{MAX_FILES} files or more changed"
    return paths, ""
