"""The agent's harness in a run (agents/harness.py collects it): laid into the workspace and the
run's own HOME before the agent starts, a read-only copy beside the run for the agent's own code
(CI_EVAL_HARNESS_DIR), and taken back out of the workspace after the agent, before the diff and
the checks: harness files are input, never the agent's work. What the agent changed of them
(modified, removed, replaced by a link or a folder) is discarded and named in the run's reason.

Taking back walks what the agent left without following a link: each folder on the way is
opened with O_NOFOLLOW from its parent's descriptor, so a folder the agent swapped for a link
is removed as the link, never followed out of the workspace.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ci_eval.agents.harness import HOME, WORKSPACE, Harness, HarnessFile, file_digest
from ci_eval.run.workspace.build import WorkspaceError, remove_tree

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
HARNESS_DIR_ENV = "CI_EVAL_HARNESS_DIR"


def lay_workspace(harness: Harness, workspace: Path) -> None:
    """The harness's workspace files into `workspace`; a path the workspace already holds (a
    task's setup.sh or upstream tree made it) is an error naming both."""
    for item in harness.placed(WORKSPACE):
        if os.path.lexists(Path(workspace) / item.dest):
            raise WorkspaceError(f"the workspace already holds {item.dest}, a harness file of the "
                                 f"agent ({harness.source}): rename one or leave it out")
    _lay(harness.placed(WORKSPACE), Path(workspace))


def lay_home(harness: Harness, home: Path) -> None:
    """The harness's home entries into the run's own HOME (after the preset's own files: a
    harness file at the same path wins, it is the team's)."""
    for item in harness.placed(HOME):
        target = Path(home) / item.dest
        if os.path.lexists(target) and not os.path.isdir(target):
            os.unlink(target)
    _lay(harness.placed(HOME), Path(home))


def lay_copy(harness: Harness, folder: Path) -> Path:
    """A copy of every harness file at its repo path in `folder`, files read-only: the place
    CI_EVAL_HARNESS_DIR names (an agent's own code runs from there, its siblings beside it)."""
    folder.mkdir(mode=0o755)
    _lay(tuple(HarnessFile(f.key, WORKSPACE, f.key, f.mode, f.link, f.digest, f.size, f.data)
               for f in harness.files), folder, read_only=True)
    return folder


def _lay(files: tuple[HarnessFile, ...], top: Path, *, read_only: bool = False) -> None:
    for item in files:
        target = top / item.dest
        parts = item.dest.split("/")[:-1]
        for depth in range(1, len(parts) + 1):  # a task's tree may hold links: never followed
            if os.path.islink(top.joinpath(*parts[:depth])):
                raise WorkspaceError(f"{'/'.join(parts[:depth])} is a symlink where the harness "
                                     f"lays {item.dest} (not followed)")
        target.parent.mkdir(parents=True, exist_ok=True)
        if item.link is not None:
            os.symlink(item.link, target)
            continue
        mode = item.mode & (0o555 if read_only else 0o777)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(item.data)
        os.chmod(target, mode)  # the umask took bits off


def take_back(harness: Harness, workspace: Path) -> list[str]:
    """Remove the harness's files from `workspace` (and the folders laying them made, when
    empty); return what the agent changed of them ("CLAUDE.md modified"), sorted."""
    changed = []
    folders: set[str] = set()
    for item in harness.placed(WORKSPACE):
        try:
            change = _take(Path(workspace), item)
        except OSError as exc:  # the agent made it unremovable: it stays, in the diff
            change = f"not taken back ({exc.strerror or exc})"
        if change:
            changed.append(f"{item.key} {change}")
        parts = item.dest.split("/")[:-1]
        folders.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    for folder in sorted(folders, key=lambda f: -f.count("/")):
        parts = folder.split("/")
        if any(os.path.islink(Path(workspace, *parts[:depth]))
               for depth in range(1, len(parts) + 1)):
            continue  # never through a link the agent left
        try:
            os.rmdir(Path(workspace) / folder)  # a non-empty folder stays
        except OSError:
            pass
    return sorted(changed)


def _take(workspace: Path, item: HarnessFile) -> str:
    """Remove one harness file; what the agent did to it ("" when nothing)."""
    parts = item.dest.split("/")
    try:
        fd = os.open(workspace, _DIR)
    except OSError:
        return "unreadable"
    try:
        for index, part in enumerate(parts[:-1]):
            try:
                inner = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ENOENT:
                    return "removed"
                _remove_at(fd, part, workspace / "/".join(parts[:index + 1]))
                return f"replaced ({'/'.join(parts[:index + 1])} is no longer a folder)"
            os.close(fd)
            fd = inner
        return _take_file(fd, parts[-1], item, workspace / item.dest)
    finally:
        os.close(fd)


def _take_file(fd: int, name: str, item: HarnessFile, path: Path) -> str:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return "removed"
    if stat.S_ISLNK(info.st_mode):
        link = os.readlink(name, dir_fd=fd)
        same = item.link == link
        os.unlink(name, dir_fd=fd)
        return "" if same else "replaced by a link" if item.link is None else "link changed"
    if not stat.S_ISREG(info.st_mode):
        _remove_at(fd, name, path)
        return "replaced by a folder" if stat.S_ISDIR(info.st_mode) else "replaced"
    change = "modified"
    if item.link is None and info.st_size == item.size:
        try:
            handle = os.open(name, _FILE, dir_fd=fd)
            with os.fdopen(handle, "rb") as opened:
                data = opened.read(item.size + 1)
            mode = 0o755 if info.st_mode & 0o111 else 0o644
            if file_digest(item.place, item.dest, mode, data) == item.digest:
                change = ""
        except OSError:
            pass
    os.unlink(name, dir_fd=fd)
    return change


def _remove_at(fd: int, name: str, path: Path) -> None:
    """Remove what the agent put at name (a link, a file or a folder, never followed)."""
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        remove_tree(path)
    else:
        os.unlink(name, dir_fd=fd)
