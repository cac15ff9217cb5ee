"""Unpacking a tar whose names come from elsewhere (an upstream commit, a container's folder):
only what a workspace may hold, on every Python ci-eval supports. tarfile's `filter="data"`
exists from 3.11.4 and 3.10.12 on; older interpreters (Debian 12's python3 is 3.11.2) refuse the
argument, so the screening is done here and the same on all of them."""

from __future__ import annotations

import os
import tarfile
from typing import Any
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

# The members are screened already: tarfile's own filter (where it exists) is told so, which
# also keeps 3.12+ from warning and 3.14+ from applying "data" (it would clear mode bits).
_SCREENED: dict[str, Any] = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}


def _escapes(name: str) -> bool:
    return name.startswith("/") or ".." in PurePosixPath(name).parts


def _plain(member: tarfile.TarInfo) -> bool:
    """Whether `member` is kept (see plain_members); a kept one is made plain in place."""
    if _escapes(member.name) or (member.issym() and _escapes(member.linkname)):
        return False
    if member.isdir() or member.isfile() or member.issym():
        member.mode &= 0o777
        member.uid, member.gid = os.getuid(), os.getgid()
        member.uname = member.gname = ""
        return True
    return False


def plain_members(archive: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """Folders, regular files and symbolic links that stay inside (no device, fifo or hard
    link, no absolute or `..` name or link target). Permission bits are kept, setuid, setgid
    and sticky are not (unpacked as root, a setuid file would be root's); owners become this
    process's own."""
    for member in archive.getmembers():
        if _plain(member):
            yield member


def extract_plain(archive: tarfile.TarFile, target: Path) -> None:
    """Unpack the plain members of `archive` into `target`."""
    archive.extractall(target, members=plain_members(archive), **_SCREENED)


def extract_plain_stream(archive: tarfile.TarFile, target: Path) -> None:
    """extract_plain for an archive opened as a stream (mode "r|", nothing held in memory):
    each member screened and unpacked as it arrives; folders stay writable until the end,
    then get their own modes (as extractall does)."""
    folders = []
    for member in archive:
        if not _plain(member):
            continue
        if member.isdir():
            folders.append((member.name, member.mode))
            member.mode |= 0o700
        archive.extract(member, target, **_SCREENED)
    for name, mode in reversed(folders):
        path = Path(target) / name
        if path.is_dir() and not path.is_symlink():
            os.chmod(path, mode)
