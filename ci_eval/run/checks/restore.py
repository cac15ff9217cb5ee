"""Putting pristine files into the agent's workspace for the checks (ci_eval.checks'
restore_pristine and add_hidden_tests), and the project's pytest configuration as the pristine
project has it (run_pytest's project_config).

Nothing is written through a link the agent made (a folder on the way that is a symlink is
removed and made again as a real folder), and what Python would load in place of a file put back
goes too (run/checks/bytecode.py: its cached bytecode, a package folder or an extension module of the
same name): restoring a test file is worthless while a forged compiled copy sits beside it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ci_eval.run.checks import bytecode


def restore(rel: str, source_root: Path) -> None:
    """Make the workspace path `rel` (relative to the current folder) what `source_root / rel`
    is: a copy of that file or folder, or nothing when source_root has neither."""
    source = source_root / rel
    target = Path(rel)
    unlink_symlinked_parents(target)
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
    if source.is_dir():
        shutil.copytree(source, target)
    elif source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        remove_shadows(target, source)


def add_file(source: Path, target: Path) -> None:
    """Copy the pristine file `source` to the workspace path `target`."""
    unlink_symlinked_parents(target)
    if target.is_symlink():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    remove_shadows(target, source)


def remove_shadows(target: Path, pristine: Path) -> None:
    """What would load instead of `target`: its bytecode always, a package folder or an
    extension module unless the pristine file has the same beside it."""
    for shadow in bytecode.shadows_of(target):
        twin = pristine.parent / shadow.relative_to(target.parent)
        if bytecode.CACHE_FOLDER in shadow.parts or not twin.exists():
            bytecode.remove(shadow)


def unlink_symlinked_parents(target: Path) -> None:
    """A folder on the way to `target` that the agent replaced by a symlink is removed (its
    pristine content is written back as a real folder), so nothing is written through it."""
    for parent in reversed(target.parents):
        if parent != Path(".") and parent.is_symlink():
            parent.unlink()


PYTEST_CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_INI_SECTIONS = {"pyproject.toml": "[tool.pytest.ini_options]", "tox.ini": "[pytest]",
                 "setup.cfg": "[tool:pytest]"}


def pristine_ini(pristine: Path) -> str:
    """The ini file pytest would pick in the pristine project folder, else os.devnull."""
    for name in PYTEST_CONFIG_FILES:
        candidate = pristine / name
        if not candidate.is_file():
            continue
        section = _INI_SECTIONS.get(name)
        if section is None or section in candidate.read_text(errors="replace"):
            return str(candidate)
    return os.devnull


def conftests_on_the_way(args: list[str]) -> list[str]:
    """conftest.py of the workspace root and of every folder down to each named test file."""
    paths = {"conftest.py"}
    for arg in args:
        if arg.startswith("-"):
            continue
        parts = Path(arg.split("::", 1)[0]).parts
        for depth in range(1, len(parts)):
            paths.add(str(Path(*parts[:depth]) / "conftest.py"))
    return sorted(paths)
