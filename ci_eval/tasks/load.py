"""Loading tasks strictly: the path every command that runs tasks takes.

`load_tasks(root, selected)` raises UserError (one line, exit 2) for the first problem that would
make a run meaningless: a folder name that is not `task-NNN-kebab-name`, two folders sharing NNN
(or one sharing it with an archived task in archive/), a missing or empty prompt.md, a missing
checks.py, a missing metadata.json, invalid JSON or a schema violation in it. `ci_eval.tasks.problems.validate_tasks` applies the same rules but
collects every problem instead of stopping at the first.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from ci_eval.tasks.layout_problems import name_problems, naming_problems
from ci_eval.tasks.metadata_problems import loaded_metadata
from ci_eval.tasks.model import (
    Task,
    archived_folders,
    select_tasks,
    stub,
    task_folders,
    task_number,
    tasks_dir,
)


def load_tasks(root: Path, selected: list[str] | None = None) -> list[Task]:
    """All tasks under root/tasks (sorted by number), or only `selected` (ids or NNN numbers).

    Folder names and numbers are checked for all folders; prompt.md, checks.py and metadata.json
    only for the tasks loaded. Raises UserError for the first problem."""
    folders = task_folders(root)
    for problem in naming_problems(folders, archived_folders(root)):
        raise problem.error()
    stubs = [stub(folder) for folder in folders]
    stubs.sort(key=lambda t: t.number)
    if selected:
        stubs = select_tasks(stubs, selected, tasks_dir(root))
    return [load_task(found.path) for found in stubs]


def load_task(path: Path) -> Task:
    """One task folder, checked strictly (see module docstring); UserError on the first problem."""
    path = Path(path)
    problems = name_problems(path)
    if not problems:
        metadata, problems = loaded_metadata(path)
    if problems:
        raise problems[0].error()
    # without a problem, loaded_metadata read a JSON object
    return Task(id=path.name, number=task_number(path), path=path,
                metadata=cast(dict, metadata))
