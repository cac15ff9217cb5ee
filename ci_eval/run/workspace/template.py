"""A task's pristine tree as a list of what to make, laid down as a fresh workspace per run.

`shutil.copytree` pays for each file an open and a stat of the source, the copy, then a stat,
a chmod, a utime and an extended-attribute listing (copystat), and for each folder the same;
on this project's disks the kernel's part of creating a file or a folder is most of a run's
harness CPU. The template lists the tree once per task; a run then costs one mkdir per folder
and, per file, an open of the source and one that creates the copy, its mode and times set
through the descriptor (the bytes sent in the kernel, as copy2 sends them; holding them in memory
saved nothing measurable: creating the inode is the cost). The result is what
copytree(symlinks=True) makes: every file a copy of its own (no hardlinks: see build.py), links
copied as links, modes and modification times kept (the `.git` index relies on them).

A tree holding what only a copy reproduces (a FIFO or device, which copytree refuses too; a file
or folder with extended attributes) has no template: the caller copies it.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

CHUNK = 8 * 1024 * 1024
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class _TemplateEntry:
    rel: str  # relative to the tree; "" for its top
    kind: str  # "dir" | "file" | "link"
    mode: int  # permission bits
    times: tuple[int, int]  # (atime, mtime) in ns
    target: bytes = b""  # a link's


class TreeTemplate:
    """The entries of a tree in creation order (a folder before what it holds)."""

    def __init__(self, root: Path, entries: list[_TemplateEntry]):
        self.root = root
        self.entries = entries

    @classmethod
    def of(cls, root: Path,
           skip_top: frozenset[str] = frozenset({".git"})) -> TreeTemplate | None:
        """The template of the tree at root, its top-level names in skip_top left out; None
        when only a copy reproduces it."""
        root = Path(root)
        entries: list[_TemplateEntry] = []
        stack = [""]
        while stack:
            rel = stack.pop()
            folder = os.path.join(root, rel) if rel else str(root)
            info = os.lstat(folder)
            if not stat.S_ISDIR(info.st_mode) or _has_xattrs(folder):
                return None
            entries.append(_TemplateEntry(rel, "dir", stat.S_IMODE(info.st_mode), _times(info)))
            with os.scandir(folder) as listing:
                children = sorted(listing, key=lambda e: e.name)
            for child in children:
                if not rel and child.name in skip_top:
                    continue
                path = f"{rel}/{child.name}" if rel else child.name
                info = child.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    stack.append(path)
                elif stat.S_ISLNK(info.st_mode):
                    entries.append(_TemplateEntry(path, "link", 0, _times(info),
                                          os.fsencode(os.readlink(child.path))))
                elif stat.S_ISREG(info.st_mode) and not _has_xattrs(child.path):
                    entries.append(_TemplateEntry(path, "file", stat.S_IMODE(info.st_mode),
                                          _times(info)))
                else:
                    return None
        return cls(root, entries)

    def lay(self, target: Path) -> Path:
        """The tree at `target` (must not exist)."""
        os.mkdir(target, 0o700)
        top = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            for entry in self.entries:
                if entry.kind == "dir":
                    if entry.rel:
                        os.mkdir(entry.rel, 0o700, dir_fd=top)
                elif entry.kind == "link":
                    os.symlink(entry.target, entry.rel, dir_fd=top)
                    os.utime(entry.rel, ns=entry.times, dir_fd=top, follow_symlinks=False)
                else:
                    self._lay_file(entry, top)
            for entry in reversed(self.entries):  # a folder's own mode and times, once filled
                if entry.kind == "dir":
                    folder = entry.rel or "."
                    os.chmod(folder, entry.mode, dir_fd=top)
                    os.utime(folder, ns=entry.times, dir_fd=top)
        finally:
            os.close(top)
        return Path(target)

    def _lay_file(self, entry: _TemplateEntry, top: int) -> None:
        fd = os.open(entry.rel, _CREATE, 0o600, dir_fd=top)
        try:
            source = os.open(os.path.join(self.root, entry.rel), _READ)
            try:
                _copy_bytes(source, fd)
            finally:
                os.close(source)
            os.fchmod(fd, entry.mode)
            os.utime(fd, ns=entry.times)
        finally:
            os.close(fd)


def _times(info: os.stat_result) -> tuple[int, int]:
    return info.st_atime_ns, info.st_mtime_ns


def _has_xattrs(path: str) -> bool:
    """Whether copy2 would copy extended attributes (a security label is the system's own)."""
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:  # a file system without them
        return False
    return any(name.startswith(("user.", "trusted.")) for name in names)


def _copy_bytes(source: int, target: int) -> None:
    try:
        while os.sendfile(target, source, None, CHUNK):
            pass
        return
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP) or os.lseek(target, 0, 1):
            raise
    while chunk := os.read(source, CHUNK):  # a file system that sendfile cannot write to
        view = memoryview(chunk)
        while view:
            view = view[os.write(target, view):]
