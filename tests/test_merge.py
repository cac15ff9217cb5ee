"""`ci-eval merge` / results.merge: shard folders pooled, every line checked, nothing counted twice."""

from __future__ import annotations

import json

import pytest

from ci_eval.errors import UserError
from ci_eval.results.merge import merge_folders, write_merged


def record(task: str, run: int, *, status: str = "pass", agent: str = "reference", k: int = 3,
           **extra) -> dict:
    return {"run": run, "task": task, "status": status, "passed": status == "pass",
            "agent": agent, "k": k, "attempt": 1, **extra}


def write(folder, task: str, *records: dict):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_pools_tasks_from_every_shard(tmp_path):
    a, b = tmp_path / "shard-1", tmp_path / "shard-2"
    write(a, "task-001-x", record("task-001-x", 1), record("task-001-x", 2))
    write(b, "task-001-x", record("task-001-x", 3, status="fail"))  # a task split over shards
    write(b, "task-002-y", *(record("task-002-y", i) for i in (1, 2, 3)))
    merged = merge_folders([a, b])
    assert [r["run"] for r in merged.records["task-001-x"]] == [1, 2, 3]
    assert len(merged.sources["task-001-x"]) == 2
    out = tmp_path / "merged"
    write_merged(merged, out)
    lines = (out / "task-001-x.jsonl").read_text().splitlines()
    assert [json.loads(line)["run"] for line in lines] == [1, 2, 3]
    assert sorted(p.name for p in out.iterdir()) == ["task-001-x.jsonl", "task-002-y.jsonl"]


@pytest.mark.parametrize("second", [
    record("task-001-x", 2),  # identical duplicate
    record("task-001-x", 2, status="fail"),  # conflicting duplicate
], ids=["identical", "conflicting"])
def test_same_run_from_two_shards_is_refused_naming_both_lines(tmp_path, second):
    a, b = tmp_path / "shard-1", tmp_path / "shard-2"
    first = write(a, "task-001-x", record("task-001-x", 1), record("task-001-x", 2))
    other = write(b, "task-001-x", second)
    with pytest.raises(UserError) as caught:
        merge_folders([a, b])
    message = str(caught.value)
    assert f"{other}:1" in message and f"{first}:2" in message
    assert "run 2 recorded twice" in message


def test_pooled_run_beyond_what_was_asked_and_another_agent(tmp_path):
    a, b = tmp_path / "shard-1", tmp_path / "shard-2"
    write(a, "task-001-x", *(record("task-001-x", i) for i in (1, 2, 3)))
    beyond = write(b, "task-001-x", record("task-001-x", 4))
    with pytest.raises(UserError, match=rf"{beyond}:1.*run 4 is beyond the runs asked"):
        merge_folders([a, b])
    c, d = tmp_path / "shard-3", tmp_path / "shard-4"
    write(c, "task-001-x", record("task-001-x", 1))
    write(d, "task-001-x", record("task-001-x", 2, agent="noop"))
    with pytest.raises(UserError, match="agent 'noop'"):
        merge_folders([c, d])
    e, f = tmp_path / "shard-5", tmp_path / "shard-6"
    write(e, "task-001-x", record("task-001-x", 1))
    other_task = write(f, "task-002-y", record("task-002-y", 1, agent="noop"))
    with pytest.raises(UserError, match=rf"{other_task}:1.*mix agents.*'noop' here"):
        merge_folders([e, f])


def test_a_bad_line_inside_one_shard_names_its_file(tmp_path):
    a = tmp_path / "shard-1"
    path = write(a, "task-001-x", record("task-001-x", 1))
    path.write_text(path.read_text() + '{"run": 2, "task": "task-001-x"}\n')
    with pytest.raises(UserError, match=rf"{path}:2.*status"):
        merge_folders([a])


def test_cli_merges_and_refuses_without_writing(tmp_path, cli, assert_bad_input):
    a, b = tmp_path / "shard-1", tmp_path / "shard-2"
    write(a, "task-001-x", record("task-001-x", 1))
    write(b, "task-001-x", record("task-001-x", 2))
    result = cli("merge", a, b, "--out", tmp_path / "out", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["runs"] == 2
    assert_bad_input(cli("merge", a, b, "--out", tmp_path / "out"), "is not empty")
    write(b, "task-001-x", record("task-001-x", 1))
    assert_bad_input(cli("merge", a, b, "--out", tmp_path / "out2"), "recorded twice")
    assert not (tmp_path / "out2").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out2")]
    assert_bad_input(cli("merge", tmp_path / "nope", "--out", tmp_path / "o3"), "nope",
                     "not a folder")
