"""The agent's change: the workspace compared with the harness's own pristine copy of it.

No git runs on what the agent wrote: git takes configuration, hooks, attributes and even its git
dir from the work tree (`core.fsmonitor`, `filter.*.clean`, `diff.external`, a `.git` file), and
the agent's own commits, `assume-unchanged` or `info/exclude` would hide changes. Here both trees
are walked without following links; the workspace's top-level `.git` (the agent's) is left out.
The text is git-style (`diff --git a/p b/p`, `new file mode`, `deleted file mode`, `old mode` /
`new mode`, unified hunks, `Binary files a/p and b/p differ`), so people and rubric criteria read
it as they read `git diff`. A deleted and an added text file with the same or mostly the same
lines are one rename, as git shows it (ci_eval/run/renames.py).

Bounds: at most MAX_ENTRIES paths are compared, at most BYTE_BUDGET bytes read in all, files over
TEXT_CAP bytes are compared but not shown line by line, each file's line diff is bounded
(ci_eval/run/linediff.py: difflib alone is quadratic), and the text is cut at the cap. Hitting a
bound is said in `notes` and the result is marked truncated, never an error.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.run.linediff import unified_diff
from ci_eval.run.renames import fold_renames

DIFF_CAP_BYTES = 64 * 1024
TEXT_CAP = 1024 * 1024  # bigger files are compared, and reported as changed, but not diffed
BYTE_BUDGET = 256 * 1024 * 1024  # read in all, both trees
MAX_ENTRIES = 50_000
TIME_BUDGET_SECONDS = 60.0
AGENT_GIT_DIR = ".git"


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str  # "added" | "deleted" | "modified" | "mode" (only the mode changed) | "renamed"
    added: int = 0  # lines (0 for binary and large files)
    removed: int = 0
    binary: bool = False
    old_path: str = ""  # where a renamed file was


@dataclass
class WorkspaceDiff:
    text: str = ""
    truncated: bool = False
    files: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def lines_changed(self) -> int:
        return sum(f.added + f.removed for f in self.files)


@dataclass(frozen=True)
class _Entry:
    kind: str  # "file" | "link" | "other"
    mode: int
    size: int


class _Budget:
    def __init__(self, byte_budget: int, seconds: float):
        self.bytes_left = byte_budget
        self.deadline = time.monotonic() + seconds
        self.exhausted = ""

    def spend(self, size: int) -> bool:
        if self.exhausted:
            return False
        if size > self.bytes_left:
            self.exhausted = f"read budget of {BYTE_BUDGET // (1024 * 1024)} MiB used up"
        elif time.monotonic() > self.deadline:
            self.exhausted = f"time budget of {TIME_BUDGET_SECONDS:g}s used up"
        else:
            self.bytes_left -= size
            return True
        return False


def workspace_diff(pristine: Path, workspace: Path, *, cap: int = DIFF_CAP_BYTES,
                   byte_budget: int = BYTE_BUDGET,
                   seconds: float = TIME_BUDGET_SECONDS) -> WorkspaceDiff:
    """What changed from `pristine` (the harness's copy of the initial state) to `workspace`."""
    result = WorkspaceDiff()
    budget = _Budget(byte_budget, seconds)
    before = _walk(Path(pristine), result)
    after = _walk(Path(workspace), result)
    changes = []
    for path in sorted(set(before) | set(after)):
        change, text = _compare(path, before.get(path), after.get(path), Path(pristine),
                                Path(workspace), budget)
        if change is not None:
            changes.append((change, text))
        if budget.exhausted:
            break
    chunks: list[bytes] = []
    size = 0
    for change, text in fold_renames(changes, Path(pristine), Path(workspace), hunks=_hunks):
        result.files.append(change)
        data = text.encode("utf-8", errors="replace")
        if size < cap:
            chunks.append(data[: cap - size])
        size += len(data)
    if budget.exhausted:
        result.notes.append(f"diff stopped: {budget.exhausted}; later files not compared")
    result.truncated = result.truncated or size > cap or bool(budget.exhausted)
    result.text = b"".join(chunks).decode("utf-8", errors="replace")
    return result


def _walk(root: Path, result: WorkspaceDiff) -> dict[str, _Entry]:
    """relative path -> entry for every file, link and special file under root (folders are
    implied by their contents), without following links."""
    found: dict[str, _Entry] = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(root / rel if rel else root) as entries:
                listing = list(entries)
        except OSError:
            continue
        for entry in listing:
            path = f"{rel}/{entry.name}" if rel else entry.name
            if path == AGENT_GIT_DIR:
                continue
            if len(found) >= MAX_ENTRIES:
                result.truncated = True
                result.notes.append(f"more than {MAX_ENTRIES} paths in {root.name}; the rest "
                                    "were not compared")
                return found
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                stack.append(path)
            elif stat.S_ISLNK(info.st_mode):
                found[path] = _Entry("link", 0o120000, info.st_size)
            elif stat.S_ISREG(info.st_mode):
                mode = 0o100755 if info.st_mode & 0o111 else 0o100644
                found[path] = _Entry("file", mode, info.st_size)
            else:
                found[path] = _Entry("other", stat.S_IFMT(info.st_mode), 0)
    return found


LARGE = object()  # a file over TEXT_CAP: compared in chunks, not shown line by line


def _content(root: Path, path: str, entry: _Entry, budget: _Budget):
    """A link's target or a file's bytes; LARGE past TEXT_CAP; None when it cannot be read
    (the budget ran out, or it vanished); b"" for a special file."""
    full = root / path
    if entry.kind == "link":
        try:
            return os.readlink(full).encode("utf-8", errors="surrogateescape")
        except OSError:
            return None
    if entry.kind != "file":
        return b""
    if entry.size > TEXT_CAP:
        return LARGE
    if not budget.spend(entry.size):
        return None
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = os.read(fd, TEXT_CAP + 1)
    finally:
        os.close(fd)
    return LARGE if len(data) > TEXT_CAP else data


def _same_large(a: Path, b: Path, budget: _Budget) -> bool | None:
    """Compare two large files in chunks; None when the budget ran out first."""
    try:
        fa = os.open(a, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        fb = os.open(b, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        while True:
            if not budget.spend(2 * 1024 * 1024):
                return None
            x, y = os.read(fa, 1024 * 1024), os.read(fb, 1024 * 1024)
            if x != y:
                return False
            if not x:
                return True
    finally:
        os.close(fa)
        os.close(fb)


def _compare(path: str, old: _Entry | None, new: _Entry | None, pristine: Path,
             workspace: Path, budget: _Budget) -> tuple[FileChange | None, str]:
    """(the change, its diff text), or (None, "") when nothing changed or it could not be told."""
    a = _content(pristine, path, old, budget) if old else b""
    b = _content(workspace, path, new, budget) if new else b""
    if a is None or b is None:
        return None, ""
    if old and new and old.kind == new.kind:
        if a is LARGE and b is LARGE and old.size == new.size:
            same = _same_large(pristine / path, workspace / path, budget)
            if same is None:
                return None, ""
        else:
            same = a is not LARGE and a == b
        if same and old.mode == new.mode:
            return None, ""
        if same:
            return (FileChange(path, "mode"),
                    f"diff --git a/{path} b/{path}\nold mode {old.mode:o}\nnew mode {new.mode:o}\n")
    head = f"diff --git a/{path} b/{path}\n"
    if old is None:
        head += f"new file mode {new.mode:o}\n"
        status = "added"
    elif new is None:
        head += f"deleted file mode {old.mode:o}\n"
        status = "deleted"
    else:
        status = "modified"
        if old.mode != new.mode:
            head += f"old mode {old.mode:o}\nnew mode {new.mode:o}\n"
    text_a = None if a is LARGE else _as_text(a)
    text_b = None if b is LARGE else _as_text(b)
    if text_a is None or text_b is None:
        label_a = "/dev/null" if old is None else f"a/{path}"
        label_b = "/dev/null" if new is None else f"b/{path}"
        return (FileChange(path, status, binary=True),
                head + f"Binary files {label_a} and {label_b} differ\n")
    lines = unified_diff(
        text_a.splitlines(keepends=True), text_b.splitlines(keepends=True),
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile="/dev/null" if new is None else f"b/{path}")
    added, removed, body = _hunks(lines)
    return FileChange(path, status, added, removed), head + body


def _hunks(lines: list[str]) -> tuple[int, int, str]:
    """Unified-diff lines -> (added lines, removed lines, the text as git shows it)."""
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    body = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
    return added, removed, body


def _as_text(data: bytes | None) -> str | None:
    if data is None or b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
