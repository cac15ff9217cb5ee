"""results/<task-id>.jsonl: one JSON object per run, appended and flushed as each run finishes.

Record fields (one line per (task, run); retries of infrastructure errors happen inside a run and
are listed in `retried_errors`):
  run, task, status (pass|fail|timeout|error), passed, agent, attempt, k, requested, reason,
  tokens, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_usd
  (null when the agent reported no usage; summed over every attempt of the run), cost_source
  ("agent" | "pricing"), retried_cost_usd (what the earlier attempts cost), agent_exit_code,
  agent_outcome (the tool's own outcome: subtype, turns...), wall_seconds, agent_seconds,
  checks_seconds, timestamp (UTC ISO 8601), prompt_hash, diff (the agent's change, capped),
  diff_truncated, retried_errors, retry_delays_seconds, isolation; for a task with rubric.yaml
  rubric_score (0-100, one decimal), rubric_verdict (PASS|FAIL), rubric_tripped (the automated
  criteria that failed) and rubric_auto_fail (the auto-fail gates among them). The agent's
  output is in logs/<task>/<run>.log beside the records.

What a line must hold, and a task's lines together: results/records.py.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.output import masked, write_atomic
from ci_eval.results.records import check_record, check_runs

LOCK_FILE = ".ci-eval.lock"


@contextlib.contextmanager
def results_lock(results_dir: Path, *, field: str = "--out"):
    """Hold the results folder for this invocation: a second `ci-eval run` on the same folder
    (or a --resume while one runs) is refused at once, naming the holder's pid. The lock is an
    flock on LOCK_FILE, released by the kernel when the holder dies, so a crash leaves none."""
    path = Path(results_dir) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise UserError(f"cannot create the lock file ({exc.strerror or exc})", path=path,
                        field=field) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise UserError(f"in use by another ci-eval run (pid {holder}); wait for it to "
                            "finish or use another --out", path=results_dir, field=field) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def results_path(results_dir: Path, task_id: str) -> Path:
    return Path(results_dir) / f"{task_id}.jsonl"


def append_record(path: Path, record: dict) -> None:
    """Append one line and flush it, so a killed run loses at most the line in flight. A write
    that fails (disk full) is undone, so the file never ends in a partial line, and is a
    UserError naming the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(masked(record), sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644)
    except OSError as exc:
        raise UserError(f"cannot record run {record.get('run')} ({exc.strerror or exc})",
                        path=path) from None
    try:
        size = os.fstat(fd).st_size
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
        except OSError as exc:
            os.ftruncate(fd, size)
            raise UserError(f"cannot record run {record.get('run')} ({exc.strerror or exc}); "
                            "the file is as it was before this run", path=path) from None
    finally:
        os.close(fd)


@dataclass(frozen=True)
class ResultsFile:
    """One results file as read: its records (one per run, in file order) and, when a torn last
    line was allowed, where it starts."""

    path: Path
    records: list[dict]
    lines: list[int]  # the line number of each record
    torn_line: int | None = None  # a torn last line (only with allow_torn_tail)


def read_file(path: Path, *, allow_torn_tail: bool = False) -> ResultsFile:
    """Parse and check one results file; never writes. UserError naming `path:line` for a line
    that is not a valid record, a run recorded twice, a run number beyond what the task was asked
    (see check_runs), or a line of another agent than the file's first. A torn last line (a crash
    mid-write) is bad input too, unless allow_torn_tail (resuming): then it is reported in
    `torn_line` and `drop_torn_tail` removes it once the resume really starts."""
    path = Path(path)
    if path.is_dir():
        raise UserError("is a folder (expected a file of JSON lines, one per run)", path=path)
    records, numbers = [], []
    torn = None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            pending = None  # (line number, text) of the last non-blank line not yet parsed
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                if pending is not None:
                    records.append(_parse_line(pending[1], path, pending[0], last=False))
                    numbers.append(pending[0])
                pending = (number, line)
    except OSError as exc:
        raise UserError(f"cannot read ({exc.strerror or exc})", path=path) from None
    if pending is not None:
        try:
            records.append(_parse_line(pending[1], path, pending[0], last=True))
            numbers.append(pending[0])
        except _TornLine:
            if not allow_torn_tail:
                raise UserError("torn last line (a crash mid-write; rerun with --resume to drop "
                                "it)", path=f"{path}:{pending[0]}") from None
            torn = pending[0]
    check_runs(records, numbers, path)
    return ResultsFile(path, records, numbers, torn)


def read_records(path: Path) -> list[dict]:
    """The checked records of one results file (see read_file), in file order."""
    return read_file(path).records


def drop_torn_tail(results_file: ResultsFile) -> None:
    """Rewrite the file without its torn last line, atomically, with a warning: only when a
    resume really starts (every refusal checked first)."""
    if results_file.torn_line is None:
        return
    path = results_file.path
    with open(path, encoding="utf-8", errors="replace") as handle:
        kept = [line.rstrip("\n") for number, line in enumerate(handle, start=1)
                if number < results_file.torn_line]
    truncate_to_lines(path, kept)
    print(f"ci-eval: warning: {path}:{results_file.torn_line}: dropped a torn last line",
          file=sys.stderr)


class _TornLine(Exception):
    pass


def _parse_line(line: str, path: Path, number: int, *, last: bool) -> dict:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # not JSON; an int of 5000 digits; [[[[...
        if last:
            raise _TornLine() from None
        raise UserError("line is not valid JSON (only a torn last line can be dropped by "
                        "--resume; fix or delete this line, or start over with --fresh)",
                        path=f"{path}:{number}") from None
    return check_record(record, path, number)


def truncate_to_lines(path: Path, lines: list[str]) -> None:
    """Rewrite `path` as the given lines (blank ones dropped), atomically."""
    write_atomic(path, "".join(line + "\n" for line in lines if line.strip()), field=None)
