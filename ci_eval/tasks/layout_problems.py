"""A task folder's names and shape (folder name, task numbers unique and never an archived one's,
repo-state/, solution/, negatives/, placeholders `ci-eval new-task` left) -> Problems; the rules:
tasks/problems.py."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ci_eval.tasks import schema
from ci_eval.tasks.metadata_problems import loaded_metadata, read_metadata
from ci_eval.tasks.model import (
    METADATA_FILE,
    OUTPUT_SUFFIXES,
    PLACEHOLDER_KEY,
    PLACEHOLDER_MARKER,
    TASK_DIR_RE,
    Problem,
    holds_placeholder,
    solution_entries,
    task_number,
)

PLACEHOLDER_TODO = {
    "prompt.md": "write the prompt the agent receives, without the CI-EVAL-PLACEHOLDER paragraph",
    "checks.py": "write the deterministic checks (exit 0 pass, 1 fail), without the "
                 "CI-EVAL-PLACEHOLDER line",
    "solution": "write a known-good output (solve.sh or fix.patch) instead",
    "repo-state": "replace this file with the files the agent starts from",
}


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


def naming_problems(folders: list[Path], archived: Sequence[Path] = ()) -> list[Problem]:
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
    """The parts of a task that still hold what `ci-eval new-task` put there (tasks/problems.py's
    docstring says which), each with what to write instead."""
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
