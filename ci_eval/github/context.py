"""What run this is, read from the Actions environment and the event payload ($GITHUB_EVENT_PATH).

    ctx = from_env()        # Context(event_name="pull_request", repository="acme/widgets", pr=7, ...)
    no_secrets_reason(ctx)  # "pull request #7 comes from the fork bob/widgets, ..." or None
    on_default_branch(ctx)  # a push to the default branch (where history is recorded)

Outside Actions every field is None and nothing is refused: commands take what they need as
options (--pr, --repo) and say which one is missing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from ci_eval.errors import UserError
from ci_eval.results.history import COMMIT_RE

MAX_EVENT_BYTES = 32 * 1024 * 1024  # event payloads are small; refuse a runaway file
DEPENDABOT = "dependabot[bot]"


@dataclass(frozen=True)
class Context:
    event_name: str | None = None
    repository: str | None = None  # owner/name of the repository the workflow runs in
    sha: str | None = None
    ref: str | None = None  # refs/heads/main, refs/pull/7/merge
    ref_name: str | None = None  # main, 7/merge
    actor: str | None = None
    default_branch: str | None = None
    pr_number: int | None = None
    head_repository: str | None = None  # owner/name the pull request's branch lives in
    head_sha: str | None = None  # the pull request's head commit (GITHUB_SHA is its merge commit)
    server_url: str = "https://github.com"
    api_url: str = "https://api.github.com"
    run_id: str | None = None  # GITHUB_RUN_ID

    @property
    def run_url(self) -> str | None:
        """The workflow run's page, or None outside Actions."""
        if not (self.run_id and self.repository):
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"


def from_env(env: Mapping[str, str] | None = None) -> Context:
    env = os.environ if env is None else env
    event = read_event(env.get("GITHUB_EVENT_PATH"))
    return parse(env, event)


def read_event(path: str | None) -> dict:
    if not path:
        return {}
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_EVENT_BYTES + 1)
    except OSError as exc:
        raise UserError(f"cannot read the event payload ({exc.strerror or exc})", path=path,
                        field="GITHUB_EVENT_PATH") from None
    if len(data) > MAX_EVENT_BYTES:
        raise UserError(f"event payload larger than {MAX_EVENT_BYTES} bytes", path=path,
                        field="GITHUB_EVENT_PATH")
    try:
        event = json.loads(data.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        raise UserError("event payload is not JSON", path=path, field="GITHUB_EVENT_PATH") from None
    return event if isinstance(event, dict) else {}


def parse(env: Mapping[str, str], event: dict) -> Context:
    pull = _dict(event.get("pull_request"))
    repo = _dict(event.get("repository"))
    number = pull.get("number", event.get("number") if pull else None)
    head = _dict(pull.get("head"))
    head_repo = _dict(head.get("repo")).get("full_name")
    return Context(
        event_name=env.get("GITHUB_EVENT_NAME") or None,
        repository=env.get("GITHUB_REPOSITORY") or _str(repo.get("full_name")),
        sha=env.get("GITHUB_SHA") or None,
        ref=env.get("GITHUB_REF") or None,
        ref_name=env.get("GITHUB_REF_NAME") or None,
        actor=env.get("GITHUB_ACTOR") or None,
        default_branch=_str(repo.get("default_branch")),
        pr_number=number if isinstance(number, int) and not isinstance(number, bool) else None,
        head_repository=_str(head_repo),
        head_sha=_str(head.get("sha")),
        server_url=(env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
        api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
        run_id=env.get("GITHUB_RUN_ID") if env.get("GITHUB_RUN_ID", "").isdigit() else None,
    )


def head_commit(root) -> str | None:
    """The commit checked out at `root` (the footer's commit when GITHUB_SHA is unset), or None
    when git cannot say."""
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "--quiet",
                               "HEAD"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and len(sha) in (40, 64) else None


def footer_commit(given: str | None, run_sha: str | None, root) -> str | None:
    """The commit a report's footer names: --commit, else the run's commit (Context.sha, from
    $GITHUB_SHA), else git's HEAD at `root` (compare, gate)."""
    return given or run_sha or head_commit(root)


def summary_commit(given: str | None, root, env: Mapping[str, str] | None = None) -> str | None:
    """The commit a run summary records (history record): --commit (4-64 hex digits), else
    $GITHUB_SHA, else git's HEAD at `root`; None when none can be told."""
    if given is not None:
        if not COMMIT_RE.match(given.lower()):
            raise UserError(f"expected a commit SHA (4-64 hex digits), got {given!r}",
                            field="--commit")
        return given.lower()
    env_sha = (os.environ if env is None else env).get("GITHUB_SHA", "").lower()
    if COMMIT_RE.match(env_sha):
        return env_sha
    return head_commit(root)


def no_secrets_reason(ctx: Context) -> str | None:
    """Why this run gets no repository secrets (so running an agent is pointless), or None."""
    if ctx.event_name not in ("pull_request", "pull_request_review", "pull_request_review_comment"):
        return None
    if ctx.head_repository and ctx.repository and ctx.head_repository != ctx.repository:
        return (f"pull request #{ctx.pr_number} comes from the fork {ctx.head_repository}; GitHub "
                "gives such runs no secrets, so the agent cannot run. A maintainer can run the "
                "eval on a branch of this repository instead.")
    if ctx.actor == DEPENDABOT:
        return (f"pull request #{ctx.pr_number} is by Dependabot, whose runs get only Dependabot "
                "secrets, so the agent cannot run.")
    return None


DEFAULT_BRANCH_EVENTS = ("push", "workflow_dispatch", "schedule")  # runs that record history


def on_default_branch(ctx: Context) -> bool:
    """A push (or manual or scheduled run) on the repository's default branch."""
    if ctx.event_name not in DEFAULT_BRANCH_EVENTS or not ctx.default_branch:
        return False
    return ctx.ref == f"refs/heads/{ctx.default_branch}"


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
