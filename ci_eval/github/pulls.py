"""Propose a change as a pull request: commit files onto a branch, push it, open or update the PR.

    outcome = propose_change(root, client, "acme/widgets", Proposal(
        branch="ci-eval/baseline-refresh", base="main", title="...", body="...",
        paths=["baseline.json"], message="ci-eval: refresh baselines"))
    # PullOutcome(action="opened" | "updated", number=12, url=..., branch=..., commit=...)

Used by the baseline-refresh workflow and the archive PR of the GC workflow (archive_pr.py): any
`paths` (pathspecs, so a moved or deleted folder counts) of the working tree are committed on top
of HEAD with a private index -- the checked-out branch, the index and the working tree are not
touched -- and force-pushed to `branch` (the branch is ci-eval's own: each proposal replaces the
last one). An open PR from `branch` into `base` is updated (title, body), never duplicated.

Pushing: to `remote` (a URL, a path, or a remote name; default: $GITHUB_SERVER_URL/$GITHUB_REPOSITORY
in Actions, else origin). With a token and an http(s) remote, the token goes to git as an
`http.extraheader` through GIT_CONFIG_* environment variables (never on the command line, never in
.git/config), so `actions/checkout` can keep `persist-credentials: false`; a checkout that kept
its credentials has its header reset for the push (token_config), and GIT_CONFIG_* entries
already set are kept.

GitHub refuses PRs from workflows unless the repository (or its organization) allows them:
"GitHub Actions is not permitted to create or approve pull requests" becomes a UserError naming
the setting.
"""

from __future__ import annotations

import base64
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.github import client as gh_client

BOT_NAME = "github-actions[bot]"
BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"
NOT_PERMITTED = "not permitted to create or approve pull requests"
SETTING = "Allow GitHub Actions to create and approve pull requests"
SETTING_HELP = (f"GitHub refused to let this workflow open the pull request. Enable \"{SETTING}\" "
                "in the repository's Settings → Actions → General → Workflow permissions (if it is "
                "greyed out, in the organization's Settings → Actions → General first), or pass a "
                "personal access token or GitHub App token as the action's github-token input")


@dataclass(frozen=True)
class Proposal:
    branch: str
    base: str
    title: str
    body: str
    paths: Sequence[str]
    message: str


@dataclass(frozen=True)
class PullOutcome:
    action: str  # "opened" | "updated"
    number: int
    url: str
    branch: str
    commit: str


def _git(root: Path, *args: str, env: Mapping[str, str] | None = None,
         input: str | None = None) -> str:
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          env=full_env, input=input, timeout=300, check=False)
    if done.returncode != 0:
        detail = " ".join((done.stderr or done.stdout).split())[:400]
        raise UserError(f"git {args[0]} failed: {detail}", path=root)
    return done.stdout.strip()


def commit_paths(root: Path, paths: Sequence[str], message: str) -> str | None:
    """A commit of `paths` as they are in the working tree on top of HEAD, made with a private
    index; its sha, or None when it would change nothing."""
    head = _git(root, "rev-parse", "HEAD")
    with tempfile.TemporaryDirectory(prefix="ci-eval-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"),
               "GIT_AUTHOR_NAME": os.environ.get("GIT_AUTHOR_NAME", BOT_NAME),
               "GIT_AUTHOR_EMAIL": os.environ.get("GIT_AUTHOR_EMAIL", BOT_EMAIL),
               "GIT_COMMITTER_NAME": os.environ.get("GIT_COMMITTER_NAME", BOT_NAME),
               "GIT_COMMITTER_EMAIL": os.environ.get("GIT_COMMITTER_EMAIL", BOT_EMAIL)}
        _git(root, "read-tree", "HEAD", env=env)
        _git(root, "add", "-A", "--", *paths, env=env)
        tree = _git(root, "write-tree", env=env)
        if tree == _git(root, "rev-parse", "HEAD^{tree}"):
            return None
        return _git(root, "commit-tree", tree, "-p", head, "-F", "-", env=env, input=message)


def current_branch(root: Path) -> str | None:
    """The checked-out branch of `root`, or None (a detached HEAD, not a git repository)."""
    done = subprocess.run(["git", "-C", str(root), "symbolic-ref", "--quiet", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def pull_request_target(root: Path, repo: str | None, base: str | None, *,
                        repository_env: str | None, ref_name: str | None,
                        required: bool) -> tuple[str | None, str | None]:
    """(OWNER/NAME, base branch) of the pull request to open: --repo / --base, else the
    workflow's GITHUB_REPOSITORY and ref name, else the checked-out branch. `required`: a
    UserError naming the option when one is missing (a dry run needs neither)."""
    repository = repo or repository_env
    base = base or ref_name or current_branch(root)
    if required:
        if not repository:
            raise UserError("no repository (set GITHUB_REPOSITORY or pass --repo OWNER/NAME)",
                            field="--repo")
        if not base:
            raise UserError("no base branch (pass --base BRANCH)", field="--base")
    return repository, base


def default_remote(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    server, repository = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY")
    if server and repository:
        return f"{server.rstrip('/')}/{repository}.git"
    return "origin"


def token_config(remote: str, token: str, environ: Mapping[str, str]) -> dict[str, str]:
    """GIT_CONFIG_* variables that make git send `token` to `remote` and nothing else: the
    extra headers a checkout left in .git/config (actions/checkout's default
    persist-credentials: true writes `http.https://github.com/.extraheader` with its own token,
    which git would send instead) are reset by an empty value first. Entries already in the
    environment are kept: ours are appended after them."""
    from urllib.parse import urlsplit

    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    parts = urlsplit(remote)
    site = f"http.{parts.scheme}://{parts.netloc}/.extraheader"
    entries = [("http.extraheader", ""), (site, ""), (site, f"AUTHORIZATION: basic {basic}")]
    count = environ.get("GIT_CONFIG_COUNT", "")
    start = int(count) if count.isdigit() else 0
    env = {"GIT_CONFIG_COUNT": str(start + len(entries))}
    for i, (key, value) in enumerate(entries, start):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env


def push(root: Path, commit: str, branch: str, *, remote: str, token: str | None) -> None:
    env = {}
    if token and remote.startswith(("https://", "http://")):
        env = token_config(remote, token, os.environ)
    _git(root, "push", "--force", "--quiet", remote, f"{commit}:refs/heads/{branch}", env=env)


def open_or_update(client: gh_client.Client, repository: str, proposal: Proposal, commit: str,
                   **retry_options) -> PullOutcome:
    repo = client.github.get_repo(repository)
    owner = repository.split("/", 1)[0]

    def once() -> PullOutcome:
        for pull in repo.get_pulls(state="open", head=f"{owner}:{proposal.branch}",
                                   base=proposal.base):
            if pull.head.ref == proposal.branch:
                pull.edit(title=proposal.title, body=proposal.body)
                return PullOutcome("updated", pull.number, pull.html_url, proposal.branch,
                                   commit)
        pull = repo.create_pull(title=proposal.title, body=proposal.body, head=proposal.branch,
                                base=proposal.base)
        return PullOutcome("opened", pull.number, pull.html_url, proposal.branch, commit)

    try:
        return gh_client.call(once, describe=f"open the pull request from {proposal.branch}",
                              **retry_options)
    except gh_client.GitHubError as exc:
        if NOT_PERMITTED in exc.reason.lower() or NOT_PERMITTED in str(exc).lower():
            raise UserError(f"{SETTING_HELP} (GitHub: {exc.reason or exc})") from None
        raise


def propose_change(root: Path, client: gh_client.Client, repository: str, proposal: Proposal, *,
                   remote: str | None = None, token: str | None = None,
                   **retry_options) -> PullOutcome | None:
    """Commit, push and open or update the PR; None when `paths` change nothing."""
    commit = commit_paths(Path(root), proposal.paths, proposal.message)
    if commit is None:
        return None
    push(Path(root), commit, proposal.branch, remote=remote or default_remote(), token=token)
    return open_or_update(client, repository, proposal, commit, **retry_options)
