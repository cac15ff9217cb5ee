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
- after: what the step left running is ended and the hidden files are removed; what else the
  step changed is noted, and put back when the next step starts (files it changed or removed
  written back, files and folders it made removed, modes and links put back), so the workspace
  a kept run shows is the one the last step left. A file over the budget that the step changed
  cannot be put back: that is `problem`, a fail of the step.

What checks.py itself writes between steps stays: a path it changed after a step ended is not
put back.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import sys
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.run.checks.restore import add_file
from ci_eval.run.checks.process_tree import descendants, end_strays

FILE_BYTES_KEPT = 16 * 1024 * 1024  # the largest file whose bytes are kept to put back
TOTAL_BYTES_KEPT = 128 * 1024 * 1024
MAX_ENTRIES = 300_000  # a larger workspace is not recorded (a note on stderr says so)


_ON_ERROR = "onexc" if sys.version_info >= (3, 12) else "onerror"


@dataclass(frozen=True)
class Entry:
    kind: str  # "dir", "file", "link", "other"
    mode: int
    signature: tuple = ()  # (size, mtime_ns, ctime_ns, inode) of a file: no write keeps ctime
    data: bytes | None = None  # a file's bytes (None: over the budget), a link's target


@dataclass
class TreeSnapshot:
    root: Path
    entries: dict[str, Entry] = field(default_factory=dict)
    complete: bool = True


@dataclass
class StepGuard:
    problem: str = ""


def take(root: Path, keep_bytes: bool = True) -> TreeSnapshot:
    """The workspace under `root` as it is now (links never followed), with the bytes of its
    files up to the budget when keep_bytes."""
    snapshot = TreeSnapshot(root)
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


def changes(before: TreeSnapshot, after: TreeSnapshot) -> dict[str, Entry | None]:
    """The paths that differ between two snapshots -> what `before` had there (None: nothing)."""
    found = {}
    for rel in before.entries.keys() | after.entries.keys():
        was, now = before.entries.get(rel), after.entries.get(rel)
        if _differs(was, now):
            found[rel] = was
    return found


def _differs(was: Entry | None, now: Entry | None) -> bool:
    if was is None or now is None:
        return was is not now
    if was.kind != now.kind or was.mode != now.mode:
        return True
    if was.kind == "link":
        return was.data != now.data
    return was.signature != now.signature


def put_back(root: Path, wanted: dict[str, Entry | None],
             since: TreeSnapshot | None = None) -> list[str]:
    """Make each path of `wanted` what it maps to (None: nothing there), except those that
    changed after `since` was taken (checks.py's own writes between steps stay); the paths that
    could not be put back (a changed file whose bytes were not kept)."""
    now = take(root, keep_bytes=False)
    if since is not None:
        wanted = {rel: was for rel, was in wanted.items()
                  if not _differs(since.entries.get(rel), now.entries.get(rel))}
    opened = {}
    for rel, entry in now.entries.items():  # a folder made read-only: writable for a moment
        if entry.kind == "dir" and entry.mode & 0o700 != 0o700:
            os.chmod(root / rel, entry.mode | 0o700)
            opened[rel] = entry.mode
    for rel in sorted(wanted, key=lambda r: -r.count("/")):  # deepest first
        was, entry = wanted[rel], now.entries.get(rel)
        if entry is not None and (was is None or was.kind != entry.kind):
            _remove(root / rel, entry)
            opened.pop(rel, None)
    lost: list[str] = []
    for rel in sorted(wanted, key=lambda r: r.count("/")):
        was, entry = wanted[rel], now.entries.get(rel)
        if was is None:
            continue
        if entry is not None and entry.kind != was.kind:
            entry = None
        if was.kind == "dir":
            if entry is None:
                (root / rel).mkdir(mode=0o700, parents=True)
            opened[rel] = was.mode
        elif not _put(root / rel, was, entry):
            lost.append(rel)
    for rel in sorted(opened, key=lambda r: -r.count("/")):  # last: files first, then modes
        try:
            os.chmod(root / rel, opened[rel])
        except FileNotFoundError:
            pass
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


_pending: list[tuple[dict[str, Entry | None], TreeSnapshot]] = []  # ended steps' changes
PR_GET_CHILD_SUBREAPER = 37


def undo_ended_steps() -> None:
    """Put back what the steps that ended changed (the last one to end first), except what
    checks.py changed since."""
    while _pending:
        wanted, after = _pending.pop()
        if after.root.is_dir():
            put_back(after.root, wanted, since=after)


@functools.cache
def _owns_every_descendant() -> bool:
    """True in the checks process (the init of its PID namespace, or a child subreaper: every
    process below it was started by checks.py or a step); False where ci_eval.checks is used
    as a library (a test suite's worker), whose other children are not a step's."""
    if os.getpid() == 1:
        return True
    import ctypes  # here: most checks.py never ask

    try:
        flag = ctypes.c_int(0)
        ctypes.CDLL(None).prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
        return flag.value != 0
    except (OSError, AttributeError):
        return False


def _end_earlier_processes() -> set[int]:
    """End what earlier steps left running; the processes that are spared (as library)."""
    if _owns_every_descendant():
        end_strays(set())
        return set()
    return descendants()


@contextmanager
def guarded_step(hidden: Iterable[tuple[Path, Path]] = (), root: str | os.PathLike = "."):
    """Run one check step: see the module docstring. `hidden`: (pristine file, workspace path
    relative to root) pairs laid in for this step only."""
    root = Path(root).absolute()
    spared = _end_earlier_processes()  # nothing an earlier step or raw subprocess started
    undo_ended_steps()
    snapshot = take(root)
    if not snapshot.complete:
        print(f"ci-eval: the workspace holds over {MAX_ENTRIES:,} entries: what a check step "
              "changes in it is not put back", file=sys.stderr)
    guard = StepGuard()
    laid = {}
    try:
        for pristine, target in hidden:
            for rel in [*reversed(Path(target).parents[:-1]), Path(target)]:
                laid[rel.as_posix()] = snapshot.entries.get(rel.as_posix())
            add_file(pristine, root / target)
        yield guard
    finally:
        end_strays(spared)
        put_back(root, laid)  # the hidden files are gone before any other code runs
        if snapshot.complete:
            after = take(root, keep_bytes=False)
            changed = changes(snapshot, after)
            lost = [rel for rel, was in changed.items()
                    if was is not None and was.kind == "file" and was.data is None]
            if lost:
                guard.problem = (f"a check step changed {lost[0]}"
                                 + (f" (and {len(lost) - 1} more)" if len(lost) > 1 else "")
                                 + f", over the {FILE_BYTES_KEPT // (1024 * 1024)} MiB whose "
                                 "bytes are kept to put it back")
            _pending.append((changed, after))
