"""What the import system would load in place of a Python source file, where the agent could write.

DESIGN.md, "Trust model": nothing the test runner or interpreter loads may come from a place the
agent could write unless it is the code under test itself (docs/isolation.md, "What the checks
see").

A file the checks put back (`restore=`, hidden tests) is not what runs if a cached or preferred
copy of it sits beside it: CPython loads `__pycache__/<name>.<tag>.pyc` when its header matches
the source (mtime and size, or the source's hash, or never checked at all: an "unchecked-hash"
pyc), pytest loads its rewritten `__pycache__/<name>.<tag>-pytest-<version>.pyc` when the source
hash matches, and a package folder `<name>/` or an extension module `<name>.<abi>.so` wins over
`<name>.py` in the same folder. The agent knows every header field of a file whose pristine copy
was in its workspace. So:
- `shadows_of(path)` names what would be loaded instead of `path` (its caches, a package folder
  and extension modules of the same name), for the checks to remove when they restore it;
- `ignore_bytecode(root)`, in the checks' pytest process, makes every module below `root` (the
  workspace) and every module outside the interpreter's own installation load from its source:
  no bytecode read, none written, no bytecode-only module imported. Modules of the interpreter
  and its site-packages (read-only in the checks' sandbox) keep their caches, so a session pays
  only for compiling the workspace's own files.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from importlib import machinery
from pathlib import Path

CACHE_FOLDER = "__pycache__"


def shadows_of(path: Path) -> list[Path]:
    """What the source file `path` (NAME.py, in the workspace) could be shadowed by: its
    bytecode caches in its folder's __pycache__ (CPython's and pytest's, of any version), a
    package folder NAME/ (one holding an __init__) and extension modules NAME<suffix>. Only what exists (links included)
    is listed; a __pycache__ that is a link is listed itself."""
    if not path.name.endswith(".py"):
        return []
    stem = path.name[:-3]
    found = []
    cache = path.parent / CACHE_FOLDER
    if cache.is_symlink():
        found.append(cache)
    elif cache.is_dir():
        try:
            entries = list(cache.iterdir())
        except OSError:  # not listable, yet a pyc in it can be opened by name
            found.append(cache)
        else:
            found += sorted(entry for entry in entries if entry.name.startswith(stem + ".")
                            and entry.name.endswith((".pyc", ".pyo")))
    package = path.parent / stem
    if package.is_symlink() or (package.is_dir() and _is_package(package)):
        found.append(package)
    extensions = (path.parent / (stem + suffix) for suffix in machinery.EXTENSION_SUFFIXES)
    found += [candidate for candidate in extensions if candidate.exists() or candidate.is_symlink()]
    return found


def remove(path: Path) -> None:
    """Remove a file, a link or a whole folder of the agent's, whatever modes it gave them
    (links are removed, never followed)."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
        return
    path.chmod(0o700)
    for entry in list(path.iterdir()):
        remove(entry)
    path.rmdir()


def _is_package(folder: Path) -> bool:
    """A folder holding an __init__ (a regular package, which wins over a module); one that
    cannot be listed counts as one (the import system may still open its __init__.py)."""
    try:
        return any(entry.name.startswith("__init__.") for entry in folder.iterdir())
    except OSError:
        return True


def _inside(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
               for folder in folders)


def _installation() -> tuple[str, ...]:
    """The interpreter's own folders: standard library and site-packages."""
    return tuple(sorted({os.path.realpath(prefix) for prefix in (
        sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}))


def ignore_bytecode(root: str) -> Callable[[str], bool]:
    """From now on in this process, a module below `root`, or anywhere outside the interpreter's
    installation, is compiled from its source: SourceFileLoader reads no cached bytecode for it
    (and writes none), and a bytecode-only module there is not imported. Returns the test of a
    path for "below root or outside the installation" (for pytest's own cache)."""
    root = os.path.realpath(root)
    trusted = _installation()
    if _inside(root, trusted):
        trusted = ()  # a workspace inside the installation: nothing there is trusted

    def untrusted(path: str) -> bool:
        real = os.path.realpath(path)
        return _inside(real, (root,)) or not _inside(real, trusted)

    source_stats = machinery.SourceFileLoader.path_stats

    def path_stats(self, path):
        if untrusted(path):
            # get_code reads a cached pyc only after path_stats succeeded: without it, the module
            # is compiled from `path` and no pyc is written
            raise OSError(f"ci-eval: bytecode ignored for {path}")
        return source_stats(self, path)

    bytecode_code = machinery.SourcelessFileLoader.get_code

    def get_code(self, fullname):
        if untrusted(self.path):
            raise ImportError(f"ci-eval: bytecode without its source is not imported: {self.path}",
                              name=fullname, path=self.path)
        return bytecode_code(self, fullname)

    setattr(machinery.SourceFileLoader, "path_stats", path_stats)  # noqa: B010 - a patch
    setattr(machinery.SourcelessFileLoader, "get_code", get_code)  # noqa: B010
    return untrusted
