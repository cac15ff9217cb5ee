"""The report against the plan (pure): a planned shard that uploaded no results makes its tasks
inconclusive, named by shard, and fails the gate, whatever their baseline says.

Without this a shard job that died before its upload left its tasks "new" (no baseline yet,
no results) and the check green. The plan is what `ci-eval plan --github-output` writes as the
output `plan`: {"of": 2, "shards": {"1": ["task-001-a", ...], "2": [...]}}.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Mapping

from ci_eval.errors import UserError
from ci_eval.verdict.model import TaskVerdict, Verdict

MAX_PLAN_CHARS = 4_000_000


def plan_json(plan: list[dict], count: int) -> str:
    """The compact form the report reads back (from build_plan's shards)."""
    return json.dumps({"of": count, "shards": {str(s["shard"]): s["tasks"] for s in plan}},
                      separators=(",", ":"))


def parse_plan(text: str) -> tuple[int, dict[int, tuple[str, ...]]]:
    """(shard count, shard number -> its task ids); UserError naming --plan otherwise."""
    def bad(expected: str) -> UserError:
        return UserError(f"expected {expected}", field="--plan")

    if len(text) > MAX_PLAN_CHARS:
        raise bad(f"at most {MAX_PLAN_CHARS:,} characters")
    try:
        data = json.loads(text)
    except ValueError:
        raise bad('JSON like {"of": 2, "shards": {"1": ["task-001-a"]}} (the plan output)') \
            from None
    if not isinstance(data, dict) or not isinstance(data.get("of"), int) or data["of"] < 1 \
            or not isinstance(data.get("shards"), dict):
        raise bad('an object with "of" (a shard count) and "shards"')
    shards: dict[int, tuple[str, ...]] = {}
    for key, tasks in data["shards"].items():
        if not key.isdigit() or not 1 <= int(key) <= data["of"]:
            raise bad(f"shard numbers 1-{data['of']}, got {key!r}")
        if not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks):
            raise bad(f"a list of task ids for shard {key}")
        shards[int(key)] = tuple(tasks)
    return data["of"], shards


def missing_note(shard: int, count: int, tasks: int, link: str | None) -> str:
    where = f": {link}" if link else ""
    return (f"Shard {shard}/{count} uploaded no results (its job failed or was cancelled before "
            f"the upload): its {tasks} task(s) are inconclusive{where}")


def mark_missing(verdict: Verdict, count: int, planned: Mapping[int, tuple[str, ...]],
                 present: Collection[int], links: Mapping[int, str]) -> Verdict:
    """The verdict with every task of a planned shard not in `present` inconclusive and gated,
    a note per missing shard; unchanged when every shard is there."""
    missing = sorted(set(planned) - set(present))
    if not missing:
        return verdict
    by_task = {t.task: t for t in verdict.tasks}
    notes = list(verdict.notes)
    for shard in missing:
        notes.append(missing_note(shard, count, len(planned[shard]), links.get(shard)))
        why = f"shard {shard}/{count} uploaded no results"
        for task in planned[shard]:
            old = by_task.get(task) or TaskVerdict(task=task, status="inconclusive", gated=True)
            by_task[task] = dataclasses.replace(old, status="inconclusive", gated=True, note=why)
    tasks = tuple(by_task[t] for t in sorted(by_task))
    return dataclasses.replace(verdict, tasks=tasks, notes=tuple(notes))
