"""Validate task folders against the task rules; every problem names file and field.

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
- metadata.json: required; see ci_eval/schemas/metadata.schema.json (`ci-eval schema metadata`).
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

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ci_eval import strict_json
from ci_eval.errors import UserError
from ci_eval.output import read_user_file
from ci_eval.tasks import schema
from ci_eval.tasks.lint import lint_checks
from ci_eval.tasks.model import (
    METADATA_FILE,
    OUTPUT_SUFFIXES,
    PLACEHOLDER_KEY,
    PLACEHOLDER_MARKER,
    TASK_DIR_RE,
    Task,
    archived_folders,
    holds_placeholder,
    select_tasks,
    solution_entries,
    stub,
    task_folders,
    task_number,
    tasks_dir,
)

PLACEHOLDER_TODO = {
    "prompt.md": "write the prompt the agent receives, without the CI-EVAL-PLACEHOLDER paragraph",
    "checks.py": "write the deterministic checks (exit 0 pass, 1 fail), without the "
                 "CI-EVAL-PLACEHOLDER line",
    "solution": "write a known-good output (solve.sh or fix.patch) instead",
    "repo-state": "replace this file with the files the agent starts from",
}

# Unknown metadata keys that are taken for typos of a known key even though difflib disagrees.
METADATA_KEY_ALIASES = {
    "timeout": "timeout_seconds",
    "timeouts": "timeout_seconds",
    "timeout_secs": "timeout_seconds",
    "timeout_s": "timeout_seconds",
    "require": "requires",
    "required": "requires",
    "requirements": "requires",
    "label": "human_label",
    "labels": "human_label",
    "tag": "tags",
    "level": "difficulty",
    "date": "created",
    "created_at": "created",
    "created_on": "created",
}


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
        naming.setdefault(problem.task, []).append(problem)
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


def metadata_problems(metadata: object, path: Path, *, task: str | None = None) -> list[Problem]:
    """Schema violations and typo'd keys of a parsed metadata.json, one Problem per JSON path."""
    problems = [
        Problem(Path(path), p.message, field=p.json_path, task=task)
        for p in schema.schema_problems(metadata, "metadata")
    ]
    # NaN passes every bound of a JSON schema (all comparisons with it are false).
    bad_number = strict_json.first_non_finite(metadata)
    if bad_number is not None and bad_number[0] not in {p.field for p in problems}:
        where, value = bad_number
        problems.append(
            Problem(Path(path), f"expected a finite number, got {strict_json.show_number(value)}",
                    field=where, task=task)
        )
    if isinstance(metadata, dict):
        known = list(schema.property_names("metadata"))
        for key in metadata:
            guess = _typo_of(str(key), known)
            if guess:
                problems.append(
                    Problem(
                        Path(path),
                        f"unknown key, did you mean {guess!r}? (custom keys are allowed; "
                        "prefix them with 'x-' to avoid this check)",
                        field=schema.json_path([key]),
                        task=task,
                    )
                )
    return problems


def _typo_of(key: str, known: list[str]) -> str | None:
    if key in known or key.startswith(("x-", "x_")):
        return None
    normal = re.sub(r"[\s-]+", "_", key.strip()).lower()
    if normal in known:
        return normal
    if normal in METADATA_KEY_ALIASES:
        return METADATA_KEY_ALIASES[normal]
    close = difflib.get_close_matches(normal, known, n=1, cutoff=0.8)
    return close[0] if close else None


def name_problems(path: Path) -> list[Problem]:
    if TASK_DIR_RE.match(path.name):
        return []
    hint = ""
    loose = re.match(r"^task-?(\d+)[-_ ]*(.*)$", path.name, re.IGNORECASE)
    if loose:
        slug = re.sub(r"[^a-z0-9]+", "-", loose.group(2).lower()).strip("-") or "name"
        hint = f", e.g. task-{int(loose.group(1)):03d}-{slug}"
    return [
        Problem(
            path,
            "folder name must be task-NNN-kebab-name (NNN: 3+ digits, zero-padded; "
            f"name: lowercase letters, digits and single hyphens){hint}",
            task=path.name,
        )
    ]


def naming_problems(folders: list[Path], archived: list[Path] = ()) -> list[Problem]:
    """Bad folder names, then duplicate numbers (reported on the later folder, naming both),
    and numbers taken by archived task folders (`archived`, reported on the tasks/ folder)."""
    problems: list[Problem] = []
    first_with: dict[int, Path] = {}
    archived_with = {task_number(folder): folder for folder in archived}
    for folder in folders:
        if not folder.is_dir():
            what = "a broken symlink" if folder.is_symlink() and not folder.exists() else (
                "a symlink to a file" if folder.is_symlink() else "a file")
            problems.append(Problem(folder, f"is {what}, expected a task folder", task=folder.name))
            continue
        bad = name_problems(folder)
        if bad:
            problems += bad
            continue
        number = task_number(folder)
        if number in archived_with:
            problems.append(
                Problem(
                    folder,
                    f"task number {number:03d} is taken by the archived task "
                    f"{archived_with[number]} (archived numbers are never reused; give the new "
                    "task the next free number, e.g. with `ci-eval new-task`, or restore the "
                    "archived one with `ci-eval restore`)",
                    task=folder.name,
                )
            )
        elif number in first_with:
            other = first_with[number]
            problems.append(
                Problem(
                    folder,
                    f"duplicate task number {number:03d}: {other} and {folder} "
                    "(numbers are never reused; give the new task the next free number)",
                    task=folder.name,
                )
            )
        else:
            first_with[number] = folder
    return problems


def load_problems(path: Path) -> list[Problem]:
    """What load_task() insists on: prompt.md, checks.py, metadata.json (JSON + schema)."""
    return loaded_metadata(path)[1]


def loaded_metadata(path: Path) -> tuple[object, list[Problem]]:
    """(the parsed metadata.json, load_problems): a task folder read once."""
    task = path.name
    problems: list[Problem] = []
    prompt = path / "prompt.md"
    if not prompt.is_file():
        problems.append(Problem(prompt, "missing (the exact prompt given to the agent)", task=task))
    else:
        try:
            text = read_user_file(prompt).decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(prompt, f"not UTF-8 text (byte {exc.start})", task=task))
        else:
            if not text.strip():
                problems.append(Problem(prompt, "is empty (expected the prompt text)", task=task))
    metadata_path = path / METADATA_FILE
    metadata, read_problems = read_metadata(metadata_path, task=task)
    harbor = harbor_verified(metadata)
    checks = path / ("tests/test.sh" if harbor else "checks.py")
    if not checks.is_file():
        problems.append(Problem(checks, "missing (Harbor's verifier: writes the reward to "
                                "/logs/verifier/reward.txt)" if harbor else
                                "missing (deterministic checks: exit 0 pass, 1 fail)", task=task))
    problems += read_problems
    if not read_problems:
        problems += metadata_problems(metadata, metadata_path, task=task)
    return metadata, problems


def harbor_verified(metadata: object) -> bool:
    """Whether the task is judged by Harbor's tests/test.sh (metadata docker.verifier) instead
    of a checks.py."""
    docker = metadata.get("docker") if isinstance(metadata, dict) else None
    return isinstance(docker, dict) and docker.get("verifier") == "harbor"


def read_metadata(path: Path, *, task: str | None = None) -> tuple[object, list[Problem]]:
    if not path.is_file():
        return None, [
            Problem(path, 'missing (expected {"difficulty", "area", "tags", "created"})', task=task)
        ]
    try:
        text = read_user_file(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem(path, f"not UTF-8 text (byte {exc.start})", task=task)]
    try:
        return strict_json.loads(text), []
    except json.JSONDecodeError as exc:
        return None, [
            Problem(
                path,
                f"invalid JSON: {exc.msg} (column {exc.colno})",
                field=f"line {exc.lineno}",
                task=task,
            )
        ]
    except strict_json.StrictJSONError as exc:
        return None, [Problem(path, f"invalid JSON: {exc}", task=task)]


def layout_problems(path: Path) -> list[Problem]:
    """repo-state/, solution/ and negatives/ shape (validate only; not needed to load)."""
    task = path.name
    problems: list[Problem] = []
    repo_state = path / "repo-state"
    if repo_state.exists() and not repo_state.is_dir():
        problems.append(Problem(repo_state, "expected a folder of fixture files", task=task))
    metadata, _ = loaded_metadata(path)
    if isinstance(metadata, dict) and "repo" in metadata and repo_state.exists():
        problems.append(Problem(repo_state, "a task pinned to an upstream commit (metadata.json "
                                "repo) has no repo-state/: remove one of the two", task=task))
    solution = path / "solution"
    if not solution.is_dir():
        problems.append(
            Problem(
                solution,
                "missing (expected a folder with a *.patch, *.diff or solve.sh)",
                task=task,
            )
        )
    else:
        entries = solution_entries(solution)
        if not entries:
            problems.append(
                Problem(
                    solution,
                    "expected a *.patch, *.diff or *.sh (e.g. solve.sh), found none",
                    task=task,
                )
            )
        for entry in entries:
            if entry.stat().st_size == 0:
                problems.append(Problem(entry, "is empty", task=task))
    negatives = path / "negatives"
    if negatives.exists() and not negatives.is_dir():
        problems.append(Problem(negatives, "expected a folder of known-bad outputs", task=task))
    elif negatives.is_dir():
        for entry in sorted(negatives.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                if not solution_entries(entry):
                    problems.append(
                        Problem(entry, "expected a *.patch, *.diff or *.sh inside", task=task)
                    )
            elif entry.suffix not in OUTPUT_SUFFIXES:
                problems.append(
                    Problem(entry, "expected a *.patch, *.diff or *.sh known-bad output", task=task)
                )
            elif entry.stat().st_size == 0:
                problems.append(Problem(entry, "is empty", task=task))
    return problems


def placeholder_problems(path: Path) -> list[Problem]:
    """The parts of a task that still hold what `ci-eval new-task` put there (see the module
    docstring), each with what to write instead."""
    task = path.name
    found: list[Problem] = []
    candidates = [(path / "prompt.md", "prompt.md"), (path / "checks.py", "checks.py")]
    candidates += [(entry, "solution") for entry in solution_entries(path / "solution")]
    repo_state = path / "repo-state"
    if repo_state.is_dir() and not repo_state.is_symlink():
        candidates += [(entry, "repo-state") for entry in sorted(repo_state.iterdir())]
    for file, part in candidates:
        if holds_placeholder(file):
            found.append(Problem(file, f"still the `ci-eval new-task` placeholder "
                                       f"({PLACEHOLDER_MARKER}): {PLACEHOLDER_TODO[part]}",
                                 task=task))
    metadata, problems = read_metadata(path / METADATA_FILE, task=task)
    if not problems and isinstance(metadata, dict) and PLACEHOLDER_KEY in metadata:
        found.append(Problem(path / METADATA_FILE, "still the `ci-eval new-task` placeholder: "
                             "set difficulty, area and tags, then delete this key",
                             field=schema.json_path([PLACEHOLDER_KEY]), task=task))
    return found
