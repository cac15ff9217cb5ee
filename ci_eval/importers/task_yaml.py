"""`ci-eval import task-yaml SRC`: task.yaml tasks (repo/, golden_patch.diff, rubric.yaml) -> native.

The source format: a task is a folder holding

    task.yaml          id, title, difficulty (easy | medium | hard, or 1-5), problem_statement,
                       evaluation: {test_command, fail_to_pass, pass_to_pass}
                       (fail_to_pass / pass_to_pass may also sit at the top level)
    rubric.yaml        optional: weighted criteria (ci-eval's format, `ci-eval schema rubric`;
                       a criterion's `type:` is read as `kind:`)
    golden_patch.diff  the reference solution
    repo/              the base repository at its buggy state
    Dockerfile         optional: kept as environment/Dockerfile, built and used by the docker
                       runner (`--runner docker`; the repository at /workspace, as seed 002)

SRC is one such folder, a folder of them, or holds them in tasks/. Mapping: problem_statement ->
prompt.md, repo/ -> repo-state/, golden_patch.diff -> solution/, fail_to_pass / pass_to_pass ->
metadata.json, rubric.yaml copied; checks.py runs the declared tests as test_command did (its
pytest arguments, the project's pytest configuration as repo/ has it) with ci_eval.checks'
structured report and SWE-bench semantics. A test_command that is not pytest is skipped (ci-eval
reads test outcomes from pytest's structured report only). difficulty easy/medium/hard -> 2/3/4.
"""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ci_eval.errors import UserError
from ci_eval.importers.base import (
    IMPORTED_KEY,
    SOLUTION_PLACEHOLDER,
    Conversion,
    ImportedTask,
    Skipped,
    difficulty_value,
    kebab,
    marked_folders,
    metadata_json,
    read_tree,
)
from ci_eval.output import read_user_file
from ci_eval.strict_json import json_path
from ci_eval.strict_yaml import parse_yaml

NAME = "task-yaml"
SUMMARY = "task.yaml tasks: task.yaml, rubric.yaml, golden_patch.diff, repo/, Dockerfile"
TASK_FILE = "task.yaml"
KNOWN_ENTRIES = {TASK_FILE, "rubric.yaml", "golden_patch.diff", "repo", "Dockerfile"}
DROPPED_ARGS = {"-q", "--quiet", "--no-header", "-rA"}  # ci-eval's runner sets its own output


def convert(src: Path, *, today: dt.date, already: Mapping[str, str] = {}) -> Conversion:
    result = Conversion()
    for folder in source_tasks(Path(src)):
        data = _task_yaml(folder / TASK_FILE)
        if data["id"] in already:
            result.skipped.append(Skipped(data["id"], f"already imported as {already[data['id']]}"))
            continue
        args = pytest_args(data["test_command"])
        if args is None:
            result.skipped.append(Skipped(data["id"], f"test_command {data['test_command']!r} is "
                                          "not pytest: ci-eval reads test outcomes from "
                                          "pytest's structured report only"))
            continue
        result.tasks.append(_task(data, folder, args, today))
    return result


def source_tasks(src: Path) -> list[Path]:
    return marked_folders(src, TASK_FILE, "a task.yaml task", also_under="tasks")


def pytest_args(command: str) -> list[str] | None:
    """The pytest arguments of a test command (`python3 -m pytest ARGS`, `pytest ARGS`), minus
    the output options ci-eval sets itself; None when it is not a pytest command."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[:1] and Path(words[0]).name in ("pytest", "py.test"):
        rest = words[1:]
    elif (len(words) >= 3 and Path(words[0]).name.startswith("python") and words[1] == "-m"
          and words[2] == "pytest"):
        rest = words[3:]
    else:
        return None
    kept, skip = [], False
    for index, word in enumerate(rest):
        if skip:
            skip = False
            continue
        if word in DROPPED_ARGS or word in ("-pno:cacheprovider",):
            continue
        if word == "-p" and index + 1 < len(rest) and rest[index + 1] == "no:cacheprovider":
            skip = True
            continue
        kept.append(word)
    return kept


def _task_yaml(path: Path) -> dict:
    try:
        data = parse_yaml(read_user_file(path).decode("utf-8"), path)
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    if not isinstance(data, dict):
        raise UserError("expected a mapping (id, title, problem_statement, evaluation)", path=path)
    for key in ("id", "problem_statement"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise UserError("expected a non-empty string", path=path, field=json_path([key]))
    evaluation = data.get("evaluation")
    if not isinstance(evaluation, dict):
        raise UserError("expected a mapping with test_command, fail_to_pass, pass_to_pass",
                        path=path, field="$.evaluation")
    command = evaluation.get("test_command")
    if not isinstance(command, str) or not command.strip():
        raise UserError("expected the command that runs the tests", path=path,
                        field="$.evaluation.test_command")
    groups = {}
    for group in ("fail_to_pass", "pass_to_pass"):
        inside, outside = group in evaluation, group in data
        if inside and outside:
            raise UserError(f"also given as evaluation.{group}; give it once", path=path,
                            field=json_path([group]))
        where = ["evaluation", group] if inside else [group]
        value = evaluation.get(group) if inside else data.get(group, [])
        if value is None:
            value = []
        if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
            raise UserError("expected a list of test ids", path=path, field=json_path(where))
        for index, test_id in enumerate(value):
            if test_id in value[:index]:
                raise UserError(f"{test_id!r} is listed twice", path=path,
                                field=json_path([*where, index]))
        groups[group] = (value, where)
    if not groups["fail_to_pass"][0]:
        raise UserError("expected at least one test id (a test that fails before the fix)",
                        path=path, field=json_path(groups["fail_to_pass"][1]))
    for index, test_id in enumerate(groups["pass_to_pass"][0]):
        if test_id in groups["fail_to_pass"][0]:
            raise UserError(f"{test_id!r} is also in fail_to_pass", path=path,
                            field=json_path([*groups["pass_to_pass"][1], index]))
    difficulty = difficulty_value(data.get("difficulty", "medium"), path, "$.difficulty")
    title = data.get("title", "")
    if not isinstance(title, str):
        raise UserError("expected text", path=path, field="$.title")
    return {"id": data["id"], "title": title.strip(), "difficulty": difficulty,
            "problem_statement": data["problem_statement"], "test_command": command,
            "fail_to_pass": groups["fail_to_pass"][0], "pass_to_pass": groups["pass_to_pass"][0]}


def _task(data: dict, folder: Path, args: list[str], today: dt.date) -> ImportedTask:
    if not (folder / "repo").is_dir():
        raise UserError("missing (the base repository at its buggy state)", path=folder / "repo")
    files = {f"repo-state/{rel}": content
             for rel, content in read_tree(folder / "repo", label="repo/").items()}
    task = ImportedTask(data["id"], kebab(data["id"]), files)
    files["prompt.md"] = (data["problem_statement"].strip() + "\n").encode("utf-8")
    files["checks.py"] = checks_text(args).encode("utf-8")
    golden = folder / "golden_patch.diff"
    if golden.is_file() and not golden.is_symlink():
        files["solution/golden_patch.diff"] = read_user_file(golden)
    else:
        files["solution/solve.sh"] = SOLUTION_PLACEHOLDER.encode("utf-8")
        task.executable.add("solution/solve.sh")
        task.todo.append("solution/solve.sh: the source has no golden_patch.diff; write a "
                         "known-good output that passes checks.py")
    if (folder / "rubric.yaml").is_file():
        files["rubric.yaml"] = _rubric(folder / "rubric.yaml")
    else:
        task.warnings.append("no rubric.yaml: runs are judged by the declared tests alone")
    origin: dict[str, Any] = {"format": NAME, "id": data["id"], "source": str(folder / TASK_FILE),
                              "test_command": data["test_command"]}
    if data["title"]:
        origin["title"] = data["title"]
    docker = None
    if (folder / "Dockerfile").is_file():
        files["environment/Dockerfile"] = read_user_file(folder / "Dockerfile")
        origin["dockerfile"] = "environment/Dockerfile"
        docker = {"dockerfile": "environment/Dockerfile", "mount": "/workspace"}
        task.warnings.append("Dockerfile kept as environment/Dockerfile: `--runner docker` (or "
                             "`runner: docker`) builds it and runs the checks in it, the "
                             "repository mounted at /workspace; the default local runner uses "
                             "ci-eval's own interpreter")
    ignored = sorted(p.name for p in folder.iterdir() if p.name not in KNOWN_ENTRIES)
    if ignored:
        task.warnings.append(f"not imported: {', '.join(ignored)}")
    metadata = {"difficulty": data["difficulty"], "area": "imported",
                "tags": ["imported", NAME], "created": today.isoformat(),
                "fail_to_pass": data["fail_to_pass"], "pass_to_pass": data["pass_to_pass"],
                "requires": ["pytest"], IMPORTED_KEY: origin}
    if docker:
        metadata["docker"] = docker
    files["metadata.json"] = metadata_json(metadata)
    return task


def _rubric(path: Path) -> bytes:
    """rubric.yaml as is, or rewritten when its criteria say `type:` for `kind:`."""
    raw = read_user_file(path)
    try:
        data = parse_yaml(raw.decode("utf-8"), path)
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    criteria = data.get("criteria") if isinstance(data, dict) else None
    if not isinstance(criteria, list) or not any(
            isinstance(c, dict) and "type" in c and "kind" not in c for c in criteria):
        return raw
    import yaml

    data["criteria"] = [
        {("kind" if key == "type" else key): value for key, value in c.items()}
        if isinstance(c, dict) and "kind" not in c else c for c in criteria]
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return (f"# Converted by `ci-eval import task-yaml` from {path} (type: -> kind:).\n"
            + text).encode("utf-8")


def checks_text(args: list[str]) -> str:
    # no source text in the docstring (the id and test_command are in metadata.json's
    # x-imported-from); the arguments are a repr() of a list of strings
    return ('"""Imported from a task-yaml task (metadata.json x-imported-from): its declared '
            "tests, run as its\ntest_command ran them, with the project's pytest configuration "
            "as repo/ has it.\nOutcomes come from pytest's structured report (SWE-bench "
            'semantics: ci_eval/grading/testids.py)."""\n\n'
            "from ci_eval.checks import main, run_declared_tests\n\n"
            f"main(lambda: run_declared_tests(project_config=True, args={args!r}))\n")
