"""What rubric criteria read of a run's diff (pure): path globs, and the added lines per file.

The diff is what ci_eval/run/workspace/diff.py records: `files` (every changed path with its added and
removed line counts, complete even when the text was cut) and `text` (git-style, cut at 64 KiB,
`truncated` then true). Paths and counts come from `files`; patterns read the added lines of the
text, so on a cut text a pattern criterion says what it could not see.

Globs match the whole path, `/`-separated, relative to the workspace root: `*` and `?` stay
inside one folder name, `**` spans folders (`tests/**` is everything under tests/, `**/conftest.py`
a conftest.py at any depth, the top included), `[abc]` is a character class. A glob without a
`/` matches that name at any depth (`conftest.py` = `**/conftest.py`), as in .gitignore.

What the diff could not see is part of it: `unverified` paths (a budget left them uncompared),
`unlisted` (the path list itself is incomplete) and each file's `unread` reason (binary, not
decodable as Python would decode it, too large, a budget). Criteria treat them as possibly
offending: unproven is fail.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import Protocol


class ChangedFile(Protocol):
    path: str
    status: str
    added: int
    removed: int
    old_path: str  # where a renamed file was ("" when it was not renamed)
    unread: str  # why its lines were not read ("" when they were)


class Diff(Protocol):
    text: str
    truncated: bool
    files: list  # of ChangedFile
    unverified: list  # paths that may have changed: a budget left them uncompared
    unlisted: str  # why the list of changed paths is incomplete ("" when it is complete)
    text_cut: list  # the files whose text `text` lacks, whole or in part (cut at the cap)


@functools.lru_cache(maxsize=512)
def glob_regex(glob: str) -> re.Pattern:
    folder = glob.endswith("/")  # a folder: everything under it
    glob = glob.strip("/")
    if "/" not in glob:
        glob = "**/" + glob
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape("["))
                i += 1
            else:
                body = glob[i + 1:end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                out.append(f"[{'^' if negate else ''}{body.replace(chr(92), chr(92) * 2)}]")
                i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    pattern = "".join(out) + ("/.*" if folder else "")
    return re.compile(pattern + r"\Z", re.DOTALL)


def matches(path: str, globs: Iterable[str]) -> bool:
    return any(glob_regex(glob).match(path) for glob in globs)


def files_in(diff: Diff, globs: Iterable[str] = ()) -> list:
    """The changed files, only those matching `globs` when given (a renamed file by either of
    its paths: moving a test out of tests/ changes tests/)."""
    globs = tuple(globs)
    return [f for f in diff.files
            if not globs or matches(f.path, globs) or (f.old_path and matches(f.old_path, globs))]


def unverified_in(diff: Diff, globs: Iterable[str] = ()) -> list[str]:
    """The paths (matching `globs` when given) that may have changed: not compared."""
    globs = tuple(globs)
    return [p for p in diff.unverified if not globs or matches(p, globs)]


def unread_in(diff: Diff, globs: Iterable[str] = (), *, added_only: bool) -> list[str]:
    """"path (why)" for the changed files (matching `globs`) whose lines were not read; with
    added_only, a deleted file is left out (it adds no line)."""
    return [f"{f.path} ({f.unread})" for f in files_in(diff, globs)
            if f.unread and not (added_only and f.status == "deleted")]


def code_forms(line: str) -> tuple[str, ...]:
    """A line as written and as Python reads its identifiers (NFKC: `_ｐｙｔｅｓｔ` is
    `_pytest`); a pattern meant for code is matched against both."""
    normal = unicodedata.normalize("NFKC", line)
    return (line,) if normal == line else (line, normal)


def added_lines(text: str) -> list[tuple[str, str]]:
    """(path, line) for every added line of a git-style diff text, in order."""
    found: list[tuple[str, str]] = []
    path, in_hunk = "", False
    for line in text.split("\n"):
        if line.startswith("diff --git a/"):
            path, in_hunk = _header_path(line), False
        elif line.startswith("rename to ") and not in_hunk:
            path = line[len("rename to "):]
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith("+"):
            found.append((path, line[1:]))
    return found


def _header_path(line: str) -> str:
    """`diff --git a/P b/P` -> P (a rename's new path comes from its `rename to` line)."""
    rest = line[len("diff --git a/"):]
    half = (len(rest) - len(" b/")) // 2
    if half > 0 and rest[half:half + 3] == " b/":
        return rest[:half]
    return rest.split(" b/", 1)[0]
