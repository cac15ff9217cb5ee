"""Unpacking a tar whose names come from elsewhere (an upstream commit, a container's folder):
only what a workspace may hold, on every Python ci-eval supports. tarfile's `filter="data"`
exists from 3.11.4 and 3.10.12 on; older interpreters (Debian 12's python3 is 3.11.2) refuse the
argument, so the screening is done here and the same on all of them."""

from __future__ import annotations

import os
import tarfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

# The members are screened already: tarfile's own filter (where it exists) is told so, which
# also keeps 3.12+ from warning and 3.14+ from applying "data" (it would clear mode bits).
_SCREENED = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}


def _escapes(name: str) -> bool:
    return name.startswith("/") or ".." in PurePosixPath(name).parts


def plain_members(archive: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """Folders, regular files and symbolic links that stay inside (no device, fifo or hard
    link, no absolute or `..` name or link target). Permission bits are kept, setuid, setgid
    and sticky are not (unpacked as root, a setuid file would be root's); owners become this
    process's own."""
    for member in archive.getmembers():
        if _escapes(member.name) or (member.issym() and _escapes(member.linkname)):
            continue
        if member.isdir() or member.isfile() or member.issym():
            member.mode &= 0o777
            member.uid, member.gid = os.getuid(), os.getgid()
            member.uname = member.gname = ""
            yield member


def extract_plain(archive: tarfile.TarFile, target: Path) -> None:
    """Unpack the plain members of `archive` into `target`."""
    archive.extractall(target, members=plain_members(archive), **_SCREENED)
