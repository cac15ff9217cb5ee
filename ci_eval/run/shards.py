"""Shard assignment (pure): which tasks each of N parallel jobs runs.

    costs = expected_costs(task_ids, {task: avg_wall_seconds}, runs=5)
    shards = assign(costs, 4)          # [Shard(index=1, tasks=(...), seconds=...), ...]
    mine = shard_tasks(costs, 2, 4)    # the task ids of shard 2 of 4

The rule: a task's cost is its baseline `avg_wall_seconds` x the runs it will get; a task with
no recorded duration costs the median of the known ones (1 when nothing is known, so the tasks
spread evenly). Tasks go longest-first, each to the shard with the least work so far (LPT: within
4/3 of the best possible makespan, and much closer on many small tasks); ties go to the lower
task id and the lower shard number, so every job that computes the plan from the same tasks and
baseline gets the same answer. GitHub runs at most 256 jobs from one matrix, hence MAX_SHARDS.
"""

from __future__ import annotations

import heapq
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ci_eval.errors import UserError

MAX_SHARDS = 256  # a matrix may generate at most 256 jobs per workflow run
UNKNOWN_COST = 1.0  # every task's cost when no task has a recorded duration


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as `--shard I/N` takes it
    tasks: tuple[str, ...]  # in the order they were assigned (longest first)
    seconds: float  # the sum of the tasks' expected costs

    def to_json(self) -> dict:
        return {"shard": self.index, "tasks": list(self.tasks), "seconds": round(self.seconds, 1)}


def check_count(count: int, *, field: str = "--shards") -> int:
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_SHARDS:
        raise UserError(f"expected a number of shards from 1 to {MAX_SHARDS} (GitHub runs at "
                        f"most {MAX_SHARDS} jobs from one matrix), got {count!r}", field=field)
    return count


def parse_shard(text: str, *, field: str = "--shard") -> tuple[int, int]:
    """"I/N" -> (I, N) with 1 <= I <= N <= MAX_SHARDS; UserError naming `field` otherwise."""
    index_text, sep, count_text = str(text).partition("/")
    index = count = None
    try:
        index, count = int(index_text), int(count_text)
    except ValueError:
        pass
    if not sep or index is None or count is None:
        raise UserError(f"expected I/N (shard I of N, e.g. 2/4), got {text!r}", field=field)
    check_count(count, field=field)
    if not 1 <= index <= count:
        raise UserError(f"expected a shard number from 1 to {count}, got {index}", field=field)
    return index, count


def expected_costs(task_ids: Iterable[str], wall_seconds: Mapping[str, float | None], *,
                   runs: int = 1) -> dict[str, float]:
    """task id -> expected seconds (recorded avg wall seconds x runs); unknown -> the median."""
    ids = list(task_ids)
    recorded = {t: wall_seconds.get(t) for t in ids}
    known = {t: float(wall) * runs for t, wall in recorded.items()
             if wall is not None and float(wall) >= 0}
    fallback = statistics.median(known.values()) if known else UNKNOWN_COST
    return {t: known.get(t, fallback) for t in ids}


def assign(costs: Mapping[str, float], count: int) -> list[Shard]:
    """`count` shards (some empty when there are fewer tasks than shards), deterministic."""
    check_count(count)
    order = sorted(costs, key=lambda t: (-costs[t], t))
    heap = [(0.0, index) for index in range(1, count + 1)]  # (load, shard index)
    members: dict[int, list[str]] = {index: [] for index in range(1, count + 1)}
    for task in order:
        load, index = heapq.heappop(heap)
        members[index].append(task)
        heapq.heappush(heap, (load + costs[task], index))
    return [Shard(index, tuple(members[index]), sum(costs[t] for t in members[index]))
            for index in range(1, count + 1)]


def shard_count_for(task_count: int, requested: int) -> int:
    """The shards worth starting: no more than there are tasks (an empty job is pure overhead)."""
    check_count(requested)
    return max(1, min(requested, task_count))


def shard_tasks(costs: Mapping[str, float], index: int, count: int) -> tuple[str, ...]:
    """The task ids of shard `index` of `count`."""
    return assign(costs, count)[index - 1].tasks


def makespan(shards: Iterable[Shard]) -> float:
    return max((s.seconds for s in shards), default=0.0)


def select_shard(task_ids: list[str], wall_seconds: Mapping[str, float | None], shard: str, *,
                 runs: int) -> tuple[str, ...]:
    """The task ids of `--shard I/N`, in the shard's order (what `ci-eval run --shard` runs):
    the same assignment `ci-eval plan` printed."""
    index, count = parse_shard(shard)
    chosen = shard_tasks(expected_costs(task_ids, wall_seconds, runs=runs), index, count)
    if not chosen:
        raise UserError(f"shard {index}/{count} holds no tasks ({len(task_ids)} task(s) over "
                        f"{count} shards; `ci-eval plan --shards {count}` plans only "
                        f"{shard_count_for(len(task_ids), count)})", field="--shard")
    return chosen


def build_plan(task_ids: list[str], wall_seconds: Mapping[str, float | None], requested: int,
               runs: int) -> dict:
    """`ci-eval plan --json`: the matrix for the next job and each shard's tasks and seconds."""
    count = shard_count_for(len(task_ids), requested)
    costs = expected_costs(task_ids, wall_seconds, runs=runs)
    planned = assign(costs, count)
    return {
        "durations_known": sum(1 for t in task_ids if wall_seconds.get(t) is not None),
        "shards": count,
        "requested_shards": requested,
        "runs": runs,
        "skip": False,
        "matrix": {"include": [{"shard": s.index, "of": count} for s in planned]},
        "plan": [s.to_json() for s in planned],
        "makespan_seconds": round(makespan(planned), 1),
        "total_seconds": round(sum(s.seconds for s in planned), 1),
    }
