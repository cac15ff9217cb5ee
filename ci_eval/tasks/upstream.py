"""A task's repository pinned to an upstream commit: metadata.json `repo: {url, commit}` instead
of repo-state/ (docs/tasks-beyond-python.md).

The commit is fetched once into a bare repository per URL under the cache folder
(CI_EVAL_UPSTREAM_CACHE, else ~/.cache/ci-eval/upstream; the action caches it between runs),
with `git fetch --depth 1 origin COMMIT` and neither the system's nor the user's git
configuration (no url rewrites, hooks or credential helpers of the host's). The tree of that
commit is written once per commit into a plain folder (`git archive`: no .git, no history), from
which every workspace is copied as from repo-state/: the one-commit rule holds, git history
cannot hold the answer. Nothing is run from the fetched repository. (In tasks/, not run/: the
swe-bench importer fetches too, and importers sit below run in docs/architecture.md.)
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from ci_eval.plain_tar import extract_plain

CACHE_ENV = "CI_EVAL_UPSTREAM_CACHE"
URL_PATTERN = re.compile(r"^(file://|https://|git@[^\s:]+:)\S+$")
FETCH_TIMEOUT = 600
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0",
           "GIT_ASKPASS": "", "SSH_ASKPASS": "", "GIT_ALLOW_PROTOCOL": "file:https:ssh",
           "LC_ALL": "C"}


PLAIN_TREE_MARK = ".ci-eval-plain-tree"  # beside a folder copied as it is (run/workspace/build.py)


class UpstreamError(Exception):
    """The pinned commit could not be had (the URL unreachable, the commit not there)."""


def pin_of(metadata: dict) -> tuple[str, str] | None:
    """(url, commit) of a task pinned to an upstream commit, else None."""
    repo = metadata.get("repo")
    if isinstance(repo, dict) and isinstance(repo.get("url"), str) and isinstance(
            repo.get("commit"), str):
        return repo["url"], repo["commit"]
    return None


def local_path(url: str) -> Path | None:
    """The folder of a file:// upstream (None for a remote one)."""
    return Path(urlsplit(url).path) if url.startswith("file://") else None


def agent_hidden_paths(metadata: dict) -> list[Path]:
    """What of the host holds a task's future (`network: api-only` or not, an agent reads
    files): the upstream cache, wherever it lies (CI_EVAL_UPSTREAM_CACHE: the action's
    runner.temp), and a file:// upstream's folder. Only those that exist."""
    found = [cache_dir()]
    pin = pin_of(metadata)
    local = local_path(pin[0]) if pin else None
    if local is not None:
        found.append(local)
    return [path for path in found if path.is_dir()]


def file_url_warning(metadata: object) -> str | None:
    """validate's warning for a file:// upstream: meant for tests (a local bare repository),
    not for a suite that runs elsewhere."""
    pin = pin_of(metadata) if isinstance(metadata, dict) else None
    if pin is None or local_path(pin[0]) is None:
        return None
    return ("repo.url is a file:// path: a local repository is for tests (CI runners and "
            "teammates do not have it); pin the https:// or git@ URL of the upstream")


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path.home() / ".cache" / "ci-eval" / "upstream"


def _git(args: list[str], cwd: Path, timeout: float = FETCH_TIMEOUT) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=timeout, check=False)


def _bare(url: str) -> Path:
    bare = cache_dir() / "repos" / hashlib.sha256(url.encode()).hexdigest()[:24]
    if not (bare / "HEAD").is_file():
        bare.mkdir(parents=True, exist_ok=True)
        for args in (["init", "--bare", "-q"], ["remote", "add", "origin", url]):
            done = _git(args, bare)
            if done.returncode:
                raise UpstreamError(f"cannot make the cache of {url}: "
                                    f"{done.stderr.decode(errors='replace').strip()}")
        # the tree's own .gitattributes must not drop files (export-ignore) or rewrite them
        (bare / "info").mkdir(exist_ok=True)
        (bare / "info" / "attributes").write_text("* -export-ignore -export-subst\n")
    return bare


def _has_commit(bare: Path, commit: str) -> bool:
    done = _git(["cat-file", "-e", f"{commit}^{{commit}}"], bare, timeout=60)
    return done.returncode == 0


def fetch(task_id: str, url: str, commit: str, *, source: str | None = None) -> Path:
    """The bare cache holding `commit` of `url`, fetched when it is not there yet (from
    `source`, a local mirror's file:// URL, instead of `url` when given)."""
    bare = _bare(url)
    if _has_commit(bare, commit):
        return bare
    origin = source or url
    try:
        done = _git(["fetch", "-q", "--depth", "1", "--no-tags", source or "origin", commit], bare)
    except subprocess.TimeoutExpired:
        raise UpstreamError(f"{task_id}: fetching {commit} from {origin} did not finish within "
                            f"{FETCH_TIMEOUT}s") from None
    if done.returncode or not _has_commit(bare, commit):
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise UpstreamError(f"{task_id}: cannot fetch commit {commit} from {origin}"
                            + (f": {said[-1]}" if said else ""))
    return bare


def tree(task_id: str, url: str, commit: str, *, source: str | None = None) -> Path:
    """A folder holding the files of `commit` and nothing else (made once per commit)."""
    folder = cache_dir() / "trees" / commit
    if (folder / PLAIN_TREE_MARK).is_file():
        return folder / "files"
    bare = fetch(task_id, url, commit, source=source)
    done = _git(["archive", "--format=tar", commit], bare)
    if done.returncode:
        raise UpstreamError(f"{task_id}: cannot read the tree of {commit}: "
                            f"{done.stderr.decode(errors='replace').strip()}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=folder.parent))
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        extract_plain(archive, staging / "files")
    (staging / PLAIN_TREE_MARK).write_text(url + "\n")
    try:
        staging.rename(folder)
    except OSError:  # another invocation made it first
        shutil.rmtree(staging, ignore_errors=True)
    return folder / "files"
