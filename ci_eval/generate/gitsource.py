"""The repository under mining, read without obeying it: it is cloned (bare) into a folder of
ours, with neither the system's nor the user's git configuration, and every later git command
runs on that clone, whose configuration is ours. So the mined repository's own .git/config
(core.fsmonitor, diff.external, textconv, gpg.program, include.path), its hooks and its
.gitattributes filters never run. Trees are written by reading blobs (`cat-file --batch`), not by
a checkout or `git archive`: no attributes, no filters, no links (a symbolic link or a submodule
is left out and noted)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ci_eval.tasks.upstream import GIT_ENV

GIT_TIMEOUT = 600
MAX_BLOB_BYTES = 5 * 1024 * 1024  # a larger file makes the tree "too large" to vendor


class GitSourceError(Exception):
    """The repository could not be read (not a repository, a revision that does not exist)."""


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    subject: str
    date: str  # ISO 8601, the author date


@dataclass(frozen=True)
class Change:
    status: str  # A, M, D (renames are split into D + A)
    path: str


def git(bare: Path, args: list[str], *, input: bytes | None = None,
        timeout: float = GIT_TIMEOUT) -> bytes:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_ENV,
           "GIT_DIR": str(bare), "GIT_NO_REPLACE_OBJECTS": "1", "HOME": str(bare)}
    done = subprocess.run(["git", "--no-pager", "-c", "core.hooksPath=/dev/null",
                           "-c", "log.showSignature=false", *args], env=env, input=input,
                          capture_output=True, timeout=timeout, check=False)
    if done.returncode:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise GitSourceError(f"git {args[0]}: {said[-1] if said else done.returncode}")
    return done.stdout


def mirror(source: Path, bare: Path) -> Path:
    """A bare clone of `source` (a repository folder or a bundle) at `bare`, fetched again when
    it exists (resume); only the source's objects cross, none of its configuration."""
    source = Path(source).resolve()
    if not source.exists():
        raise GitSourceError(f"{source}: no such repository")
    if not (bare / "HEAD").is_file():
        bare.mkdir(parents=True, exist_ok=True)
        git(bare, ["init", "--bare", "-q"])
        (bare / "info").mkdir(exist_ok=True)
        (bare / "info" / "attributes").write_text("* -filter\n")
    url = str(source) if source.is_file() else f"file://{source}"
    try:
        git(bare, ["-c", "protocol.file.allow=always", "fetch", "-q", "--no-tags", "--force",
                   url, "+refs/heads/*:refs/heads/*", "+HEAD:refs/mined/HEAD"])
    except GitSourceError as exc:
        raise GitSourceError(f"{source}: cannot read it as a git repository ({exc})") from None
    return bare


def commits(bare: Path, rev: str | None = None, since: str | None = None,
            limit: int | None = None) -> list[Commit]:
    """Non-merge commits of `rev` (a commit, branch or A..B range; default the source's HEAD),
    newest first."""
    args = ["log", "--no-merges", "-z", "--format=%H%x00%P%x00%aI%x00%s"]
    if since:
        args.append(f"--since={since}")
    if limit:
        args.append(f"--max-count={limit}")
    if rev and rev.startswith("-"):
        raise GitSourceError(f"{rev!r}: a revision, not an option")
    args += [rev or "refs/mined/HEAD", "--"]
    fields = git(bare, args).decode("utf-8", errors="replace").split("\0")
    found = []
    for at in range(0, len(fields) - 3, 4):
        sha, parents, date, subject = (f.strip("\n") for f in fields[at:at + 4])
        found.append(Commit(sha, tuple(parents.split()), subject, date))
    return found


def resolve(bare: Path, rev: str) -> str:
    if rev.startswith("-"):
        raise GitSourceError(f"{rev!r}: a revision, not an option")
    return git(bare, ["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"]).decode().strip()


def changes(bare: Path, parent: str, commit: str) -> list[Change]:
    out = git(bare, ["diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
                     "--name-status", parent, commit]).decode("utf-8", errors="replace")
    fields = [f for f in out.split("\0") if f]
    return [Change(fields[i][0], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]


def diff(bare: Path, old: str, new: str, paths: list[str]) -> bytes:
    """The patch from `old` to `new` over `paths` (binary-safe, applies with git apply -p1)."""
    if not paths:
        return b""
    return git(bare, ["diff", "--no-ext-diff", "--no-textconv", "--no-color", "--binary",
                      "--no-renames", old, new, "--", *[f":(literal){p}" for p in paths]])


def tree_entries(bare: Path, commit: str) -> list[tuple[str, str, str]]:
    """(mode, sha, path) of every entry of the commit's tree."""
    out = git(bare, ["ls-tree", "-r", "-z", "--full-tree", commit]).decode("utf-8", "replace")
    entries = []
    for line in filter(None, out.split("\0")):
        meta, path = line.split("\t", 1)
        mode, _kind, sha = meta.split()
        entries.append((mode, sha, path))
    return entries


def write_tree(bare: Path, commit: str, target: Path) -> list[str]:
    """The commit's regular files at `target`; returns the paths left out (links, submodules,
    names that would leave the folder)."""
    left_out, wanted = [], []
    for mode, sha, path in tree_entries(bare, commit):
        parts = PurePosixPath(path).parts
        if mode not in ("100644", "100755") or path.startswith("/") or ".." in parts \
                or ".git" in parts:
            left_out.append(path)
        else:
            wanted.append((mode, sha, path))
    blobs = read_blobs(bare, [sha for _, sha, _ in wanted])
    for mode, sha, path in wanted:
        dest = target / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(blobs[sha])
        if mode == "100755":
            dest.chmod(0o755)
    return left_out


def file_at(bare: Path, commit: str, path: str) -> bytes | None:
    """The file `path` at `commit`, None when it is not there (or not a regular file)."""
    for mode, sha, found in tree_entries_of(bare, commit, path):
        if found == path and mode in ("100644", "100755"):
            return read_blobs(bare, [sha])[sha]
    return None


def tree_entries_of(bare: Path, commit: str, path: str) -> list[tuple[str, str, str]]:
    out = git(bare, ["ls-tree", "-z", "--full-tree", commit, "--", f":(literal){path}"])
    entries = []
    for line in filter(None, out.decode("utf-8", "replace").split("\0")):
        meta, found = line.split("\t", 1)
        mode, _kind, sha = meta.split()
        entries.append((mode, sha, found))
    return entries


def read_blobs(bare: Path, shas: list[str]) -> dict[str, bytes]:
    if not shas:
        return {}
    unique = list(dict.fromkeys(shas))
    out = git(bare, ["cat-file", "--batch"], input=("\n".join(unique) + "\n").encode())
    blobs, at = {}, 0
    for sha in unique:
        header_end = out.index(b"\n", at)
        _sha, _kind, size_text = out[at:header_end].split()
        size = int(size_text)
        if size > MAX_BLOB_BYTES:
            raise GitSourceError(f"{sha[:12]}: a file of {size} bytes (too large)")
        blobs[sha] = out[header_end + 1:header_end + 1 + size]
        at = header_end + 1 + size + 1
    return blobs
