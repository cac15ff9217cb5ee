"""Failure logs: one JSON file per observed agent failure (schema: `ci-eval schema failure-log`),
in the folder `failure_logs:` of ci-eval.yaml names (default .ci-eval/failure-logs/).

    log = read_failure_log(path)                 # validated; UserError naming file and field
    logs = list_failure_logs(folder)             # every *.json in the folder, validated, by name
    turned = turned_logs(root)                   # source key -> task that was made from it
    prompt_text(log), metadata_for(log, ...)     # what a new task is prefilled with (pure)

A task made from a log records it in its metadata as "x-failure-log": the log's path relative
to the repo root (POSIX separators), or its absolute path when it lies outside the root. That is
how `ci-eval new-task --list-logs` knows which logs are not yet tasks (tasks/ and archive/ both
count); moving a log file makes it look new again.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from ci_eval import strict_json
from ci_eval.errors import UserError
from ci_eval.tasks import schema
from ci_eval.tasks.model import METADATA_FILE, archived_folders, tasks_dir

SCHEMA_NAME = "failure-log"
SOURCE_KEY = "x-failure-log"
OBSERVED_KEY = "x-failure-observed-at"
MAX_LOG_BYTES = 1024 * 1024
FIELDS = ("observed_at", "task_description", "agent_output", "expected_behavior",
          "repo_state_description", "affected_area", "tags")


@dataclass(frozen=True)
class FailureLog:
    path: Path
    observed_at: str
    task_description: str
    agent_output: str
    expected_behavior: str
    repo_state_description: str
    affected_area: str
    tags: tuple[str, ...]

    def to_json(self) -> dict:
        return {name: list(self.tags) if name == "tags" else getattr(self, name)
                for name in FIELDS}


def read_failure_log(path: Path) -> FailureLog:
    """One failure log: a regular file (links not followed), at most 1 MiB, strict JSON,
    valid against the schema, observed_at a real date/time."""
    path = Path(path)
    data = strict_json.load_file(path, cap=MAX_LOG_BYTES, what="a failure log *.json",
                                 field="--from-failure-log")
    schema.validate_instance(data, SCHEMA_NAME, path=path)
    try:
        dt.datetime.fromisoformat(data["observed_at"].replace("Z", "+00:00"))
    except ValueError:
        raise UserError(f"expected an ISO 8601 timestamp or date, got {data['observed_at']!r}",
                        path=path, field="$.observed_at") from None
    return FailureLog(path=path, tags=tuple(data["tags"]),
                      **{name: data[name] for name in FIELDS if name != "tags"})


def list_failure_logs(folder: Path) -> list[FailureLog]:
    """Every *.json file of the folder (hidden ones aside), validated, sorted by name; [] when
    the folder does not exist. Other files are left alone (the folder is people's)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UserError("is not a folder (expected the failure logs folder)", path=folder,
                        field="failure_logs")
    if not folder.is_dir():
        return []
    return [read_failure_log(p) for p in sorted(folder.iterdir())
            if p.suffix == ".json" and not p.name.startswith(".")]


def source_key(root: Path, log_path: Path) -> str:
    """What "x-failure-log" records for a log (see the module docstring)."""
    resolved = Path(os.path.abspath(log_path))
    base = Path(os.path.abspath(root))
    try:
        return resolved.relative_to(base).as_posix()
    except ValueError:
        return resolved.as_posix()


def turned_logs(root: Path) -> dict[str, str]:
    """source key -> the task (in tasks/ or archive/) whose metadata names it. Metadata that
    does not parse is passed over here (`ci-eval validate` reports it)."""
    found: dict[str, str] = {}
    folders = archived_folders(root)
    if tasks_dir(root).is_dir():
        folders += sorted(p for p in tasks_dir(root).iterdir() if p.is_dir())
    for folder in folders:
        try:
            metadata = strict_json.loads((folder / METADATA_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(metadata, dict) and isinstance(metadata.get(SOURCE_KEY), str):
            found.setdefault(metadata[SOURCE_KEY], folder.name)
    return found


# --- what a task made from a log starts with (pure) ---------------------------------------------


def prompt_text(log: FailureLog) -> str:
    """prompt.md: what the agent was asked, then what a correct result does."""
    return f"{log.task_description.strip()}\n\n{log.expected_behavior.strip()}\n"


def metadata_for(log: FailureLog, *, created: dt.date, source: str,
                 difficulty: int = 3) -> dict:
    return {
        "difficulty": difficulty,
        "area": log.affected_area,
        "tags": list(log.tags),
        "created": created.isoformat(),
        SOURCE_KEY: source,
        OBSERVED_KEY: log.observed_at,
    }


def template_values(log: FailureLog | None) -> dict[str, str]:
    """The {{slots}} of the template's placeholders, from the log or generic words."""
    if log is None:
        return {"expected_behavior": "(what a correct result does)",
                "agent_output": "(the failure this task captures)",
                "repo_state_description": "(the minimal repository state that reproduces it)"}
    return {"expected_behavior": log.expected_behavior, "agent_output": log.agent_output,
            "repo_state_description": log.repo_state_description}
