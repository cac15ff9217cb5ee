"""Results read a line at a time, for what needs their numbers but not their records.

    for line, record in RecordReader(path, keep_diff=False):   # checked as read_file checks
        ...
    runs = load_runs(results_dir)        # task id -> summary.TaskRows, no diff held

report, compare, baseline update, history record and the gate's history summarize through
load_runs; merge checks shards through RecordReader. Memory holds one chunk of a file and a small
row per run, so 1,000 tasks x 100 runs fit in a few tens of MB whatever the diffs' sizes
(bench/scale.py).

What is accepted, and the refusal given (the same words, the same file:line, in the same order),
is what store.read_file gives, but for the diff's own text (below): lines split as Python's text mode splits them
(\\n, \\r\\n or \\r), blank lines skipped, a line that is not JSON refused unless it is the last
(a torn tail: refused, or reported in `torn_line` with allow_torn_tail), each record checked by
records.check_record as it is read, and once the file is read the checks of records.check_runs (a run
recorded twice, another agent than the first line's, a run beyond what was asked).

keep_diff=False: the `diff` text of a line in the layout `ci-eval run` writes (sorted keys, so
`"diff": "...", "diff_truncated": `) is skipped over without being decoded, after checking that
it hides no other field (see _DIFF_START: its text is not parsed); any other line is parsed
whole. Records come with "diff": None.
"""

from __future__ import annotations

import json
import json.scanner
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.results import parallel
from ci_eval.results.records import RunChecks, check_record, one_agent
from ci_eval.results.summary import TaskRows


class RecordReader:
    """The checked records of one results file, one at a time: `for line, record in reader`.
    Raises what store.read_file raises, in the same order (see the module docstring); the
    records it yielded before a refusal are not to be used."""

    def __init__(self, path: Path, *, allow_torn_tail: bool = False, keep_diff: bool = True):
        self.path = Path(path)
        self.allow_torn_tail = allow_torn_tail
        self.keep_diff = keep_diff
        self.task = self.path.name[: -len(".jsonl")]
        self.torn_line: int | None = None
        self.first: tuple[str, int] | None = None  # (agent, line) of the first record

    def __iter__(self):
        path = self.path
        if path.is_dir():
            raise UserError("is a folder (expected a file of JSON lines, one per run)", path=path)
        runs = RunChecks(path)
        not_json = None  # a line that is not JSON: an error, unless it is the (torn) last one
        try:
            with open(path, "rb") as handle:
                for number, data, start, end in _lines(handle):
                    if data[start:start + 1] != b"{" and not _text(data, start, end).strip():
                        continue  # blank
                    if not_json is not None:
                        raise UserError("line is not valid JSON (only a torn last line can be "
                                        "dropped by --resume; fix or delete this line, or start "
                                        "over with --fresh)", path=f"{path}:{not_json}")
                    record = self._record(data, start, end, number)
                    if record is None:
                        not_json = number
                        continue
                    runs.add(record, number)
                    yield number, record
        except OSError as exc:
            raise UserError(f"cannot read ({exc.strerror or exc})", path=path) from None
        if not_json is not None:
            if not self.allow_torn_tail:
                raise UserError("torn last line (a crash mid-write; rerun with --resume to drop "
                                "it)", path=f"{path}:{not_json}")
            self.torn_line = not_json
        runs.finish()
        self.first = runs.first

    def _record(self, data: bytes, start: int, end: int, number: int) -> dict | None:
        """The checked record of the line data[start:end]; None when it is not JSON."""
        if not self.keep_diff:
            cut = data.find(_DIFF_START, start, end)
            text = cut + len(_DIFF_START)
            after = data.find(_DIFF_END, text - 1, end) if cut >= 0 else -1
            if (after >= text and data[after - 1] != 92  # 92: a backslash
                    and data.count(b'"', text, after) == data.count(b'\\"', text, after)):
                record = _scanned(_text(data, start, cut) + '"diff": null'
                                  + _text(data, after + 1, end))
                if record is not None:
                    return check_record(record, self.path, number, self.task)
        try:  # not JSON: an int of 5000 digits; [[[[...
            record = json.loads(_text(data, start, end))
        except (ValueError, RecursionError):
            return None
        record = check_record(record, self.path, number, self.task)
        if not self.keep_diff:
            record["diff"] = None
        return record


def _text(data: bytes, start: int, end: int) -> str:
    return data[start:end].decode("utf-8", errors="replace")


CHUNK_BYTES = 1024 * 1024


def _lines(handle):
    """(line number, data, start, end) for each line of a binary file, the line being
    data[start:end] without its end: split where text mode splits (\\n, \\r\\n, \\r). Read in
    chunks; a line is not copied."""
    rest = b""
    number = 0
    while True:
        chunk = handle.read(CHUNK_BYTES)
        data = rest + chunk if rest else chunk
        last = not chunk
        position = 0
        while position < len(data):
            newline = data.find(b"\n", position)
            if newline < 0:
                if not last:
                    break
                newline = len(data)
            for start, end in _split_cr(data, position, newline):
                number += 1
                yield number, data, start, end
            position = newline + 1
        if last:
            return
        rest = data[position:]


def _split_cr(data: bytes, start: int, end: int):
    """The lines of data[start:end] (which holds no \\n): split at each \\r, a \\r at the end
    being the \\r of a \\r\\n (or the end of the file's last line)."""
    cr = data.find(b"\r", start, end)
    if cr < 0:
        return ((start, end),)
    lines = []
    while cr >= 0:
        lines.append((start, cr))
        start = cr + 1
        cr = data.find(b"\r", start, end)
    if start < end:
        lines.append((start, end))
    return lines


# A line as `ci-eval run` writes it has sorted keys: `"diff": "...", "diff_truncated": `. The
# text between the two markers is skipped over, not parsed, once it is known to hide no field:
# a field's key opens with a quote after a comma or white space, while inside a JSON string
# every quote is escaped; so when every quote there follows a backslash (and the closing quote
# does not), the cut removes the diff's text and nothing else. That text is not checked to be
# well-formed JSON (json.loads would refuse a raw control character or a bad escape in it, so
# read_file refuses such a line); these commands do not read it. Were the start marker a nested
# key (in agent_outcome), the cut would leave a brace unclosed and the line is parsed whole.
_DIFF_START = b'"diff": "'
_DIFF_END = b'", "diff_truncated": '
# typeshed types make_scanner's argument as the scanner class itself; it takes the decoder
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def _scanned(text: str) -> dict | None:
    """The JSON object that is exactly `text` (as json.loads reads it), else None."""
    try:
        record, end = _SCAN(text, 0)
    except (StopIteration, ValueError, RecursionError):
        return None
    if end != len(text) and text[end:].strip(" \t\r\n"):
        return None
    return record if type(record) is dict else None


def load_runs(results_dir: Path, *, processes: int | None = None) -> dict[str, TaskRows]:
    """task id -> TaskRows (what the summaries need: no diff, no output) for every *.jsonl in
    results_dir, read a line at a time and refused as store.read_file refuses them, all of one
    agent (records.one_agent). Memory
    grows with the number of runs by a small row each, not with their records. Large folders
    are read on every core (results/parallel.py); `processes` overrides that choice."""
    base = Path(results_dir)
    if not base.is_dir():
        raise UserError("results folder not found (expected the --out of `ci-eval run`)", path=base)
    paths = sorted(base.glob("*.jsonl"))
    if processes is None:
        processes = parallel.processes_worth(sum(_size(path) for path in paths), len(paths),
                                             parallel.usable_cores())
    results = {}
    read = parallel.ordered_map(_task_runs, paths, processes)

    def first_records():  # consumed as the files are read: a second agent stops the reading
        for path, (task, runs, first) in zip(paths, read):
            results[task] = runs
            if first is not None:
                yield first[0], path, first[1]

    try:
        one_agent(first_records())
    finally:
        read.close()  # a refusal stops the readers now
    return results


def agent_of(loaded: dict[str, TaskRows]) -> str | None:
    """The one agent of what load_runs gave (it refuses a folder of two); None: no runs."""
    return next((agent for runs in loaded.values() for agent in sorted(runs.agents)), None)


def _task_runs(path: Path) -> tuple[str, TaskRows, tuple[str, int] | None]:
    """(task id, its TaskRows, (agent, line) of its first record) of one results file."""
    reader = RecordReader(path, keep_diff=False)
    runs = TaskRows(reader.task)
    texts: dict[str, str] = {}  # one copy of each distinct reason text of the file
    for _, record in reader:
        runs.add(record, texts)
    return reader.task, runs, reader.first


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # the read says why


def require_runs(results_dir: Path) -> dict[str, TaskRows]:
    """load_runs, refusing a folder that holds no results at all (--results)."""
    loaded = load_runs(results_dir)
    if not loaded:
        raise UserError("no *.jsonl results in the folder", path=results_dir, field="--results")
    return loaded
