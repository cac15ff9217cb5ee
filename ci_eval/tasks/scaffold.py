"""Creating a task folder: the next free number and a copy of the template (`ci-eval new-task`).

    number = next_number(root, also_taken=baseline_ids)
    created = create_task(root, "stop-hook-blocks-on-ruff", created=today, log=log_or_None)

The template (ci_eval/tasks/template/) is a task whose parts a person must write hold the
CI-EVAL-PLACEHOLDER marker, which `ci-eval validate` reports until they are replaced:
prompt.md, checks.py, repo-state/CI-EVAL-PLACEHOLDER.md, solution/solve.sh, and metadata.json's
"x-ci-eval-placeholder" key. From a failure log, prompt.md and metadata.json are written from
the log instead (no placeholder) and the other placeholders quote the log's fields. Lines of the
template of the form `PREFIX{{slot}}` take a multi-line value, each line with PREFIX; a slot
inside other text takes the value on one line.

Numbers: one more than the highest used by a folder in tasks/ or archive/ or by a given id
(baseline.json entries, whose folder may be gone), so no number is ever reused.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.output import ensure_dir
from ci_eval.tasks.failure_log import FailureLog, metadata_for, prompt_text, template_values
from ci_eval.tasks.model import (
    METADATA_FILE,
    PLACEHOLDER_KEY,
    TASK_DIR_RE,
    archived_folders,
    holds_placeholder,
    task_number,
    tasks_dir,
)

NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_SLOT_LINE = re.compile(r"^(?P<prefix>.*?)\{\{(?P<slot>[a-z_]+)\}\}\s*$")
_SLOT = re.compile(r"\{\{([a-z_]+)\}\}")


def template_dir() -> Path:
    return Path(__file__).resolve().parent / "template"


@dataclass(frozen=True)
class CreatedTask:
    task: str
    number: int
    path: Path
    placeholders: tuple[Path, ...]  # files a person must still write


def check_name(name: str) -> str:
    """NAME of `new-task NAME`: kebab-case, without the task-NNN- prefix (the number is chosen)."""
    if re.match(r"^task-\d+-", name):
        raise UserError(f"give the name without task-NNN- (the next free number is chosen), "
                        f"e.g. {name.split('-', 2)[2]!r}", field="NAME")
    if not NAME_RE.match(name):
        raise UserError(f"expected a kebab-case name (lowercase letters, digits, single "
                        f"hyphens), got {name!r}", field="NAME")
    return name


def next_number(root: Path, also_taken: Iterable[str] = ()) -> int:
    """One more than every number taken (see the module docstring); 1 for an empty repo."""
    taken = [task_number(p) for p in archived_folders(root)]
    base = tasks_dir(root)
    if base.is_dir():
        taken += [task_number(p) for p in base.iterdir() if TASK_DIR_RE.match(p.name)]
    taken += [task_number(Path(t)) for t in also_taken if TASK_DIR_RE.match(t)]
    return max(taken, default=0) + 1


def fill(text: str, values: dict[str, str]) -> str:
    """Put values into the template's {{slots}} (see the module docstring)."""
    out = []
    for line in text.splitlines(keepends=True):
        whole = _SLOT_LINE.match(line.rstrip("\n"))
        if whole and whole.group("slot") in values:
            prefix = whole.group("prefix")
            lines = values[whole.group("slot")].strip().splitlines() or [""]
            out += [(prefix + part).rstrip() + "\n" for part in lines]
        else:
            out.append(_SLOT.sub(lambda m: " ".join(values.get(m.group(1), m.group(0)).split()),
                                 line))
    return "".join(out)


def create_task(root: Path, name: str, *, created: dt.date, log: FailureLog | None = None,
                source: str | None = None, also_taken: Iterable[str] = ()) -> CreatedTask:
    """Write tasks/task-NNN-NAME from the template (and the log). Built in a hidden folder of
    tasks/ and renamed into place, so a failure leaves no half-written task."""
    check_name(name)
    base = ensure_dir(tasks_dir(root), field="tasks/")
    number = next_number(root, also_taken)
    task_id = f"task-{number:03d}-{name}"
    target = base / task_id
    values = {**template_values(log), "task_id": task_id, "created": created.isoformat()}
    staging = base / f".new-task-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        shutil.copytree(template_dir(), staging, ignore=shutil.ignore_patterns("__pycache__"))
        for file in sorted(p for p in staging.rglob("*") if p.is_file()):
            if file.name == METADATA_FILE and file.parent == staging:
                continue
            file.write_text(fill(file.read_text(encoding="utf-8"), values), encoding="utf-8")
        metadata = json.loads((staging / METADATA_FILE).read_text(encoding="utf-8"))
        metadata["created"] = created.isoformat()
        if log is not None:
            metadata = metadata_for(log, created=created, source=source or str(log.path),
                                    difficulty=metadata["difficulty"])
            (staging / "prompt.md").write_text(prompt_text(log), encoding="utf-8")
        (staging / METADATA_FILE).write_text(json.dumps(metadata, indent=2, ensure_ascii=False)
                                             + "\n", encoding="utf-8")
        if target.exists():
            raise UserError("already exists", path=target)
        os.rename(staging, target)
    except OSError as exc:
        raise UserError(f"cannot create the task ({exc.strerror or exc})", path=target) from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    placeholders = [p for p in sorted(target.rglob("*")) if holds_placeholder(p)]
    if PLACEHOLDER_KEY in metadata:
        placeholders.append(target / METADATA_FILE)
    return CreatedTask(task_id, number, target, tuple(placeholders))
