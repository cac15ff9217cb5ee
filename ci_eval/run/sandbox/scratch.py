"""ci-eval's folders in the temp folder: `ci-eval-KIND-PID-PIDNS-XXXXXXXX`, named after the
process that made them, so that what a killed invocation left behind is removed by the next one.

Every such folder costs every later sandbox a mount (views.paths_to_hide covers each `ci-eval-*`
folder: another invocation's runs are not an agent's to read) and its disk space, so left ones
matter: 40 of them made each agent sandbox start 45% dearer here (docs/perf-round3.md). A folder
is stale when its process is gone: its PID names no live process, counted in the same PID
namespace (PIDNS, the inode of /proc/self/ns/pid: a container sharing the temp folder counts
its PIDs apart, so its live folders are not taken for dead ones). A folder holding KEPT (`run
--keep`), one owned by another user, a link, or a name of another form is left alone. A reused
PID keeps a dead folder until that process ends too: the safe side.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

PREFIX = "ci-eval-"
KEPT_MARKER = "KEPT"  # a runs folder kept with --keep: the next invocation leaves it alone
# KIND is lower-case words joined by "-"; the PID namespace is absent in an older name (a runs
# folder before it was added): then the PID alone decides, as it did.
_NAME = re.compile(r"ci-eval-[a-z]+(?:-[a-z]+)*-(?P<pid>\d+)-(?:(?P<ns>\d+)-)?[a-z0-9_]+")
_swept = False


def make(kind: str, *, keep: bool = False) -> Path:
    """A new folder of this process (resolved); the first one a process makes first removes
    the stale ones. keep: marked KEPT (its owner removes it)."""
    global _swept
    if not _swept:
        _swept = True
        remove_stale()
    base = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{os.getpid()}-{_pid_namespace()}-"))
    if keep:
        (base / KEPT_MARKER).write_text("kept by ci-eval run --keep; remove when done\n")
    return base.resolve()


def remove_stale() -> None:
    """Remove the folders whose process is gone (see the module docstring)."""
    temp = Path(tempfile.gettempdir())
    ours, uid = _pid_namespace(), os.geteuid()
    try:
        with os.scandir(temp) as entries:
            found = [entry for entry in entries if entry.name.startswith(PREFIX)]
    except OSError:
        return
    for entry in found:
        match = _NAME.fullmatch(entry.name)
        if match is None or (match["ns"] is not None and int(match["ns"]) != ours):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if (not entry.is_dir(follow_symlinks=False) or info.st_uid != uid
                or _process_exists(int(match["pid"]))
                or os.path.lexists(os.path.join(entry.path, KEPT_MARKER))):
            continue
        remove_tree(Path(entry.path))


def remove_tree(path: Path) -> None:
    """Remove a folder that an agent may have written, links not followed, however deep: before
    Python 3.12 shutil.rmtree recurses once per level, and 3000 nested folders are a
    RecursionError (that would end the invocation, and every later one removing the folder)."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        _remove_deep(Path(path))


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _remove_deep(top: Path) -> None:
    """Depth first, one open folder at a time (up through ".."): no recursion, no descriptor
    per level. What cannot be removed is left, and not tried again."""
    try:
        fd = os.open(top, _DIR_FLAGS)
    except OSError:
        return
    names: list[str] = []  # the way down from top
    stuck: set[tuple[int, int]] = set()
    try:
        while True:
            child = None
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        if not entry.is_dir(follow_symlinks=False):
                            try:
                                os.unlink(entry.name, dir_fd=fd)
                            except OSError:
                                pass
                        elif (entry.inode(), os.fstat(fd).st_dev) not in stuck:
                            child = entry.name
                            break
            except OSError:
                pass
            if child is not None:
                try:
                    inner = os.open(child, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    stuck.add((_inode(fd, child), os.fstat(fd).st_dev))
                    continue
                os.close(fd)
                fd = inner
                names.append(child)
                continue
            if not names:
                break
            here = os.fstat(fd)
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                stuck.add((here.st_ino, here.st_dev))
    finally:
        os.close(fd)
    try:
        os.rmdir(top)
    except OSError:
        pass


def _inode(dir_fd: int, name: str) -> int:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino
    except OSError:
        return -1


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
