"""Task loading, selection and validation (in-process); list / validate / schema via the CLI."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from ci_eval.errors import UserError
from ci_eval.tasks import schema
from ci_eval.tasks.load import load_task, load_tasks
from ci_eval.tasks.metadata_problems import metadata_problems
from ci_eval.tasks.model import (
    DEFAULT_AGENT_TIMEOUT,
    DEFAULT_CHECKS_TIMEOUT,
    Problem,
    Task,
    select_tasks,
)
from ci_eval.tasks.problems import validate_task, validate_tasks

REPO_ROOT = Path(__file__).resolve().parents[1]


# --- loading ----------------------------------------------------------------------------------


def test_load_valid_task_properties(repo_root, make_task):
    make_task(
        repo_root,
        "task-004-full",
        metadata={
            "difficulty": 5,
            "area": "hooks",
            "tags": ["ruff", "stop-hook"],
            "created": "2025-02-28",
            "human_label": {
                "expected_pass_rate": 0.8,
                "labeled_by": "ann",
                "labeled_at": "2025-03-01",
            },
            "aspirational": True,
            "timeout_seconds": {"agent": 90, "checks": 15.5},
            "requires": ["ruff", "pytest"],
            "x-owner": "team-a",
        },
    )
    (task,) = load_tasks(repo_root)
    assert (task.id, task.number) == ("task-004-full", 4)
    assert task.difficulty == 5 and task.area == "hooks"
    assert task.tags == ["ruff", "stop-hook"]
    assert task.created == dt.date(2025, 2, 28)
    assert task.human_label["expected_pass_rate"] == 0.8
    assert task.aspirational is True
    assert (task.agent_timeout, task.checks_timeout) == (90.0, 15.5)
    assert task.requires == ["ruff", "pytest"]
    assert task.metadata["x-owner"] == "team-a"
    assert task.prompt_hash.startswith("sha256:")
    assert [p.name for p in task.solutions()] == ["solve.sh"]


def test_defaults_and_number_timeout(repo_root, make_task):
    make_task(repo_root, "task-001-a")
    make_task(repo_root, "task-002-b", metadata={"timeout_seconds": 30})
    a, b = load_tasks(repo_root)
    assert (a.agent_timeout, a.checks_timeout) == (DEFAULT_AGENT_TIMEOUT, DEFAULT_CHECKS_TIMEOUT)
    assert (a.aspirational, a.human_label, a.requires) == (False, None, [])
    assert (b.agent_timeout, b.checks_timeout) == (30.0, DEFAULT_CHECKS_TIMEOUT)


def test_load_sorts_by_number_and_skips_non_tasks(repo_root, make_task):
    make_task(repo_root, "task-010-ten")
    make_task(repo_root, "task-002-two")
    make_task(repo_root, "task-1000-big")
    (repo_root / "tasks" / "README.md").write_text("not a task")
    (repo_root / "tasks" / ".hidden").mkdir()
    (repo_root / "tasks" / "_drafts").mkdir()
    assert [t.number for t in load_tasks(repo_root)] == [2, 10, 1000]


def test_empty_tasks_folder(repo_root):
    assert load_tasks(repo_root) == []
    assert validate_tasks(repo_root) == {}


def test_missing_repo_state_is_an_empty_workspace(repo_root, make_task):
    make_task(repo_root, repo_state=None)
    assert validate_tasks(repo_root) == {"task-001-example": []}


@pytest.mark.parametrize("key", ["task-003-c", "task-003", "003", "3", "0003", "tasks/task-003-c/"])
def test_select_by_any_key(repo_root, make_task, key):
    for name in ("task-001-a", "task-003-c"):
        make_task(repo_root, name)
    assert [t.id for t in load_tasks(repo_root, [key])] == ["task-003-c"]


def test_select_keeps_order_given_and_dedupes(repo_root, make_task):
    for name in ("task-001-a", "task-002-b"):
        make_task(repo_root, name)
    assert [t.number for t in load_tasks(repo_root, ["2", "1", "task-002-b"])] == [2, 1]


def test_select_unknown_raises(repo_root, make_task):
    make_task(repo_root)
    with pytest.raises(UserError, match="unknown task 'task-404'"):
        load_tasks(repo_root, ["task-404"])


def test_select_tasks_api():
    tasks = [Task("task-001-a", 1, Path("tasks/task-001-a"))]
    assert select_tasks(tasks, ["001"], Path("tasks")) == tasks


def test_selection_skips_broken_unselected_task(repo_root, make_task):
    make_task(repo_root, "task-001-good")
    make_task(repo_root, "task-002-broken", metadata={"difficulty": "x"})
    assert [t.id for t in load_tasks(repo_root, ["1"])] == ["task-001-good"]
    with pytest.raises(UserError, match=r"task-002-broken/metadata.json: \$.difficulty"):
        load_tasks(repo_root)


def test_selection_still_checks_duplicate_numbers(repo_root, make_task):
    make_task(repo_root, "task-001-a")
    make_task(repo_root, "task-002-b")
    make_task(repo_root, "task-002-c")
    with pytest.raises(UserError, match="duplicate task number 002"):
        load_tasks(repo_root, ["1"])


def test_load_task_error_is_one_line(repo_root, make_task):
    path = make_task(repo_root, metadata='{\n"difficulty": 1,\n}')
    with pytest.raises(UserError) as info:
        load_task(path)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(f"{path / 'metadata.json'}: line 3: invalid JSON")


def test_missing_root_and_tasks_folder(tmp_path):
    with pytest.raises(UserError, match="--root"):
        load_tasks(tmp_path / "nope")
    with pytest.raises(UserError, match="no tasks/ folder"):
        load_tasks(tmp_path)


# --- validation -------------------------------------------------------------------------------


def test_validate_task_collects_everything(tmp_path):
    folder = tmp_path / "tasks" / "task-9-Bad"
    folder.mkdir(parents=True)
    (folder / "repo-state").write_text("should be a folder")
    problems = validate_task(folder)
    text = "\n".join(str(p) for p in problems)
    for needle in (
        "task-NNN-kebab-name",
        "prompt.md: missing",
        "checks.py: missing",
        "metadata.json: missing",
        "repo-state: expected a folder",
        "solution: missing",
    ):
        assert needle in text
    assert all(p.task == "task-9-Bad" for p in problems)


def test_validate_task_accepts_task_object(repo_root, make_task):
    task = load_task(make_task(repo_root))
    assert validate_task(task) == []


def test_solution_shapes(repo_root, make_task):
    make_task(repo_root, "task-001-patch", solution={"fix.patch": "--- a\n+++ b\n"})
    make_task(repo_root, "task-002-empty", solution={"fix.diff": ""})
    make_task(repo_root, "task-003-none", solution={})
    report = validate_tasks(repo_root)
    assert report["task-001-patch"] == []
    assert [p.message for p in report["task-002-empty"]] == ["is empty"]
    assert "found none" in report["task-003-none"][0].message


def test_negative_shapes(repo_root, make_task):
    make_task(
        repo_root,
        negatives={
            "a.patch": "x",
            "b.sh": "exit 0",
            "d/solve.sh": "true",
            "e.txt": "x",
            "f.diff": "",
            ".gitkeep": "",
        },
    )
    (repo_root / "tasks/task-001-example/negatives/c").mkdir()
    problems = validate_tasks(repo_root)["task-001-example"]
    assert sorted(Path(str(p.path)).name for p in problems) == ["c", "e.txt", "f.diff"]


def test_validate_tasks_reports_duplicates_once_on_later_folder(repo_root, make_task):
    make_task(repo_root, "task-005-a")
    make_task(repo_root, "task-005-b")
    report = validate_tasks(repo_root)
    assert report["task-005-a"] == []
    (dup,) = report["task-005-b"]
    assert "tasks/task-005-a" in dup.message and "tasks/task-005-b" in dup.message


def test_validate_tasks_selection_and_bad_names_last(repo_root, make_task):
    make_task(repo_root, "task-002-b")
    make_task(repo_root, "task-001-a")
    make_task(repo_root, "Task-3")
    assert list(validate_tasks(repo_root)) == ["task-001-a", "task-002-b", "Task-3"]
    assert list(validate_tasks(repo_root, ["2", "Task-3"])) == ["task-002-b", "Task-3"]
    with pytest.raises(UserError, match="unknown task"):
        validate_tasks(repo_root, ["9"])


def test_validate_lint_toggle(repo_root, make_task):
    make_task(repo_root, checks="import time\nprint(time.time())\n")
    (problem,) = validate_tasks(repo_root)["task-001-example"]
    assert problem.rule == "wall-clock" and problem.line == 2
    assert str(problem).startswith(f"{repo_root}/tasks/task-001-example/checks.py:2: ")
    assert validate_tasks(repo_root, lint=False) == {"task-001-example": []}


@pytest.mark.parametrize(
    ("key", "guess"),
    [
        ("dificulty", "difficulty"),
        ("Area", "area"),
        ("tag", "tags"),
        ("human-label", "human_label"),
        ("timeout", "timeout_seconds"),
        ("require", "requires"),
        ("aspirationl", "aspirational"),
    ],
)
def test_metadata_typos_are_errors(valid_metadata, key, guess):
    data = valid_metadata()
    data[key] = 1
    (problem,) = [p for p in metadata_problems(data, Path("m.json")) if p.field == f"$.{key}"]
    assert f"did you mean {guess!r}" in problem.message


@pytest.mark.parametrize("key", ["x-owner", "x_dificulty", "owner", "source_issue", "notes"])
def test_custom_metadata_keys_are_allowed(valid_metadata, key):
    data = valid_metadata()
    data[key] = "anything"
    assert metadata_problems(data, Path("m.json")) == []


def test_problem_formatting():
    assert str(Problem(Path("a/b.json"), "bad", field="$.x")) == "a/b.json: $.x: bad"
    assert str(Problem(Path("c.py"), "bad", line=3)) == "c.py:3: bad"
    assert str(Problem(Path("d"), "bad")) == "d: bad"
    assert isinstance(Problem(Path("d"), "bad").error(), UserError)


@pytest.mark.skipif(not (REPO_ROOT / "tasks").is_dir(), reason="no tasks/ in this checkout")
def test_repository_tasks_are_valid():
    report = validate_tasks(REPO_ROOT)
    assert report
    assert {k: [str(p) for p in v] for k, v in report.items() if v} == {}


# --- schema module ----------------------------------------------------------------------------


def test_known_schemas_include_metadata():
    assert "metadata" in schema.known_schemas()
    assert schema.load_schema("metadata")["type"] == "object"


def test_schema_dir_pickup(tmp_path, monkeypatch):
    (tmp_path / "widget.schema.json").write_text(json.dumps({"type": "object", "required": ["n"]}))
    (tmp_path / "notes.json").write_text("{}")
    monkeypatch.setattr(schema, "schemas_dir", lambda: tmp_path)
    assert schema.known_schemas() == ["widget"]
    with pytest.raises(UserError, match=r"unknown schema 'metadata' \(known: widget\)"):
        schema.schema_path("metadata")


def test_validate_instance_message(valid_metadata):
    schema.validate_instance(valid_metadata(), "metadata", path="t/metadata.json")
    with pytest.raises(UserError) as info:
        schema.validate_instance(
            {**valid_metadata(), "difficulty": "hard"}, "metadata", path="t/metadata.json"
        )
    assert str(info.value) == 't/metadata.json: $.difficulty: expected integer 1-5, got "hard"'


def test_schema_problems_dict_schema_and_paths():
    custom = {
        "type": "object",
        "properties": {"odd key": {"type": "array", "items": {"enum": ["a", "b"]}}},
    }
    (problem,) = schema.schema_problems({"odd key": ["a", "c"]}, custom)
    assert str(problem) == '$["odd key"][1]: expected one of "a", "b", got "c"'
    assert schema.json_path(["a", 0, "b-c"]) == "$.a[0].b-c"


def test_describe_wording():
    assert schema.describe({"type": "integer", "minimum": 1}) == "integer >= 1"
    assert schema.describe({"type": "number", "exclusiveMinimum": 0}) == "positive number"
    assert schema.describe({"type": ["string", "null"]}) == "string or null"
    assert schema.describe({"type": "string", "x-expected": "a SHA"}) == "a SHA"


# --- CLI: list, validate, schema --------------------------------------------------------------


def test_list_json(repo_root, make_task, cli):
    make_task(repo_root, "task-002-b", metadata={"aspirational": True, "timeout_seconds": 5})
    make_task(repo_root, "task-001-a", metadata={"human_label": {"expected_pass_rate": 0.7}})
    result = cli("list", "--json", cwd=repo_root)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [d["id"] for d in data] == ["task-001-a", "task-002-b"]
    assert data[0]["human_label"] == {"expected_pass_rate": 0.7}
    assert data[1]["aspirational"] is True
    assert data[1]["timeout_seconds"] == {"agent": 5.0, "checks": DEFAULT_CHECKS_TIMEOUT}
    assert set(data[0]) >= {"id", "number", "difficulty", "area", "tags", "created", "requires"}


def test_list_table_and_selection(repo_root, make_task, main_cli):
    make_task(repo_root, "task-001-a", metadata={"tags": ["x", "y"]})
    make_task(
        repo_root,
        "task-002-b",
        metadata={"human_label": {"expected_pass_rate": 0.5, "labeled_by": "ann"}},
    )
    result = main_cli("list", "--root", repo_root, "2")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "task",
        "difficulty",
        "area",
        "tags",
        "aspirational",
        "human",
        "label",
    ]
    assert len(lines) == 3 and "task-002-b" in lines[2] and "0.50 (ann)" in lines[2]
    assert "x, y" in main_cli("list", "--root", repo_root).stdout


def test_list_empty(repo_root, main_cli):
    assert main_cli("list", "--root", repo_root, "--json").stdout.strip() == "[]"
    result = main_cli("list", "--root", repo_root)
    assert result.returncode == 0 and "no tasks" in result.stderr


def test_validate_ok(repo_root, make_task, cli):
    make_task(repo_root, "task-001-a")
    make_task(repo_root, "task-002-b", repo_state=None, negatives={"bad.sh": "true\n"})
    (repo_root / "ci-eval.yaml").write_text("agents:\n  mine: {command: ./agent.sh}\n")
    result = cli("validate", cwd=repo_root)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines() == ["task-001-a: ok", "task-002-b: ok", "2 of 2 tasks valid"]


def test_schema_command_prints_and_writes(tmp_path, main_cli):
    listed = main_cli("schema")
    assert listed.returncode == 0 and "metadata" in listed.stdout.split()
    printed = main_cli("schema", "metadata")
    assert printed.returncode == 0
    assert json.loads(printed.stdout) == schema.load_schema("metadata")
    out = tmp_path / "metadata.schema.json"
    assert main_cli("schema", "metadata", "--output", out).returncode == 0
    assert out.read_text() == printed.stdout


def test_schema_is_valid_draft_2020_12():
    import jsonschema

    data = schema.load_schema("metadata")
    jsonschema.Draft202012Validator.check_schema(data)
    assert "typo" in data["description"]
