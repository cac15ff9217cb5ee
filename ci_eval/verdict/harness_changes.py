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
from dataclasses import dataclass

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


@dataclass(frozen=True)
class HarnessRecord:
    """baseline.json's `harness`: the digest the gate values were recorded with, and each file's
    digest (None when more than BASELINE_FILES_CAP, or not known)."""

    digest: str
    files: Mapping[str, str] | None = None

    def to_json(self) -> dict:
        return {"digest": self.digest,
                "files": dict(sorted(self.files.items())) if self.files is not None else None}

    @classmethod
    def from_json(cls, raw: dict) -> HarnessRecord:
        return cls(raw["digest"], raw.get("files"))


def recorded_harness(digests: set[str], files: Mapping[str, str] | None
                     ) -> tuple[HarnessRecord | None, str]:
    """What `baseline update` records from the results' harness digests and the repo's harness
    files now: the one digest, with the files when they are the ones it was taken over (and not
    too many); none when the results hold runs of several harnesses (and a note why)."""
    if not digests:
        return None, ""
    if len(digests) > 1:
        return None, (f"note: the results hold runs of {len(digests)} different harnesses; the "
                      "baseline records no harness (run all tasks with one)")
    digest = next(iter(digests))
    if files is None or harness_digest(files) != digest or len(files) > BASELINE_FILES_CAP:
        return HarnessRecord(digest), ""
    return HarnessRecord(digest, dict(files)), ""


def changes_note(record: HarnessRecord | None, digests: set[str],
                 files: Mapping[str, str] | None) -> str:
    """compare's line about the harness against the baseline's record ("" when there is no
    record, or the results' one harness is the baseline's)."""
    if record is None or not digests:
        return ""
    if len(digests) > 1:
        return (f"harness: the results hold runs of {len(digests)} different harnesses (the "
                "baseline's is one of them)" if record.digest in digests else
                f"harness changed since the baseline: the results hold runs of {len(digests)} "
                "different harnesses")
    digest = next(iter(digests))
    current = files if files is not None and harness_digest(files) == digest else None
    return changes_line(record.files, record.digest, current, digest)
