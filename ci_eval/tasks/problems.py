"""Validate task folders against the task rules; every problem names file and field. The
problems: tasks/metadata_problems.py (what loading needs) and tasks/layout_problems.py (names,
numbers, the folder's shape, placeholders), and the checks lint (tasks/lint.py).

Two entry points, same rules:

- `load_tasks(root, selected)` (ci_eval/tasks/load.py) is the strict load path used by every command
  that runs tasks. It raises UserError (one line, exit 2) for the first problem that would make a
  run meaningless: a folder name that is not `task-NNN-kebab-name`, two folders sharing NNN, a
  missing or empty prompt.md, a missing checks.py, a missing metadata.json, invalid JSON or a
  schema violation in it.
- `validate_tasks(root, selected)` (used by `ci-eval validate`) collects every problem of every
  task, adding the completeness checks that do not stop a run: repo-state/ and negatives/ shape,
  solution/ present, and the static lint of checks.py (ci_eval/tasks/lint.py).

Task folder rules (see DESIGN.md "Task anatomy"):
- name `task-NNN-kebab-name`, NNN zero-padded to at least 3 digits, unique across tasks/ and
  not used by an archived task (archive/task-NNN-*: archived numbers are never reused).
  Entries of tasks/ that are files, or whose names start with "." or "_", are ignored.
- prompt.md: required, UTF-8, not blank. checks.py: required.
- metadata.json: required; see ci_eval/tasks/schemas/metadata.schema.json
  (`ci-eval schema metadata`).
  Unknown top-level keys are allowed (teams add their own; an "x-" prefix is recommended), but a
  near-miss of a known key ("dificulty", "Tags", "timeout") is an error: it is almost surely a typo
  that would otherwise silently drop a setting.
- repo-state/: optional. Missing means the agent starts in an empty workspace (still a git repo).
  If present it must be a folder.
- solution/: required folder holding at least one *.patch / *.diff / *.sh file (usually one
  patch or a solve.sh); all of them are applied, sorted by name. None may be empty.
- negatives/: optional; each entry is a non-empty *.patch / *.diff / *.sh file, or a folder of
  them (applied like solution/).
- no placeholder left by `ci-eval new-task`: prompt.md, checks.py, the solution/ entries and the
  files at the top of repo-state/ may not hold the CI-EVAL-PLACEHOLDER marker in their first
  8 KiB (model.holds_placeholder), metadata.json may not hold the "x-ci-eval-placeholder" key.
"""

from __future__ import annotations

from pathlib import Path

from ci_eval.tasks.layout_problems import (
    layout_problems,
    name_problems,
    naming_problems,
    placeholder_problems,
)
from ci_eval.tasks.lint import lint_checks
from ci_eval.tasks.metadata_problems import load_problems
from ci_eval.tasks.model import (
    TASK_DIR_RE,
    Problem,
    Task,
    archived_folders,
    select_tasks,
    stub,
    task_folders,
    task_number,
    tasks_dir,
)


def validate_task(task: Task | Path, *, lint: bool = True) -> list[Problem]:
    """Every problem of one task folder (Task or folder path), in a stable order. [] = valid.

    Reads the folder from disk (a Task's in-memory metadata is not consulted). Does not look at
    sibling folders, so duplicate numbers are found only by validate_tasks()."""
    path = task.path if isinstance(task, Task) else Path(task)
    return _task_problems(path, name_problems(path), lint=lint)


def validate_tasks(
    root: Path, selected: list[str] | None = None, *, lint: bool = True
) -> dict[str, list[Problem]]:
    """Problems per task folder name, for every folder examined ([] = valid), in number order
    with badly named folders last.

    Folder naming and duplicate numbers are checked across all of tasks/; a duplicate is reported
    on the later folder and names both. UserError if tasks/ is missing or a selected task is
    unknown. `selected` matches like select_tasks(), and also exact folder names."""
    folders = task_folders(root)
    naming: dict[str, list[Problem]] = {}
    for problem in naming_problems(folders, archived_folders(root)):
        naming.setdefault(problem.task or "", []).append(problem)
    if selected:
        by_name = {f.name: f for f in folders}
        numbered = [stub(f) for f in folders if TASK_DIR_RE.match(f.name)]
        picked: list[Path] = []
        for key in selected:
            name = str(key).rstrip("/").split("/")[-1]
            if name in by_name:
                folder = by_name[name]
            else:
                folder = select_tasks(numbered, [key], tasks_dir(root))[0].path
            if folder not in picked:
                picked.append(folder)
        folders = picked
    folders = sorted(folders, key=lambda f: (task_number(f) < 0, task_number(f), f.name))
    return {f.name: _task_problems(f, naming.get(f.name, []), lint=lint) for f in folders}


def _task_problems(path: Path, naming: list[Problem], *, lint: bool) -> list[Problem]:
    problems = naming + load_problems(path) + layout_problems(path) + placeholder_problems(path)
    if lint and (path / "checks.py").is_file():
        for finding in lint_checks(path / "checks.py"):
            problems.append(
                Problem(
                    finding.path,
                    finding.message,
                    line=finding.line,
                    task=path.name,
                    rule=finding.rule,
                )
            )
    return problems
