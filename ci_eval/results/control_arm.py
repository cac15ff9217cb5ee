"""The control arm's results (`ci-eval run --control-ref REF`): RESULTS/control/<task>.jsonl,
results lines like the PR's, every one marked `"arm": "control"` (records.ARMS). They sit in a
folder of their own inside the results folder, so that the PR's files stay one agent's runs
(the control arm runs the base branch's agent) and every reader of RESULTS/*.jsonl sees the PR
arm only; `compare` reads this folder beside it (verdict/assemble.py)."""

from __future__ import annotations

import json
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.results import store
from ci_eval.results.summary import count_runs

CONTROL_FOLDER = "control"
CONTROL_ARM = "control"


def control_dir(results_dir: Path) -> Path:
    return Path(results_dir) / CONTROL_FOLDER


def mark(record: dict) -> dict:
    """A control run's record, marked as such before it is written."""
    record["arm"] = CONTROL_ARM
    return record


def check_marked(records: list[dict], lines: list[int], path: Path) -> None:
    """Every line of a control file says `"arm": "control"`: a PR results file copied into the
    folder is refused, not counted as main's runs."""
    for record, line in zip(records, lines):
        if record.get("arm") != CONTROL_ARM:
            raise UserError(f'expected "control" in a file of {CONTROL_FOLDER}/ (the control '
                            f"arm's runs), got {json.dumps(record.get('arm'))[:60]}",
                            path=f"{path}:{line}", field="arm")


def load_control(results_dir: Path) -> dict[str, tuple[int, int]]:
    """task -> (passes, valid runs) of the control arm; {} when there is no control folder.
    Every file is read and checked as `report` checks the PR's (store.read_file)."""
    folder = control_dir(results_dir)
    if not folder.is_dir():
        return {}
    found = {}
    for path in sorted(folder.glob("*.jsonl")):
        read = store.read_file(path)
        check_marked(read.records, read.lines, path)
        counts = count_runs(read.records)
        found[path.name[: -len(".jsonl")]] = (counts.passes, counts.valid)
    return found
