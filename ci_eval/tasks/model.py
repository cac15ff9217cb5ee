"""The Task model: one task folder's parts and metadata, a Problem found in one, finding task
folders and selecting tasks.

Loading (`ci_eval.tasks.load`) and the problems validation reports (`ci_eval.tasks.problems`)
build on this module; it imports neither.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.output import read_user_file

TASK_DIR_RE = re.compile(r"^task-(\d{3,})-([a-z0-9]+(?:-[a-z0-9]+)*)$")
DEFAULT_AGENT_TIMEOUT = 600.0
DEFAULT_CHECKS_TIMEOUT = 120.0
# Upper bound of every timeout (task metadata, --timeout): 24 h. metadata.schema.json repeats it.
MAX_TIMEOUT_SECONDS = 86400.0
METADATA_FILE = "metadata.json"
ARCHIVE_DIR = "archive"  # archived tasks, beside tasks/ (see ci_eval/verdict/archive.py)
# What `ci-eval new-task` leaves in the parts a person must write (ci_eval/tasks/template/);
# `ci-eval validate` reports every file holding the marker, and metadata holding the key.
PLACEHOLDER_MARKER = "CI-EVAL-PLACEHOLDER"
PLACEHOLDER_KEY = "x-ci-eval-placeholder"
PLACEHOLDER_SCAN_BYTES = 8192  # placeholders put the marker at the top
PATCH_SUFFIXES = (".patch", ".diff")  # also what ci_eval.run.workspace applies as patches
OUTPUT_SUFFIXES = PATCH_SUFFIXES + (".sh",)  # what solution/ and negatives/ entries may be


@dataclass(frozen=True)
class Task:
    id: str  # folder name, e.g. "task-001-stop-hook-line-length"
    number: int
    path: Path
    metadata: dict = field(default_factory=dict, compare=False)

    @property
    def prompt_path(self) -> Path:
        return self.path / "prompt.md"

    @property
    def checks_path(self) -> Path:
        return self.path / "checks.py"

    @property
    def metadata_path(self) -> Path:
        return self.path / METADATA_FILE

    @property
    def repo_state(self) -> Path:
        return self.path / "repo-state"

    @property
    def solution_dir(self) -> Path:
        return self.path / "solution"

    @property
    def negatives_dir(self) -> Path:
        return self.path / "negatives"

    @property
    def prompt_hash(self) -> str:
        return "sha256:" + hashlib.sha256(read_user_file(self.prompt_path)).hexdigest()

    @property
    def agent_timeout(self) -> float:
        return float(_timeouts(self.metadata).get("agent", DEFAULT_AGENT_TIMEOUT))

    @property
    def checks_timeout(self) -> float:
        return float(_timeouts(self.metadata).get("checks", DEFAULT_CHECKS_TIMEOUT))

    @property
    def requires(self) -> list[str]:
        return list(self.metadata.get("requires", []))

    @property
    def aspirational(self) -> bool:
        return bool(self.metadata.get("aspirational", False))

    @property
    def human_label(self) -> dict | None:
        return self.metadata.get("human_label")

    @property
    def difficulty(self) -> int | None:
        return self.metadata.get("difficulty")

    @property
    def area(self) -> str | None:
        return self.metadata.get("area")

    @property
    def tags(self) -> list[str]:
        return list(self.metadata.get("tags", []))

    @property
    def created(self) -> _dt.date | None:
        """metadata.created as a date (None if absent or unparsable; validation rejects both)."""
        try:
            return _dt.date.fromisoformat(self.metadata["created"])
        except (KeyError, TypeError, ValueError):
            return None

    def negatives(self) -> list[Path]:
        if not self.negatives_dir.is_dir():
            return []
        return sorted(p for p in self.negatives_dir.iterdir() if not p.name.startswith("."))

    def solutions(self) -> list[Path]:
        """solution/*.patch, *.diff, *.sh sorted by name (the order they are applied in)."""
        return solution_entries(self.solution_dir)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a task, printed as `path[:line]: [field: ]message`."""

    path: Path  # the file or folder at fault
    message: str
    field: str | None = None  # JSON path ("$.difficulty") or other locator
    line: int | None = None
    task: str | None = None  # the task folder's name
    rule: str | None = None  # lint rule, for lint findings

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )

    def error(self) -> UserError:
        return UserError(str(self))


def short_hash(prompt_hash: str) -> str:
    """How a prompt hash is shown to people: "sha256:" and its first 12 hex digits."""
    return prompt_hash[: len("sha256:") + 12]


def other_prompts(recorded: Iterable[object], current: str) -> list[str]:
    """The recorded prompt hashes that differ from `current`, sorted: the one rule for "these runs
    (or this baseline) were made with another prompt.md". Values that are not strings are
    ignored (results of older versions recorded none)."""
    return sorted({h for h in recorded if isinstance(h, str) and h != current})


def _timeouts(metadata: dict) -> dict:
    """`timeout_seconds` is either a number (the agent's timeout) or {"agent": n, "checks": n}."""
    value = metadata.get("timeout_seconds", {})
    if isinstance(value, (int, float)):
        return {"agent": value}
    return value


def tasks_dir(root: Path) -> Path:
    return Path(root) / "tasks"


def archive_dir(root: Path) -> Path:
    """root/archive: where entropy GC moves tasks (restorable; their numbers stay taken)."""
    return Path(root) / ARCHIVE_DIR


def archived_folders(root: Path) -> list[Path]:
    """The task folders (named task-NNN-name) under root/archive, sorted; [] without archive/."""
    base = archive_dir(root)
    if not base.is_dir():
        return []
    return sorted(e for e in base.iterdir()
                  if e.is_dir() and not e.is_symlink() and TASK_DIR_RE.match(e.name))


def task_folders(root: Path) -> list[Path]:
    """Candidate task folders under root/tasks, sorted by name (with the files and broken links
    named task-*, which are not folders: problems.naming_problems reports them). UserError if
    tasks/ is missing."""
    base = tasks_dir(root)
    if not Path(root).is_dir():
        raise UserError("repo root does not exist or is not a folder", path=root, field="--root")
    if not base.is_dir():
        raise UserError(f"no tasks/ folder in {Path(root).resolve()} (expected a folder of "
                        "task-NNN-name folders; run from inside the repo or pass --root DIR)",
                        path=base)
    try:
        entries = list(base.iterdir())
    except OSError as exc:
        raise UserError(f"cannot list ({exc.strerror or exc})", path=base) from None
    # A file or a dangling link named like a task is kept, so validation reports it: a task that
    # vanished by a bad copy must not vanish silently.
    return sorted(entry for entry in entries if not entry.name.startswith((".", "_"))
                  and (entry.is_dir() or entry.name.startswith("task-")))


def select_tasks(tasks: list[Task], selected: list[str], base: Path) -> list[Task]:
    """Pick tasks by id ("task-001-x"), "task-001", "001", "1" or a path ending in the folder."""
    by_key: dict[str, Task] = {}
    for known in tasks:
        by_key[known.id] = known
        by_key[f"{known.number:03d}"] = known
        by_key[f"task-{known.number:03d}"] = known
        by_key[str(known.number)] = known
    chosen = []
    for key in selected:
        name = str(key).rstrip("/").split("/")[-1]
        task: Task | None = by_key.get(name)
        if task is None and name.isdigit():
            task = by_key.get(str(int(name)))
        if task is None:
            raise UserError(f"unknown task {key!r} (see `ci-eval list`)", path=base)
        if task not in chosen:
            chosen.append(task)
    return chosen


def task_number(path: Path) -> int:
    match = TASK_DIR_RE.match(path.name)
    return int(match.group(1)) if match else -1


def stub(path: Path) -> Task:
    """A Task for a folder, metadata not read (for naming and selection)."""
    return Task(id=path.name, number=task_number(path), path=path)


def solution_entries(folder: Path) -> list[Path]:
    """The *.patch / *.diff / *.sh files of a folder, sorted by name: the order they apply in."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in OUTPUT_SUFFIXES)


def holds_placeholder(file: Path) -> bool:
    """Whether a task file still holds the `ci-eval new-task` marker near its top (a link or a
    folder never does)."""
    if file.is_symlink() or not file.is_file():
        return False
    try:
        with open(file, "rb") as handle:
            head = handle.read(PLACEHOLDER_SCAN_BYTES)
    except OSError:
        return False
    return PLACEHOLDER_MARKER.encode() in head
