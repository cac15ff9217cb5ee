"""The harness's provenance, pure: one digest over a harness's files, and what changed between
two harnesses (the baseline's and this run's), in words a PR comment can carry.

A harness is described by {key: file digest}: the key is the file's path in the repo (a home
entry's file too: what a PR changes is the repo's file), the file digest covers its placement,
mode and content (agents/harness.py). The harness digest is one sha256 over the sorted
"key NUL digest" lines, so the same files give the same digest whatever order they were found in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

EMPTY_HARNESS_DIGEST = hashlib.sha256(b"").hexdigest()
BASELINE_FILES_CAP = 200  # file digests a baseline keeps; more: the harness digest alone
CHANGES_SHOWN = 8  # changes named in one line; the rest are counted


def harness_digest(files: Mapping[str, str]) -> str:
    lines = b"".join(f"{key}\0{digest}\n".encode() for key, digest in sorted(files.items()))
    return hashlib.sha256(lines).hexdigest()


def harness_changes(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """What changed from `old` to `new`: "CLAUDE.md modified", "x added", and a folder whose
    files are all gone (and holds none of new's) as one "folder/ removed" (or "added")."""
    changes = [f"{key} modified" for key in sorted(set(old) & set(new)) if old[key] != new[key]]
    changes += _grouped(sorted(set(new) - set(old)), new, old, "added")
    changes += _grouped(sorted(set(old) - set(new)), old, new, "removed")
    return sorted(changes)


def _grouped(keys: list[str], side: Mapping[str, str], other: Mapping[str, str],
             word: str) -> list[str]:
    """Keys gone from (or new to) a harness, a folder whose files are all among them named once,
    as the highest such folder."""
    named, covered = [], set()
    for key in keys:
        if key in covered:
            continue
        folder = _highest_whole_folder(key, set(keys), side, other)
        if folder:
            inside = [k for k in keys if k.startswith(folder)]
            covered.update(inside)
            named.append(f"{folder} {word}")
        else:
            named.append(f"{key} {word}")
    return named


def _highest_whole_folder(key: str, keys: set[str], side: Mapping[str, str],
                          other: Mapping[str, str]) -> str:
    parts = key.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/".join(parts[:depth]) + "/"
        in_side = [k for k in side if k.startswith(folder)]
        if (len(in_side) > 1 and all(k in keys for k in in_side)
                and not any(k.startswith(folder) for k in other)):
            return folder
    return ""


def changes_line(old: Mapping[str, str] | None, old_digest: str | None,
                 new: Mapping[str, str] | None, new_digest: str | None) -> str:
    """One line for compare and the PR comment, "" when nothing changed or nothing is known:
    "harness changed since the baseline: CLAUDE.md modified, .claude/skills/sums/ removed"."""
    if not old_digest or not new_digest or old_digest == new_digest:
        return ""
    if old is None or new is None:
        return "harness changed since the baseline (its files are not listed: digest only)"
    changes = harness_changes(old, new) or ["file list unchanged, digest differs"]
    more = len(changes) - CHANGES_SHOWN
    shown = ", ".join(changes[:CHANGES_SHOWN]) + (f" and {more} more" if more > 0 else "")
    return f"harness changed since the baseline: {shown}"
