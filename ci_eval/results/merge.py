"""Merge the results folders of shards into one: every line validated, nothing counted twice.

    merged = merge_folders([Path("shards/shard-1"), Path("shards/shard-2")])
    write_merged(merged, Path("results"))       # atomic: the folder appears whole or not at all

Each file is read with stream.RecordReader (which refuses a bad line, a run recorded twice, a run
beyond what was asked or another agent within the file, naming file:line). The records of a task
are then pooled across folders and checked again with records.check_runs, so the same (task, run)
arriving from two shards -- identical or not -- is refused naming both file:line, as is a pooled
run number beyond what was asked. One agent across every task too (records.one_agent).

Memory stays flat in the size of the records: merge_folders keeps what check_runs reads of each
record (run, agent, status, requested, k; the diffs are skipped over unparsed), and
`merged.records[task]` reads that task's files again, whole, and checks them again, when
write_merged writes it: one task's records in memory at a time.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.output import write_atomic
from ci_eval.results import records, store, stream
from ci_eval.results.control_arm import control_dir


class Location(int):
    """A pooled line: an int (what check_runs compares) that prints as FILE:LINE."""

    where: str

    def __new__(cls, index: int, where: str) -> Location:
        value = super().__new__(cls, index)
        value.where = where
        return value

    def __str__(self) -> str:
        return self.where

    def __format__(self, spec: str) -> str:
        return self.where


class _Pooled:
    """What check_runs prints before ':' + the location: the locations name their files."""

    def __format__(self, spec: str) -> str:
        return "merged shards"

    def __str__(self) -> str:
        return "merged shards"


class _TaskRecords(Mapping):
    """task id -> its records from every shard, sorted by run: read from the files (and their
    pooled runs checked again) when asked, so one task's records are in memory at a time."""

    def __init__(self, files: dict[str, list[Path]]):
        self._files = files

    def __getitem__(self, task: str) -> list[dict]:
        entries = [(record, path, line) for path in self._files[task]
                   for record, line in zip(*_read(path))]
        _check_pooled(entries)
        return sorted((record for record, _, _ in entries), key=lambda r: r["run"])

    def __iter__(self):
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def _read(path: Path) -> tuple[list[dict], list[int]]:
    found = store.read_file(path)
    return found.records, found.lines


@dataclass(frozen=True)
class Merged:
    records: Mapping[str, list[dict]]  # task id -> records sorted by run (read when asked)
    sources: dict[str, list[str]]  # task id -> the files they came from
    folders: int
    runs: int = 0  # records in all


_CHECKED = ("run", "agent", "status", "requested", "k")  # what check_runs reads of a record


def merge_folders(folders: Iterable[Path]) -> Merged:
    folders = [Path(f) for f in folders]
    if not folders:
        raise UserError("no shard results folders to merge", field="DIR")
    pooled: dict[str, list[tuple[dict, Path, int]]] = {}
    for folder in folders:
        if not folder.is_dir():
            raise UserError("is not a folder of results", path=folder, field="DIR")
        for path in sorted(folder.glob("*.jsonl")):
            task = path.name[: -len(".jsonl")]
            for line, record in stream.RecordReader(path, keep_diff=False):
                light = {name: record[name] for name in _CHECKED if name in record}
                pooled.setdefault(task, []).append((light, path, line))
    files, sources, runs = {}, {}, 0
    firsts = []
    for task in sorted(pooled):
        entries = pooled.pop(task)
        _check_pooled(entries)
        firsts.append((entries[0][0]["agent"], entries[0][1], entries[0][2]))
        files[task] = list(dict.fromkeys(path for _, path, _ in entries))
        sources[task] = sorted({str(path) for path in files[task]})
        runs += len(entries)
    records.one_agent(firsts)
    return Merged(_TaskRecords(files), sources, len(folders), runs)


def _check_pooled(entries: list[tuple[dict, Path, int]]) -> None:
    """records.check_runs over one task's records from every shard, naming FILE:LINE."""
    lines: list[int] = [Location(i + 1, f"{path}:{line}")
                        for i, (_, path, line) in enumerate(entries)]
    records.check_runs([record for record, _, _ in entries], lines, _Pooled())


def write_merged(merged: Merged, out: Path) -> None:
    """Write one <task>.jsonl per task into `out`, which must not exist or be empty: built in a
    temp folder beside it and renamed into place, so a failure leaves nothing behind."""
    import json

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError("is a file (expected a folder for the merged results)", path=out,
                        field="--out")
    if out.is_dir() and any(out.iterdir()):
        raise UserError("is not empty (merge writes a new results folder; remove it or choose "
                        "another --out)", path=out, field="--out")
    parent = out.parent
    if not parent.is_dir():
        raise UserError("folder does not exist", path=parent, field="--out")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        for task, records in merged.records.items():
            text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n"
                           for r in records)
            write_atomic(store.results_path(tmp, task), text, field="--out")
        os.chmod(tmp, 0o755)
        if out.is_dir():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


MERGED_FOLDER = "merged"
SHARD_GLOB = "shard-*"


def merge_shard_folders(results_dir: Path) -> tuple[Path, int]:
    """RESULTS/shard-*/ (the downloaded `results-shard-N` artifacts) merged into RESULTS/merged/
    (replacing an earlier merge): (the folder to compare, how many shard folders). Without
    shard folders, RESULTS itself."""
    shard_dirs = sorted(p for p in results_dir.glob(SHARD_GLOB) if p.is_dir())
    if not shard_dirs:
        return results_dir, 0
    merged = merge_folders(shard_dirs)
    out = results_dir / MERGED_FOLDER
    if out.is_dir():
        shutil.rmtree(out)
    write_merged(merged, out)
    merge_controls(shard_dirs, out)
    return out, len(shard_dirs)


def merge_controls(folders: Iterable[Path], out: Path) -> int:
    """Each folder's control arm (`run --control-ref`: FOLDER/control/) pooled into
    OUT/control/ the same way; returns how many control runs (0: none, nothing written)."""
    controls = [control_dir(f) for f in folders if control_dir(f).is_dir()]
    if not controls:
        return 0
    merged = merge_folders(controls)
    write_merged(merged, control_dir(out))
    return merged.runs
