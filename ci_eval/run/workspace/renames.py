"""Renames in the agent's change: a deleted file and an added one with (mostly) the same lines.

`git mv old new` is one change to one file, not the deletion of every line of `old` and the
addition of every line of `new`. As git does by default (`diff.renames`, similarity 50%), a
deleted and an added text file are paired when their content is the same (a pure rename: one
file, no lines changed) or at least RENAME_SIMILARITY of their lines are common (a rename with
edits: one file, only the edited lines counted and shown). Binary and unread files are never
paired. Exact pairs are found by content; similar ones only while deleted x added stays within
MAX_CANDIDATE_PAIRS, so the cost stays bounded whatever the agent deleted and added.

The text is git's: `diff --git a/old b/new`, `similarity index N%`, `rename from`, `rename to`,
then the hunks of the edits (`--- a/old`, `+++ b/new`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ci_eval.run.workspace.linediff import unified_diff
from ci_eval.run.workspace.sourcetext import source_lines, source_text

RENAME_SIMILARITY = 0.5
MAX_CANDIDATE_PAIRS = 10_000
READ_CAP = 1024 * 1024


def fold_renames(changes: list, pristine: Path, workspace: Path, *,
                 hunks: Callable[[list[str]], tuple[int, int, str]]) -> list:
    """[(FileChange, text)] with each paired deleted + added file replaced by one "renamed"
    change at the added file's place. `hunks(lines)` turns unified-diff lines into
    (added, removed, text) as the caller shows them."""
    gone = {c.path: c for c, _ in changes if c.status == "deleted" and not c.binary}
    new = {c.path: c for c, _ in changes if c.status == "added" and not c.binary}
    if not gone or not new:
        return changes
    old_text = _texts(pristine, gone)
    new_text = _texts(workspace, new)
    pairs = pair_renames(old_text, new_text)
    if not pairs:
        return changes
    old_of = {n: o for o, n in pairs}
    out = []
    for change, text in changes:
        if change.path in old_of.values() and change.status == "deleted":
            continue
        if change.path in old_of and change.status == "added":
            old = old_of[change.path]
            change, text = _renamed(change, old, old_text[old], new_text[change.path], hunks)
        out.append((change, text))
    return out


def pair_renames(old: dict[str, str], new: dict[str, str]) -> list[tuple[str, str]]:
    """(old path, new path) pairs: identical contents first (by path order), then the most
    similar remaining pairs with at least RENAME_SIMILARITY of their lines in common."""
    pairs: list[tuple[str, str]] = []
    by_content: dict[str, list[str]] = {}
    for path in sorted(old):
        by_content.setdefault(old[path], []).append(path)
    left_new = []
    for path in sorted(new):
        same = by_content.get(new[path])
        if same:
            pairs.append((same.pop(0), path))
        else:
            left_new.append(path)
    taken = {o for o, _ in pairs}
    left_old = [p for p in sorted(old) if p not in taken]
    if not left_old or not left_new or len(left_old) * len(left_new) > MAX_CANDIDATE_PAIRS:
        return pairs
    lines = {("a", p): Counter(old[p].splitlines()) for p in left_old}
    lines.update({("b", p): Counter(new[p].splitlines()) for p in left_new})
    scored = sorted((-similarity(lines["a", o], lines["b", n]), o, n)
                     for o in left_old for n in left_new)
    used_old, used_new = set(), set()
    for score, o, n in scored:
        if -score < RENAME_SIMILARITY:
            break
        if o not in used_old and n not in used_new:
            pairs.append((o, n))
            used_old.add(o)
            used_new.add(n)
    return pairs


def similarity(a: Counter, b: Counter) -> float:
    """The share of lines the two texts have in common (1.0 for the same lines)."""
    total = sum(a.values()) + sum(b.values())
    if not total:
        return 1.0
    return 2 * sum((a & b).values()) / total


def _renamed(change, old: str, a: str, b: str, hunks) -> tuple:
    new = change.path
    lines = unified_diff(source_lines(a), source_lines(b),
                         fromfile=f"a/{old}", tofile=f"b/{new}")
    added, removed, body = hunks(lines)
    score = round(100 * similarity(Counter(a.splitlines()), Counter(b.splitlines())))
    head = (f"diff --git a/{old} b/{new}\nsimilarity index {score}%\n"
            f"rename from {old}\nrename to {new}\n")
    return replace(change, status="renamed", old_path=old, added=added, removed=removed), \
        head + body


def _texts(root: Path, changes: dict) -> dict[str, str]:
    """path -> its text, for the files that read back as text (as Python reads a source file:
    ci_eval/run/workspace/sourcetext.py) within READ_CAP."""
    found = {}
    for path in changes:
        try:
            fd = os.open(root / path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            data = os.read(fd, READ_CAP + 1)
        except OSError:
            continue
        finally:
            os.close(fd)
        if len(data) > READ_CAP:
            continue
        text, _ = source_text(data)
        if text is not None:
            found[path] = text
    return found
