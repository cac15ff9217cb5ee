"""Load tasks/ into Task objects. Validation lives here too; every error names file and field."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.errors import UserError

TASK_DIR_RE = re.compile(r"^task-(\d{3,})-([a-z0-9]+(?:-[a-z0-9]+)*)$")
DEFAULT_AGENT_TIMEOUT = 600.0
DEFAULT_CHECKS_TIMEOUT = 120.0


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
        return "sha256:" + hashlib.sha256(self.prompt_path.read_bytes()).hexdigest()

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

    def negatives(self) -> list[Path]:
        if not self.negatives_dir.is_dir():
            return []
        return sorted(p for p in self.negatives_dir.iterdir() if not p.name.startswith("."))


def _timeouts(metadata: dict) -> dict:
    """`timeout_seconds` is either a number (the agent's timeout) or {"agent": n, "checks": n}."""
    value = metadata.get("timeout_seconds", {})
    if isinstance(value, (int, float)):
        return {"agent": value}
    return value


def tasks_dir(root: Path) -> Path:
    return Path(root) / "tasks"


def load_tasks(root: Path, selected: list[str] | None = None) -> list[Task]:
    """All tasks under root/tasks (sorted by number), or only `selected` (ids or NNN numbers)."""
    base = tasks_dir(root)
    if not base.is_dir():
        raise UserError("no tasks/ folder (expected a folder of task-NNN-name folders)", path=base)
    tasks = []
    for entry in sorted(base.iterdir()):
        if not entry.is_dir() or entry.name.startswith((".", "_")):
            continue
        tasks.append(load_task(entry))
    tasks.sort(key=lambda t: t.number)
    if selected:
        return select_tasks(tasks, selected, base)
    return tasks


def load_task(path: Path) -> Task:
    match = TASK_DIR_RE.match(path.name)
    if not match:
        raise UserError("folder name must look like task-NNN-kebab-name", path=path)
    metadata_path = path / "metadata.json"
    metadata = {}
    if metadata_path.exists():
        try:
            metadata = json.loads(metadata_path.read_text())
        except json.JSONDecodeError as exc:
            raise UserError(f"invalid JSON ({exc.msg} at line {exc.lineno})", path=metadata_path)
    return Task(id=path.name, number=int(match.group(1)), path=path, metadata=metadata)


def select_tasks(tasks: list[Task], selected: list[str], base: Path) -> list[Task]:
    by_key = {}
    for task in tasks:
        by_key[task.id] = task
        by_key[f"{task.number:03d}"] = task
        by_key[f"task-{task.number:03d}"] = task
    chosen = []
    for key in selected:
        task = by_key.get(key.rstrip("/").split("/")[-1])
        if task is None:
            raise UserError(f"unknown task {key!r} (see `ci-eval list`)", path=base)
        if task not in chosen:
            chosen.append(task)
    return chosen
