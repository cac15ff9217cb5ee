"""Applying a GC plan and restoring archived tasks: the file I/O around verdict/gc.py.

    result = apply_archive(root, plan)              # archive the plan's candidates
    result = restore_task(root, "task-003", today)  # bring one back

Archiving a task moves tasks/task-NNN-name to archive/task-NNN-name (a rename: same file system,
the folder is untouched), drops its baseline.json entry and appends
`YYYY-MM-DD — Archived task-NNN-name (10/10 pass, N months D days old)` to archive/ARCHIVE-LOG.md.
Restoring moves it back and appends `YYYY-MM-DD — Restored task-NNN-name (...)`; the baseline
entry is not brought back (it was recorded against an older agent): re-record it.

All or nothing, as far as a file system allows: everything is checked first (every source folder
exists, no target exists, archive/ and the log are what they should be, baseline.json parses),
the new baseline and log are prepared in memory, then the folders are renamed, then baseline.json
and the log are written atomically. A failure at any step undoes the steps before it (folders
renamed back, baseline.json rewritten with its old bytes), so no task is left half-moved.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.output import write_atomic
from ci_eval.tasks.model import (
    archive_dir,
    archived_folders,
    task_folders,
    task_number,
    tasks_dir,
)
from ci_eval.verdict.baseline import dumps_baseline, load_baseline
from ci_eval.verdict.gc import GcPlan, archive_log_line, restore_log_line

ARCHIVE_LOG = "ARCHIVE-LOG.md"
LOG_HEADER = (
    "# Archived tasks\n\n"
    "Tasks that entropy GC (`ci-eval gc`) archived because they stopped carrying signal, and the\n"
    "ones brought back. Restore one with `ci-eval restore task-NNN`; archived numbers are never\n"
    "reused. See docs/lifecycle.md.\n\n"
)


@dataclass(frozen=True)
class ArchiveResult:
    archived: tuple[str, ...]
    dropped_baseline_entries: tuple[str, ...]
    log_lines: tuple[str, ...]
    log_path: Path


@dataclass(frozen=True)
class RestoreResult:
    task: str
    path: Path
    log_line: str
    log_path: Path
    baseline_entry_present: bool  # an entry under that id exists (e.g. added by hand)


def archive_log_path(root: Path) -> Path:
    return archive_dir(root) / ARCHIVE_LOG


def planned_moves(root: Path, candidates, base: Path, archive: Path) -> list[tuple[Path, Path]]:
    """(task folder, its place in the archive) for every candidate; UserError when a folder is
    gone, its place taken, or its number taken by an archived task."""
    moves = []
    taken = {task_number(f): f for f in archived_folders(root)}
    for evaluation in candidates:
        source, target = base / evaluation.task, archive / evaluation.task
        if source.is_symlink() or not source.is_dir():
            raise UserError("task folder not found (the plan is stale: rerun gc)", path=source)
        if target.exists() or target.is_symlink():
            raise UserError("already exists: an archived task of the same name", path=target)
        other = taken.get(task_number(source))
        if other is not None:
            raise UserError(f"number {task_number(source):03d} is already taken by {other}",
                            path=source)
        moves.append((source, target))
    return moves


def apply_archive(root: Path, plan: GcPlan, *, baseline_file: Path | None = None) -> ArchiveResult:
    """Archive every candidate of `plan` (nothing when it has none). UserError, with nothing
    changed, when a check fails; see the module docstring."""
    root = Path(root)
    log_path = archive_log_path(root)
    candidates = plan.candidates
    if not candidates:
        return ArchiveResult((), (), (), log_path)
    if plan.missing:  # a plan with missing runs has no candidates; this guards hand-made ones
        raise UserError(f"{plan.missing} recorded run(s) missing: nothing can be archived")
    base, archive = tasks_dir(root), archive_dir(root)
    if archive.exists() and (archive.is_symlink() or not archive.is_dir()):
        raise UserError("is not a folder (expected the archive of tasks)", path=archive)
    moves = planned_moves(root, candidates, base, archive)
    old_log = _read_log(log_path)
    lines = tuple(archive_log_line(plan.today, e) for e in candidates)
    new_log = _appended(old_log, lines)

    baseline_path = Path(baseline_file) if baseline_file else root / "baseline.json"
    old_baseline_text = new_baseline_text = None
    dropped: tuple[str, ...] = ()
    if baseline_path.exists():
        baseline = load_baseline(baseline_path)
        dropped = tuple(sorted(e.task for e in candidates if e.task in baseline.entries))
        if dropped:
            old_baseline_text = baseline_path.read_bytes().decode("utf-8")
            new_baseline_text = dumps_baseline(baseline.without(dropped))

    created_archive = not archive.exists()
    done: list[tuple[Path, Path]] = []
    try:
        if created_archive:
            archive.mkdir()
        for source, target in moves:
            os.rename(source, target)
            done.append((source, target))
        if new_baseline_text is not None:
            write_atomic(baseline_path, new_baseline_text, field="--baseline")
        try:
            write_atomic(log_path, new_log, field=None)
        except BaseException:
            if old_baseline_text is not None:
                write_atomic(baseline_path, old_baseline_text, field="--baseline")
            raise
    except BaseException as exc:
        for source, target in reversed(done):
            os.rename(target, source)
        if created_archive and archive.is_dir() and not any(archive.iterdir()):
            archive.rmdir()
        if isinstance(exc, OSError):
            raise UserError(f"cannot archive ({exc.strerror or exc}); nothing was changed",
                            path=exc.filename or archive) from None
        raise
    return ArchiveResult(tuple(e.task for e in candidates), dropped, lines, log_path)


def find_archived(root: Path, key: str) -> Path:
    """The archived folder named by `key`: task-NNN-name, task-NNN, NNN or N."""
    name = str(key).rstrip("/").split("/")[-1]
    folders = archived_folders(root)
    for folder in folders:
        number = task_number(folder)
        keys = {folder.name, f"task-{number:03d}", f"{number:03d}", str(number)}
        if name in keys or (name.isdigit() and int(name) == number):
            return folder
    known = ", ".join(f.name for f in folders) or "none"
    raise UserError(f"no archived task {key!r} (archived: {known})", path=archive_dir(root),
                    field="TASK")


def restore_task(root: Path, key: str, today: dt.date, *,
                 baseline_file: Path | None = None) -> RestoreResult:
    """Move an archived task back to tasks/ and log it; UserError with nothing changed when the
    task is not archived, or tasks/ already holds its number."""
    root = Path(root)
    source = find_archived(root, key)
    target = tasks_dir(root) / source.name
    number = task_number(source)
    for folder in task_folders(root):
        if folder.name == source.name or task_number(folder) == number:
            raise UserError(f"tasks/ already holds number {number:03d} ({folder}); archived "
                            "numbers are never reused", path=source)
    log_path = archive_log_path(root)
    line = restore_log_line(today, source.name)
    new_log = _appended(_read_log(log_path), (line,))
    baseline_path = Path(baseline_file) if baseline_file else root / "baseline.json"
    present = baseline_path.is_file() and source.name in load_baseline(baseline_path).entries
    try:
        os.rename(source, target)
    except OSError as exc:
        raise UserError(f"cannot restore ({exc.strerror or exc}); nothing was changed",
                        path=source) from None
    try:
        write_atomic(log_path, new_log, field=None)
    except BaseException:
        os.rename(target, source)
        raise
    return RestoreResult(source.name, target, line, log_path, present)


def _read_log(path: Path) -> str:
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise UserError("is not a file (expected the archive log)", path=path)
    if not path.exists():
        return ""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start})", path=path) from None


def _appended(text: str, lines: tuple[str, ...]) -> str:
    if not text:
        text = LOG_HEADER
    elif not text.endswith("\n"):
        text += "\n"
    return text + "".join(line + "\n" for line in lines)


MAX_LOG_SHOWN = 1024 * 1024  # bytes of ARCHIVE-LOG.md read for the dashboard


def archived_tasks(root: Path) -> list[dict]:
    """The archived task folders under archive/ (sorted), each with the archive log's lines that
    name it ({"task", "log"}): what the dashboard lists. The log is read capped, never followed
    through a link; a log that is not UTF-8 text is left out, not guessed."""
    log = archive_log_path(root)
    text = ""
    if log.is_file() and not log.is_symlink():
        with open(log, "rb") as handle:
            text = handle.read(MAX_LOG_SHOWN).decode("utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    found = []
    for folder in archived_folders(root):
        named = [line for line in lines if folder.name in line]
        found.append({"task": folder.name, "log": " / ".join(named[-3:])})
    return found
