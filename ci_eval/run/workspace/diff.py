"""The agent's change: the workspace compared with the harness's own pristine copy of it.

No git runs on what the agent wrote: git takes configuration, hooks, attributes and even its git
dir from the work tree (`core.fsmonitor`, `filter.*.clean`, `diff.external`, a `.git` file), and
the agent's own commits, `assume-unchanged` or `info/exclude` would hide changes. Here both trees
are walked without following links; the workspace's top-level `.git` (the agent's) is left out.
The text is git-style (`diff --git a/p b/p`, `new file mode`, `deleted file mode`, `old mode` /
`new mode`, unified hunks, `Binary files a/p and b/p differ`), so people and rubric criteria read
it as they read `git diff`. A deleted and an added text file with the same or mostly the same
lines are one rename, as git shows it (ci_eval/run/workspace/renames.py).

Text is read as Python reads a source file (ci_eval/run/workspace/sourcetext.py: a PEP 263 coding cookie,
a BOM, lines ended by \n, \r\n or \r), so the lines rubric criteria match are the lines the
interpreter runs.

Bounds: at most MAX_ENTRIES paths are listed, at most BYTE_BUDGET bytes read in all, within
TIME_BUDGET_SECONDS; files over TEXT_CAP bytes are compared but not shown line by line, each
file's line diff is bounded (ci_eval/run/workspace/linediff.py: difflib alone is quadratic), and the text is
cut at the cap. A bound never hides a changed path: paths are listed before any content is read
(a path added, deleted, of another kind, mode or size is changed whatever its bytes), files alike
in all of that are compared smallest first, and what a budget left unknown is said: `unverified`
(paths that may have changed), `unlisted` (the path list itself is incomplete) and each file's
`unread` (why its lines were not read: binary, not decodable, too large, a budget). Rubric
criteria that cover what was not seen fail (ci_eval/grading/score.py); hitting a bound is also
said in `notes`, and the result is marked truncated, never an error.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.output import mask
from ci_eval.run.workspace.linediff import unified_diff
from ci_eval.run.workspace.renames import fold_renames
from ci_eval.run.workspace.sourcetext import source_lines, source_text

DIFF_CAP_BYTES = 64 * 1024
TEXT_CAP = 1024 * 1024  # bigger files are compared, and reported as changed, but not diffed
BYTE_BUDGET = 256 * 1024 * 1024  # read in all, both trees
MAX_ENTRIES = 50_000
CHUNK = 1024 * 1024
TIME_BUDGET_SECONDS = 60.0
AGENT_GIT_DIR = ".git"


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str  # "added" | "deleted" | "modified" | "mode" (only the mode changed) | "renamed"
    added: int = 0  # lines (0 when they were not read)
    removed: int = 0
    unread: str = ""  # why its lines were not read (binary, too large, budget); "" when they were
    old_path: str = ""  # where a renamed file was

    @property
    def binary(self) -> bool:
        return bool(self.unread)


@dataclass
class WorkspaceDiff:
    text: str = ""
    truncated: bool = False
    files: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)  # may have changed: not compared
    unlisted: str = ""  # why the list of changed paths is not complete ("" when it is)
    text_cut: list[str] = field(default_factory=list)  # files whose text the cap cut or left out


@dataclass(frozen=True)
class _Entry:
    kind: str  # "file" | "link" | "other"
    mode: int
    size: int


class _Budget:
    def __init__(self, byte_budget: int, seconds: float):
        self.byte_budget = byte_budget
        self.bytes_left = byte_budget
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.exhausted = ""

    def spend(self, size: int) -> bool:
        if self.exhausted:
            return False
        if size > self.bytes_left:
            self.exhausted = f"read budget of {self.byte_budget // (1024 * 1024)} MiB used up"
        elif time.monotonic() > self.deadline:
            self.exhausted = f"time budget of {self.seconds:g}s used up"
        else:
            self.bytes_left -= size
            return True
        return False


def workspace_diff(pristine: Path, workspace: Path, *, cap: int = DIFF_CAP_BYTES,
                   byte_budget: int = BYTE_BUDGET,
                   seconds: float = TIME_BUDGET_SECONDS) -> WorkspaceDiff:
    """What changed from `pristine` (the harness's copy of the initial state) to `workspace`.

    Paths first, contents within the budgets: (1) both trees are walked; a path added, deleted,
    of another kind, mode or size is changed whatever its bytes; (2) files alike in all of that
    are compared byte for byte, smallest first, and those the budgets leave uncompared are
    `unverified` (they may have changed); (3) the changed files are read and diffed in path
    order while the budgets last, and a file whose lines were not read says why (`unread`)."""
    pristine, workspace = Path(pristine), Path(workspace)
    result = WorkspaceDiff()
    budget = _Budget(byte_budget, seconds)
    before = _walk(pristine, result)
    after = _walk(workspace, result)
    changed, alike = [], []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if new is None and result.unlisted:
            continue  # not seen in the workspace, perhaps not reached: `unlisted` says it
        elif old and new and old.kind == new.kind == "file" and old.size == new.size:
            alike.append(path)
        elif not _same_entry(pristine, workspace, path, old, new):
            changed.append(path)
    mode_only = set()
    for path in sorted(alike, key=lambda p: (before[p].size, p)):
        same = _same_bytes(os.path.join(pristine, path), os.path.join(workspace, path), budget)
        if same is None:
            result.unverified.append(path)
        elif not same:
            changed.append(path)
        elif before[path].mode != after[path].mode:
            changed.append(path)
            mode_only.add(path)
    changes = []
    for path in sorted(changed):
        old, new = before.get(path), after.get(path)
        if path in mode_only and old is not None and new is not None:
            header = (f"diff --git a/{path} b/{path}\nold mode {old.mode:o}\n"
                      f"new mode {new.mode:o}\n")
            changes.append((FileChange(path, "mode"), header))
        else:
            changes.append(_compare(path, old, new, pristine, workspace, budget))
    chunks: list[bytes] = []
    size = 0
    for change, text in fold_renames(changes, pristine, workspace, hunks=_hunks):
        result.files.append(change)
        data = mask(text).encode("utf-8", errors="replace")  # masked before it is cut
        if size < cap:
            chunks.append(data[: cap - size])
        if size + len(data) > cap:
            result.text_cut.append(change.path)
        size += len(data)
    result.unverified.sort()
    if budget.exhausted:
        result.notes.append(f"diff incomplete: {budget.exhausted}; "
                            f"{len(result.unverified)} file(s) not compared, the contents of "
                            f"{sum(1 for f in result.files if f.unread == _over(budget))} "
                            "changed file(s) not read")
    result.truncated = (result.truncated or size > cap or bool(budget.exhausted)
                        or bool(result.unverified))
    result.text = mask(b"".join(chunks).decode("utf-8", errors="replace"), cut_end=size > cap)
    return result


def _over(budget: _Budget) -> str:
    return f"not read: the diff's {budget.exhausted}"


def _walk(root: Path, result: WorkspaceDiff) -> dict[str, _Entry]:
    """relative path -> entry for every file, link and special file under root (folders are
    implied by their contents), without following links. A folder that cannot be listed, an
    entry that cannot be stat'ed or the entry cap makes the list incomplete (`unlisted`)."""
    found: dict[str, _Entry] = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel)) as entries:
                listing = list(entries)
        except OSError as exc:
            _unlisted(result, f"{rel or '.'} could not be listed ({exc.strerror or exc})")
            continue
        for entry in listing:
            path = f"{rel}/{entry.name}" if rel else entry.name
            if path == AGENT_GIT_DIR:
                continue
            if len(found) >= MAX_ENTRIES:
                result.truncated = True
                result.notes.append(f"more than {MAX_ENTRIES} paths in {root.name}; the rest "
                                    "were not compared")
                _unlisted(result, f"more than {MAX_ENTRIES} paths")
                return found
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                _unlisted(result, f"{path} could not be examined ({exc.strerror or exc})")
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


def _unlisted(result: WorkspaceDiff, why: str) -> None:
    result.truncated = True
    if not result.unlisted:
        result.unlisted = why


def _open(path: Path | str) -> int:
    return os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)


def _same_entry(pristine: Path, workspace: Path, path: str, old: _Entry | None,
                new: _Entry | None) -> bool:
    """Whether a path not alike as a file (added, deleted, another kind or size, a link, a
    special file) is unchanged: only two links with one target or two special files of one
    type are."""
    if old is None or new is None or old.kind != new.kind or old.kind == "file":
        return False
    if old.kind == "other":
        return old.mode == new.mode
    return _link(pristine / path) == _link(workspace / path)


def _link(path: Path) -> bytes | None:
    try:
        return os.readlink(path).encode("utf-8", errors="surrogateescape")
    except OSError:
        return None


def _same_bytes(a: str, b: str, budget: _Budget) -> bool | None:
    """Whether two files of one size hold the same bytes, read in chunks; None when it could
    not be told (a budget ran out, a file could not be opened)."""
    try:
        fa = _open(a)
    except OSError:
        return None
    try:
        fb = _open(b)
    except OSError:
        os.close(fa)
        return None
    try:
        while True:
            x, y = os.read(fa, CHUNK), os.read(fb, CHUNK)
            if not budget.spend(len(x) + len(y)):
                return None
            if x != y:
                return False
            if not x:
                return True
    except OSError:
        return None
    finally:
        os.close(fa)
        os.close(fb)


def _content(root: Path, path: str, entry: _Entry | None,
             budget: _Budget) -> tuple[bytes | None, str]:
    """(a link's target or a file's bytes, "") or (None, why they were not read); b"" for an
    absent path or a special file."""
    if entry is None or entry.kind == "other":
        return b"", ""
    if entry.kind == "link":
        target = _link(root / path)
        return (target, "") if target is not None else (None, "could not be read")
    if entry.size > TEXT_CAP:
        return None, _too_large(entry.size)
    if not budget.spend(entry.size):
        return None, _over(budget)
    try:
        fd = _open(root / path)
    except OSError as exc:
        return None, f"could not be read ({exc.strerror or exc})"
    try:
        data = os.read(fd, TEXT_CAP + 1)
    except OSError as exc:
        return None, f"could not be read ({exc.strerror or exc})"
    finally:
        os.close(fd)
    return (None, _too_large(len(data))) if len(data) > TEXT_CAP else (data, "")


def _too_large(size: int) -> str:
    return (f"too large to read ({size / (1024 * 1024):.1f} MiB; the diff reads files of up to "
            f"{TEXT_CAP // (1024 * 1024)} MiB)")


def _compare(path: str, old: _Entry | None, new: _Entry | None, pristine: Path,
             workspace: Path, budget: _Budget) -> tuple[FileChange, str]:
    """A changed path: its change and its git-style diff text."""
    head = f"diff --git a/{path} b/{path}\n"
    if old is None and new is not None:
        head += f"new file mode {new.mode:o}\n"
        status = "added"
    elif new is None and old is not None:
        head += f"deleted file mode {old.mode:o}\n"
        status = "deleted"
    else:
        status = "modified"
        if old is not None and new is not None and old.mode != new.mode:
            head += f"old mode {old.mode:o}\nnew mode {new.mode:o}\n"
    a, why_a = _content(pristine, path, old, budget)
    b, why_b = _content(workspace, path, new, budget)
    if old and new and old.kind == new.kind and a is not None and a == b:
        return FileChange(path, "mode"), head
    text_a, text_b = (source_text(a) if a is not None else (None, why_a),
                      source_text(b) if b is not None else (None, why_b))
    if text_a[0] is None or text_b[0] is None:
        why = text_b[1] or text_a[1]
        label_a = "/dev/null" if old is None else f"a/{path}"
        label_b = "/dev/null" if new is None else f"b/{path}"
        shown = "" if why.startswith("binary") else f" ({why})"
        return (FileChange(path, status, unread=why),
                head + f"Binary files {label_a} and {label_b} differ{shown}\n")
    lines = unified_diff(
        source_lines(text_a[0]), source_lines(text_b[0]),
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile="/dev/null" if new is None else f"b/{path}")
    added, removed, body = _hunks(lines)
    # A link stands for lines elsewhere (what `import` runs), which the rubric does not read.
    linked = (f"a symbolic link (to {text_b[0][:200]!r}): the lines it stands for are not read"
              if new is not None and new.kind == "link" else "")
    return FileChange(path, status, added, removed, unread=linked), head + body


def _hunks(lines: list[str]) -> tuple[int, int, str]:
    """Unified-diff lines -> (added lines, removed lines, the text as git shows it)."""
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return added, removed, "".join(map(_shown, lines))


def _shown(line: str) -> str:
    """A diff line as the text shows it: ended by a newline; a last line without one marked as
    git marks it (a line Python ends with a bare \\r keeps it, and gets a newline)."""
    if line.endswith("\n"):
        return line
    if line.endswith("\r"):
        return line + "\n"
    return line + "\n\\ No newline at end of file\n"
