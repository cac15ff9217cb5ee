"""The seam between check steps: what one step's code did is gone before the next step starts.

A check step (a pytest session, a test command, a hook run by checks.py) runs the agent's code,
which can write anywhere in the workspace: rewrite a hidden test file before the step that runs
it, or rewrite the code under test itself, so that the code a later step judges is not the code
the rubric judged in the diff. So each step is run as

    with guarded_step(hidden) as guard:   # hidden: (pristine file, workspace path) pairs
        run_step(...)
    guard.problem                         # "" unless the step changed what cannot be put back

- before: every process an earlier step left is ended (strays.end_strays), the workspace is
  recorded (each file's bytes, up to a budget), and the hidden files are laid in from the
  pristine copy (restore.add_file: no link followed, no cached bytecode left beside them);
- after: what the step left running is ended, and the workspace is put back as recorded: files
  it changed or removed are written back, files and folders it made (the hidden files too) are
  removed, modes and links put back. A file over the budget that the step changed cannot be put
  back: that is `problem`, a fail of the step.

What checks.py itself writes between steps stays: only what happens inside a step is undone.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.run.checks.restore import add_file
from ci_eval.run.checks.strays import end_strays

FILE_BYTES_KEPT = 16 * 1024 * 1024  # the largest file whose bytes are kept to put back
TOTAL_BYTES_KEPT = 256 * 1024 * 1024
MAX_ENTRIES = 300_000  # a larger workspace is not recorded (a note on stderr says so)


_ON_ERROR = "onexc" if sys.version_info >= (3, 12) else "onerror"


@dataclass(frozen=True)
class Entry:
    kind: str  # "dir", "file", "link", "other"
    mode: int
    signature: tuple = ()  # (size, mtime_ns, ctime_ns, inode) of a file: no write keeps ctime
    data: bytes | None = None  # a file's bytes (None: over the budget), a link's target


@dataclass
class Snapshot:
    root: Path
    entries: dict[str, Entry] = field(default_factory=dict)
    complete: bool = True


@dataclass
class StepGuard:
    problem: str = ""


def take(root: Path, keep_bytes: bool = True) -> Snapshot:
    """The workspace under `root` as it is now (links never followed), with the bytes of its
    files up to the budget when keep_bytes."""
    snapshot = Snapshot(root)
    budget = [TOTAL_BYTES_KEPT if keep_bytes else 0]
    stack = [""]
    while stack:
        folder = stack.pop()
        items = _listing(root / folder if folder else root)
        for item in items:
            rel = f"{folder}/{item.name}" if folder else item.name
            entry = _record(item, budget)
            if entry is None:
                continue
            snapshot.entries[rel] = entry
            if len(snapshot.entries) > MAX_ENTRIES:
                snapshot.complete = False
                return snapshot
            if entry.kind == "dir":
                stack.append(rel)
    return snapshot


def _listing(folder: Path) -> list[os.DirEntry]:
    """A folder's entries; one a step made unreadable (chmod 0) is made readable first."""
    for attempt in (1, 2):
        try:
            with os.scandir(folder) as listing:
                return list(listing)
        except PermissionError:
            if attempt == 1:
                try:
                    os.chmod(folder, 0o700, follow_symlinks=False)
                except OSError:
                    return []
        except OSError:
            return []
    return []


def _record(item: os.DirEntry, budget: list[int]) -> Entry | None:
    try:
        info = item.stat(follow_symlinks=False)
    except OSError:
        return None
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISDIR(info.st_mode):
        return Entry("dir", mode)
    if stat.S_ISLNK(info.st_mode):
        try:
            return Entry("link", mode, data=os.fsencode(os.readlink(item.path)))
        except OSError:
            return None
    if not stat.S_ISREG(info.st_mode):
        return Entry("other", mode)
    signature = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
    data = None
    if info.st_size <= min(FILE_BYTES_KEPT, budget[0]):
        data = _read(item.path)
        if data is not None:
            budget[0] -= len(data)
    return Entry("file", mode, signature, data)


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        chunks, size = [], 0
        while chunk := os.read(fd, 1024 * 1024):
            chunks.append(chunk)
            size += len(chunk)
            if size > FILE_BYTES_KEPT:
                return None
        return b"".join(chunks)
    finally:
        os.close(fd)


def put_back(snapshot: Snapshot) -> list[str]:
    """Make the workspace what `snapshot` recorded; the paths that could not be put back (a
    changed file whose bytes were over the budget)."""
    if not snapshot.complete:
        return []
    root = snapshot.root
    now = take(root, keep_bytes=False)
    for rel, entry in now.entries.items():  # a folder the step made read-only: writable again
        if entry.kind == "dir" and entry.mode & 0o700 != 0o700:
            os.chmod(root / rel, entry.mode | 0o700)
    # what is new, or of another kind: removed, deepest first
    for rel in sorted(now.entries, key=lambda r: -r.count("/")):
        was, entry = snapshot.entries.get(rel), now.entries[rel]
        if was is None or was.kind != entry.kind:
            _remove(root / rel, entry)
    lost: list[str] = []
    folders = []
    for rel in sorted(snapshot.entries, key=lambda r: r.count("/")):
        was, entry = snapshot.entries[rel], now.entries.get(rel)
        if entry is not None and entry.kind != was.kind:
            entry = None
        if was.kind == "dir":
            if entry is None:
                (root / rel).mkdir(mode=0o700)
            folders.append((rel, was, entry))
        elif not _put(root / rel, was, entry):
            lost.append(rel)
    for rel, was, entry in reversed(folders):  # last: a read-only folder gets its files first
        if entry is None or entry.mode != was.mode:
            os.chmod(root / rel, was.mode)
    return lost


def _remove(path: Path, entry: Entry) -> None:
    try:
        if entry.kind == "dir":
            shutil.rmtree(path, **{_ON_ERROR: _writable_then_retry})
        else:
            path.unlink()
    except FileNotFoundError:
        pass


def _writable_then_retry(function, path, _exc_info) -> None:
    """A folder the step made unwritable (chmod 0) is made writable so its files can go."""
    try:
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
    except OSError:
        pass
    function(path)


def _put(path: Path, was: Entry, now: Entry | None) -> bool:
    """One recorded file, link or other entry back; False when it changed and its bytes were
    not kept."""
    if was.kind == "link":
        if now is None or now.data != was.data:
            if now is not None:
                path.unlink()
            os.symlink(os.fsdecode(was.data), path)
        return True
    if was.kind == "other":
        return now is not None  # a fifo or socket the step removed is not made again
    if now is not None and now.signature == was.signature:
        if now.mode != was.mode:
            os.chmod(path, was.mode)
        return True
    if was.data is None:
        return False
    if now is not None:
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(was.data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.chmod(path, was.mode)
    os.utime(path, ns=(was.signature[1], was.signature[1]), follow_symlinks=False)
    return True


@contextmanager
def guarded_step(hidden: Iterable[tuple[Path, Path]] = (), root: str | os.PathLike = "."):
    """Run one check step: see the module docstring. `hidden`: (pristine file, workspace path
    relative to root) pairs laid in for this step only."""
    end_strays(set())  # nothing an earlier step (or a raw subprocess) started is still there
    snapshot = take(Path(root))
    if not snapshot.complete:
        print(f"ci-eval: the workspace holds over {MAX_ENTRIES:,} entries: what a check step "
              "changes in it is not put back", file=sys.stderr)
    guard = StepGuard()
    try:
        for pristine, target in hidden:
            add_file(pristine, Path(root) / target)
        yield guard
    finally:
        end_strays(set())
        lost = put_back(snapshot)
        if lost:
            guard.problem = (f"a check step changed {lost[0]}"
                             + (f" (and {len(lost) - 1} more)" if len(lost) > 1 else "")
                             + f", over the {FILE_BYTES_KEPT // (1024 * 1024)} MiB whose "
                             "bytes are kept to put back")
