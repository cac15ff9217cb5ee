"""The compiled fast check of a schema (tasks/fastschema.py) accepts nothing jsonschema refuses,
and accepts the valid files ci-eval ships, so that their validation skips jsonschema."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from ci_eval.tasks import schema
from ci_eval.tasks.fastschema import compile_schema

ROOT = Path(__file__).resolve().parents[1]
METADATA = {"difficulty": 3, "area": "hooks", "tags": ["a", "b"], "created": "2026-11-29",
            "requires": ["ruff"], "timeout_seconds": {"agent": 600, "checks": 60},
            "aspirational": False, "fail_to_pass": ["tests/test_x.py::test_a"],
            "pass_to_pass": ["tests/test_x.py::test_b"],
            "human_label": {"expected_pass_rate": 0.6, "labeled_by": "x", "labeled_at": "2026-11-29",
                            "notes": "n"}}
ENTRY = {"passes": 32, "runs": 40, "pass_rate": 0.8, "avg_tokens": None, "avg_wall_seconds": 1.5,
         "recorded": "2026-11-29", "prompt_hash": "sha256:" + "a" * 64, "aspirational": False,
         "observations": [{"recorded": "2026-11-29", "passes": 32, "runs": 40}]}
BASELINE = {"schema_version": 2, "agent": "reference", "tasks": {"task-001-x": ENTRY}}


def _run_summary() -> dict:
    from ci_eval.results import history
    from ci_eval.results.summary import summarize

    records = [{"run": n, "task": "task-001-x", "status": "pass" if n % 3 else "fail",
                "passed": bool(n % 3), "agent": "reference", "k": 5, "tokens": 10,
                "wall_seconds": 1.5} for n in range(1, 6)]
    return history.build_summary(
        {"task-001-x": summarize("task-001-x", records)}, date="2026-11-29",
        recorded_at="2026-11-29T10:00:00Z", commit="a" * 40, agent="reference",
        ci_eval_version="0.1.0", gate={"task-001-x": "regressed"},
        ci_run={"id": 12, "attempt": 1, "url": "https://example.invalid/r/12", "ref": "main"}
    ).to_json()


RUN_SUMMARY = _run_summary()
ODD_VALUES = [None, True, False, 0, 1, -1, 5, 6, 0.0, 1.0, 0.5, 2.5, 86400, 86401, 1e308,
              float("nan"), float("inf"), "", "x", "2026-02-30", "2026-13-01", "2026-1-1",
              "2026-01-01", "２０２６-01-01", "sha256:" + "A" * 64, "bad name", [], ["a", "a"],
              ["a", ""], [1], {}, {"agent": 0}, {"agent": 1}, {"checks": 5.5}, {"other": 1}]


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield from _paths(sub, (*prefix, index))


def _mutations(example, rng: random.Random, count: int):
    """The example with values replaced, keys added or removed, at every depth."""
    paths = [p for p in _paths(example) if p]
    for _ in range(count):
        instance = copy.deepcopy(example)
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(paths)
            parent = instance
            try:
                for part in path[:-1]:
                    parent = parent[part]
                action = rng.random()
                if action < 0.7:
                    parent[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
                elif action < 0.85 and isinstance(parent, dict):
                    parent.pop(path[-1], None)
                elif isinstance(parent, dict):
                    parent[rng.choice(["extra", "x-own", "dificulty", "snapshots"])] = 1
            except (KeyError, IndexError, TypeError):
                continue
        yield instance


@pytest.mark.parametrize("name, example", [("metadata", METADATA), ("baseline", BASELINE),
                                           ("run-summary", RUN_SUMMARY)])
def test_the_fast_check_accepts_nothing_jsonschema_refuses(name, example):
    fast = compile_schema(schema.load_schema(name))
    assert fast is not None and fast(example)
    validator = schema._make_validator(schema.load_schema(name))
    rng = random.Random(1234)
    accepted = refused = 0
    for instance in _mutations(example, rng, 3000):
        if fast(instance):
            accepted += 1
            assert validator.is_valid(instance), json.dumps(instance, default=str)
        else:
            refused += 1
    assert accepted > 100 and refused > 100  # both sides were exercised


def test_the_shipped_tasks_and_baseline_pass_the_fast_check():
    metadata = compile_schema(schema.load_schema("metadata"))
    for path in sorted((ROOT / "tasks").glob("*/metadata.json")):
        assert metadata(json.loads(path.read_text())), path
    assert compile_schema(schema.load_schema("baseline"))(
        json.loads((ROOT / "baseline.json").read_text()))


def test_a_schema_with_an_unknown_keyword_is_left_to_jsonschema():
    assert compile_schema({"type": "object", "not": {"required": ["x"]}}) is None
    assert compile_schema({"type": "string", "format": "email"}) is None


@pytest.mark.parametrize("instance", [
    {**METADATA, "difficulty": 2.0},            # an integer to jsonschema, refused here
    {**METADATA, "human_label": {"expected_pass_rate": float("nan")}},
])
def test_what_the_fast_check_refuses_jsonschema_still_decides(instance):
    validator = schema._make_validator(schema.load_schema("metadata"))
    fast = compile_schema(schema.load_schema("metadata"))
    assert not fast(instance)
    assert [p.json_path for p in schema.schema_problems(instance, "metadata")] == [
        e.json_path for e in validator.iter_errors(instance)]
