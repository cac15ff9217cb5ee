"""The importer interface and the one writer every importer's tasks go through.

An importer is a module with NAME, SUMMARY and `convert(src: Path, *, today: date) ->
Conversion`: it reads a foreign source (never writing) and returns native tasks as in-memory
file trees, the source tasks it skipped with the reason, and warnings. A source it cannot read
(bad JSON or YAML, a missing field, a symlink) is a UserError naming the file and the field:
nothing is written.

`write_tasks` gives the tasks the next free numbers (archived numbers and the ids passed in
`also_taken`, e.g. baseline.json's, count: ci_eval/tasks/scaffold.next_number), builds them in a
hidden staging folder of tasks/, lets `check` inspect every staged folder (raising UserError to
stop), and only then renames them into place: a bad source or a failing check leaves tasks/ as
it was.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval.errors import UserError
from ci_eval.output import ensure_dir, read_user_file
from ci_eval.tasks.model import (
    METADATA_FILE,
    PLACEHOLDER_MARKER,
    TASK_DIR_RE,
    archived_folders,
    tasks_dir,
)
from ci_eval.tasks.scaffold import next_number

MAX_SOURCE_BYTES = 32 * 1024 * 1024  # read from one source task at most
IMPORTED_KEY = "x-imported-from"  # metadata.json: {"format", "id", "source"}
SOLUTION_PLACEHOLDER = (
    "#!/usr/bin/env bash\n"
    f"# {PLACEHOLDER_MARKER}: the source task has no known-good output. Write one (this solve.sh,\n"
    "# run with cwd = the workspace, or a fix.patch) that makes checks.py pass, then delete\n"
    "# this file's placeholder lines; `ci-eval validate` reports the task until then.\n"
    "exit 1\n"
)


@dataclass
class ImportedTask:
    source_id: str  # the task's id in the source format
    name: str  # kebab-case: the folder becomes task-NNN-<name>
    files: dict[str, bytes]  # path inside the task folder -> content
    executable: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)  # what a person must still write


@dataclass(frozen=True)
class Skipped:
    source_id: str
    reason: str


@dataclass
class Conversion:
    tasks: list[ImportedTask] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # about the whole source


@dataclass(frozen=True)
class WrittenTask:
    task: ImportedTask
    task_id: str
    path: Path


DIFFICULTY = {"trivial": 1, "easy": 2, "medium": 3, "hard": 4, "expert": 5}


def difficulty_value(value: Any, path: Path, field: str) -> int:
    """A source's difficulty (a word of DIFFICULTY, any case, or a whole number 1-5) as ci-eval's
    1-5; UserError naming the file and the field otherwise."""
    if isinstance(value, str) and value.lower() in DIFFICULTY:
        value = DIFFICULTY[value.lower()]
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        raise UserError(f"expected one of {', '.join(DIFFICULTY)} or a whole number 1-5",
                        path=path, field=field)
    return value


def marked_folders(src: Path, marker: str, what: str, *, also_under: str | None = None) -> list[Path]:
    """SRC itself when it holds `marker`, else its folders that do (sorted), else those of
    SRC/also_under; UserError naming SRC when there are none."""
    if not src.is_dir():
        raise UserError(f"no such folder (expected {what} or a folder of them)", path=src,
                        field="SRC")
    if (src / marker).is_file():
        return [src]
    found = [child for child in sorted(src.iterdir())
             if child.is_dir() and (child / marker).is_file()]
    if not found and also_under and (src / also_under).is_dir():
        return marked_folders(src / also_under, marker, what)
    if not found:
        raise UserError(f"no {marker} found in SRC or its folders", path=src, field="SRC")
    return found


def kebab(text: str) -> str:
    """A source id as the kebab-case name of a task folder ("FizzBuzz_off by 1" ->
    "fizzbuzz-off-by-1"); "imported" when nothing is left."""
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return name[:60].strip("-") or "imported"


def executable_files(folder: Path) -> set[str]:
    """The relative paths of the files under `folder` with an execute bit (links not followed):
    imported as 0755 (setuid, setgid and sticky never are)."""
    return {path.relative_to(folder).as_posix() for path in Path(folder).rglob("*")
            if not path.is_symlink() and path.is_file() and path.lstat().st_mode & 0o111}


def read_tree(folder: Path, *, label: str) -> dict[str, bytes]:
    """Every file under `folder` (relative path -> bytes), sorted; UserError for a link or a
    special file (not imported: it could point anywhere) or more than MAX_SOURCE_BYTES."""
    found: dict[str, bytes] = {}
    total = 0
    for path in sorted(Path(folder).rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            raise UserError("is a symbolic link (not imported: copy the file it points to)",
                            path=path, field=label)
        if path.is_dir():
            continue
        if not path.is_file():
            raise UserError("is not a regular file", path=path, field=label)
        data = read_user_file(path, field=label)
        total += len(data)
        if total > MAX_SOURCE_BYTES:
            raise UserError(f"more than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB to import",
                            path=folder, field=label)
        found[rel] = data
    return found


def file_patch(old: dict[str, bytes], new: dict[str, bytes]) -> str:
    """A git-style patch (applies with `git apply` at the workspace root) turning the files of
    `old` into those of `new` for every path of `new` (a path only in `new` is a new file).
    UserError for a file that is not UTF-8 text."""
    parts = []
    for path in sorted(new):
        before, after = old.get(path), new[path]
        if before == after:
            continue
        try:
            a = before.decode("utf-8") if before is not None else ""
            b = after.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError("is not UTF-8 text (a solution patch can only be made from text "
                            "files)", path=path) from None
        head = f"diff --git a/{path} b/{path}\n"
        if before is None:
            head += "new file mode 100644\n"
        lines = difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                     "/dev/null" if before is None else f"a/{path}", f"b/{path}")
        body = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                       for line in lines)
        parts.append(head + body)
    return "".join(parts)


def metadata_json(data: dict) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def imported_already(root: Path, fmt: str) -> dict[str, str]:
    """source id -> the task (in tasks/ or archive/) already imported from it in format `fmt`."""
    folders = list(archived_folders(root))
    if tasks_dir(root).is_dir():
        folders += [p for p in tasks_dir(root).iterdir() if p.is_dir() and TASK_DIR_RE.match(p.name)]
    found: dict = {}
    for folder in sorted(folders):
        try:
            metadata = json.loads((folder / METADATA_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        origin = metadata.get(IMPORTED_KEY) if isinstance(metadata, dict) else None
        if isinstance(origin, dict) and origin.get("format") == fmt and "id" in origin:
            found.setdefault(str(origin["id"]), folder.name)
    return found


def write_tasks(root: Path, tasks: list[ImportedTask], *, also_taken: Iterable[str] = (),
                check: Callable[[Path], None] | None = None) -> list[WrittenTask]:
    """Write `tasks` as tasks/task-NNN-<name> with the next free numbers (see the module
    docstring); all or nothing."""
    if not tasks:
        return []
    base = ensure_dir(tasks_dir(root), field="--into")
    first = next_number(root, also_taken)
    staging = base / f".import-{os.getpid()}-{secrets.token_hex(4)}"
    written = []
    try:
        staging.mkdir()
        for offset, task in enumerate(tasks):
            task_id = f"task-{first + offset:03d}-{task.name}"
            folder = staging / task_id
            for rel, data in sorted(task.files.items()):
                target = folder / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                if rel in task.executable:
                    target.chmod(0o755)
            written.append(WrittenTask(task, task_id, folder))
        if check is not None:
            for item in written:
                check(item.path)
        for item in written:
            if (base / item.task_id).exists():
                raise UserError("already exists", path=base / item.task_id)
        placed: list[WrittenTask] = []
        try:
            for item in written:
                os.rename(item.path, base / item.task_id)
                placed.append(WrittenTask(item.task, item.task_id, base / item.task_id))
        except BaseException:
            for item in placed:  # all or nothing
                shutil.rmtree(item.path, ignore_errors=True)
            raise
        return placed
    except OSError as exc:
        raise UserError(f"cannot write the imported tasks ({exc.strerror or exc})",
                        path=base) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
