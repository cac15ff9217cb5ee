"""One `ci-eval generate` invocation at scale: candidates mined on N threads, a progress line
per candidate with an ETA, kept tasks moved from staging into DIR/tasks/ with the next free
number, duplicates dropped, and a journal (DIR/.ci-eval-generate/journal.jsonl, a line per
decided candidate, fsync'd) so that a run stopped by Ctrl-C or kill -9 resumes where it was:
a decided candidate is not mined again, a task already moved into place is recognised by its
key in metadata.json."""

from __future__ import annotations

import collections
import json
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval import strict_json
from ci_eval.generate import decide
from ci_eval.generate.candidate import Candidate
from ci_eval.generate.taskfolder import GENERATED_KEY
from ci_eval.progress import eta, format_seconds
from ci_eval.run.workspace.build import remove_tree
from ci_eval.tasks.model import TASK_DIR_RE, tasks_dir
from ci_eval.tasks.scaffold import next_number

STATE_DIR = ".ci-eval-generate"
JOURNAL = "journal.jsonl"
# Rejected before any test ran: not counted as candidates.
STATIC_REASONS = (decide.NO_TEST_CHANGE, decide.NO_SOURCE_CHANGE, decide.TOO_LARGE,
                  decide.UNSUPPORTED)


@dataclass
class Summary:
    repo: str
    mode: str
    scanned: int = 0
    candidates: int = 0
    kept: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    resumed: int = 0
    seconds: float = 0.0
    new_tasks: int = 0  # kept by this invocation (the pace counts only these)

    def to_json(self) -> dict:
        reasons = collections.Counter(r["reason"] for r in self.rejected)
        return {"repo": self.repo, "mode": self.mode, "scanned": self.scanned,
                "candidates": self.candidates, "valid_tasks": len(self.kept),
                "resumed": self.resumed, "seconds": round(self.seconds, 1),
                "tasks_per_minute": round(self.new_tasks / (self.seconds / 60), 2)
                if self.seconds else 0.0,
                "rejected": dict(sorted(reasons.items())), "tasks": self.kept,
                "rejections": self.rejected}


def state_dir(into: Path) -> Path:
    return Path(into) / STATE_DIR


def read_journal(into: Path) -> dict[str, dict]:
    path = state_dir(into) / JOURNAL
    entries = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = strict_json.loads(line)
            except ValueError:
                continue  # the line a kill cut short: that candidate is mined again
            if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                entries[entry["key"]] = entry
    return entries


def placed_tasks(into: Path) -> dict[str, str]:
    """key -> task id of the generated tasks already in DIR/tasks."""
    found = {}
    base = tasks_dir(into)
    for folder in sorted(base.iterdir()) if base.is_dir() else []:
        try:
            metadata = strict_json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
            key = metadata[GENERATED_KEY]["key"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        found[key] = folder.name
    return found


def _guarded(mine: Callable[[str], Candidate], key: str) -> Candidate:
    """One candidate's crash is that candidate's rejection (with the error), not the end of a
    long run; it is reported under its own reason, never hidden among the others."""
    try:
        return mine(key)
    except Exception as exc:  # noqa: BLE001 - reported as the candidate's reason
        return Candidate(key, decide.CRASHED, f"{type(exc).__name__}: {exc}"[:300])


class Session:
    def __init__(self, into: Path, summary: Summary, *, jobs: int, root: Path | None,
                 stream=None):
        self.into, self.summary, self.jobs, self.root = Path(into), summary, jobs, root
        self.stream = stream or sys.stderr
        self.journal = read_journal(self.into)
        path = state_dir(self.into) / JOURNAL
        if path.is_file() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            with open(path, "a", encoding="utf-8") as out:
                out.write("\n")  # end the line a kill cut short: the next one starts clean
        self.placed = placed_tasks(self.into)
        self.seen = {e["duplicate_key"]: e["key"] for e in self.journal.values()
                     if e.get("duplicate_key") and not e.get("reason")}

    def run(self, keys: list[str], mine: Callable[[str], Candidate]) -> Summary:
        started = time.monotonic()
        summary = self.summary
        summary.scanned = len(keys)
        todo = []
        for key in keys:
            if key in self.journal or key in self.placed:
                summary.resumed += 1
                self._count(self.journal.get(key) or {"key": key, "reason": "",
                                                      "task": self.placed[key]})
            else:
                todo.append(key)
        done = 0
        pool = ThreadPoolExecutor(max_workers=self.jobs)
        try:
            futures = {pool.submit(_guarded, mine, key): key for key in todo}
            for future in as_completed(futures):
                entry = self._place(future.result())
                self._count(entry)
                summary.new_tasks += not entry["reason"]
                done += 1
                self._progress(done, len(todo), time.monotonic() - started, entry)
        finally:
            # Ctrl-C: nothing new starts; the candidates running end with their suites
            pool.shutdown(wait=False, cancel_futures=True)
        summary.seconds = time.monotonic() - started
        return summary

    def _count(self, entry: dict) -> None:
        if entry.get("reason") not in STATIC_REASONS:
            self.summary.candidates += 1
        if entry.get("reason"):
            self.summary.rejected.append({k: entry[k] for k in ("key", "reason", "detail")
                                          if k in entry})
        else:
            self.summary.kept.append({"key": entry["key"], "task": entry.get("task", "")})

    def _place(self, found: Candidate) -> dict:
        entry = {"key": found.key, "reason": found.reason, "detail": found.detail}
        if found.kept and found.duplicate_key in self.seen:
            entry.update(reason=decide.DUPLICATE,
                         detail=f"same fix and tests as {self.seen[found.duplicate_key][:12]}")
        elif found.kept and found.staged is not None:  # a kept candidate is staged
            taken = [p.name for p in tasks_dir(self.root).iterdir()] if self.root and \
                tasks_dir(self.root).is_dir() else []
            number = next_number(self.into, also_taken=taken)
            target = tasks_dir(self.into) / f"task-{number:03d}-{found.name}"
            assert TASK_DIR_RE.match(target.name), target.name
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(found.staged, target)
            entry.update(task=target.name, duplicate_key=found.duplicate_key)
            self.seen[found.duplicate_key] = found.key
        if found.staged is not None:
            remove_tree(found.staged.parents[1])
        self._journal(entry)
        return entry

    def _journal(self, entry: dict) -> None:
        path = state_dir(self.into) / JOURNAL
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")
            out.flush()
            os.fsync(out.fileno())

    def _progress(self, done: int, total: int, elapsed: float, entry: dict) -> None:
        left = eta(done, total, elapsed)
        what = (f"kept as {entry['task']}" if not entry["reason"]
                else f"rejected: {entry['reason']}" + (f" ({entry['detail'][:120]})"
                                                      if entry.get("detail") else ""))
        print(f"ci-eval: [{done}/{total}] {entry['key'][:12]} {what}; "
              f"{len(self.summary.kept)} kept, elapsed {format_seconds(elapsed)}"
              + (f", ETA {format_seconds(left)}" if left is not None else ""),
              file=self.stream, flush=True)
