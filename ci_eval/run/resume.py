"""What an earlier invocation recorded in --out, read for --resume (and for a run that continues
the runs already there): each task's results file checked, and refused when it was made by
another agent or with another prompt.md."""

from __future__ import annotations

from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.results import store as results_mod
from ci_eval.tasks.model import Task, other_prompts, short_hash


def read_recorded(tasks: list[Task], out_dir: Path, *,
                  allow_torn_tail: bool = False) -> dict[str, results_mod.ResultsFile]:
    """The results files of the tasks that have one, read and checked; nothing is written."""
    found = {}
    for task in tasks:
        path = results_mod.results_path(out_dir, task.id)
        if path.exists() or path.is_symlink():
            found[task.id] = results_mod.read_file(path, allow_torn_tail=allow_torn_tail)
    return found


def check_resumable(tasks: list[Task], recorded: dict[str, results_mod.ResultsFile],
                    agent: str) -> None:
    """UserError when recorded runs of a task were made by another agent or with another prompt:
    resuming would pool them with this run's into one pass rate."""
    for task in tasks:
        if task.id not in recorded:
            continue
        path = recorded[task.id].path
        for record in recorded[task.id].records:
            if record["agent"] != agent:
                raise UserError(
                    f"run {record['run']} was recorded with agent {record['agent']!r}, this run "
                    f"uses {agent!r}; --resume would mix them (use --fresh or another --out)",
                    path=path, field="agent")
            other = other_prompts([record.get("prompt_hash")], task.prompt_hash)
            if other:
                raise UserError(
                    f"run {record['run']} was recorded with another prompt.md "
                    f"({short_hash(other[0])}, now {short_hash(task.prompt_hash)}); --resume would mix "
                    "them (use --fresh or another --out)", path=path, field="prompt_hash")


def leftover_results(out_dir: Path, running: set[str], task_ids: set[str],
                     agent: str) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The results files in out_dir of tasks this invocation does not run: (those of tasks that
    tasks/ no longer holds, those (with their agent) of another agent than this run's). Either
    would make `report` and `compare` refuse the folder later ("results mix agents"), so `run`
    settles them before the first run."""
    removed: list = []
    foreign: list = []
    if not out_dir.is_dir():
        return removed, foreign
    for path in sorted(out_dir.glob("*.jsonl")):
        task = path.name[: -len(".jsonl")]
        if task in running or path.is_symlink() or not path.is_file():
            continue
        if task not in task_ids:
            removed.append(path)
            continue
        records = results_mod.read_file(path, allow_torn_tail=True).records
        if records and records[0]["agent"] != agent:
            foreign.append((path, records[0]["agent"]))
    return removed, foreign
