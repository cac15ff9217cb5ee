"""What results lines must hold: each line on its own (check_record, number_problem,
rubric_problem, bound_usage for what is about to be written) and a task's lines together
(RunChecks, check_runs), and one agent per folder or merge (one_agent). The one
implementation of results integrity: the reader, the streamed reader and the merge use it.

Reading checks every line (check_record): the required fields and their types, passed == (status
== "pass"), and the numbers when present: attempt, k and requested whole numbers >= 1; tokens,
input_tokens, output_tokens whole numbers 0-10**12 or null; cost_usd finite 0-10**6 and the
*_seconds finite 0-10**7, or null (NUMBER_LIMITS: no aggregate over records can overflow);
the rubric fields' types, and no pass with a rubric verdict of FAIL.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TypeGuard, get_args

from ci_eval.errors import UserError
from ci_eval.strict_json import NUMBER_LIMITS

RunStatus = Literal["pass", "fail", "timeout", "error"]
STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
REQUIRED_FIELDS = {"run": int, "task": str, "status": str, "passed": bool, "agent": str}
# Optional fields, checked when present: a whole number >= the minimum (k: the -k of the run;
# requested: the valid runs asked of the task, confirmation stages included).
COUNT_FIELDS = {"attempt": 1, "k": 1, "requested": 1}
# Optional, may be null (no usage reported / not measured).
OPTIONAL_COUNT_FIELDS = ("tokens", "input_tokens", "output_tokens", "cached_input_tokens",
                         "cache_write_tokens")
# What an agent's usage says: read from its usage file, summed over a run's attempts (every
# attempt's tokens were sent and paid for).
USAGE_FIELDS = (*OPTIONAL_COUNT_FIELDS, "cost_usd")
OPTIONAL_AMOUNT_FIELDS = ("cost_usd", "retried_cost_usd", "wall_seconds", "agent_seconds",
                          "checks_seconds")

_COUNTS = tuple(COUNT_FIELDS.items())
_AMOUNT_LIMITS = tuple((name, NUMBER_LIMITS["cost" if "cost" in name else "seconds"])
                       for name in OPTIONAL_AMOUNT_FIELDS)
RUBRIC_FIELDS = ("rubric_score", "rubric_verdict", "rubric_tripped", "rubric_auto_fail")
# Optional: the digest of the agent's harness the run used (agents/harness.py), sha256 hex.
HARNESS_FIELD = "harness"
HARNESS_DIGEST = re.compile(r"[0-9a-f]{64}")
# Optional `arm`: absent on the PR's runs; "control" on the control arm's (results/control_arm.py).
ARMS = ("pr", "control")


def _plainly_valid(record: object, task: str) -> TypeGuard[dict]:
    """check_record's yes, fast: the same rules without the messages, for a record without
    rubric fields (anything unusual goes the long way, which words the refusal)."""
    if type(record) is not dict:
        return False
    get = record.get
    for name in RUBRIC_FIELDS:
        if name in record:
            return False
    harness = get(HARNESS_FIELD)
    if harness is not None and not (type(harness) is str and HARNESS_DIGEST.fullmatch(harness)):
        return False
    if "arm" in record and get("arm") not in ARMS:
        return False
    status, run = get("status"), get("run")
    counts, tokens = NUMBER_LIMITS["count"], NUMBER_LIMITS["tokens"]
    if not (type(run) is int and 1 <= run <= counts and status in STATUSES
            and type(get("agent")) is str and record.get("task") == task
            and get("passed") is (status == "pass")):
        return False
    for name, minimum in _COUNTS:
        value = get(name, minimum)
        if not (type(value) is int and minimum <= value <= counts):
            return False
    for name in OPTIONAL_COUNT_FIELDS:
        value = get(name)
        if value is not None and not (type(value) is int and 0 <= value <= tokens):
            return False
    for name, limit in _AMOUNT_LIMITS:
        value = get(name)
        if value is not None and not ((type(value) is float or type(value) is int)
                                      and 0 <= value <= limit):  # NaN compares false
            return False
    return True


def check_record(record: object, path: Path, line_no: int, task: str | None = None) -> dict:
    """One parsed results line, checked: UserError naming `path:line_no` and the field.
    `task`: the file's task id (from its name), when the caller knows it already."""
    if _plainly_valid(record, task if task is not None else path.name[: -len(".jsonl")]):
        return record
    where = f"{path}:{line_no}"
    if not isinstance(record, dict):
        raise UserError("expected a JSON object per line", path=where)
    for name, kind in REQUIRED_FIELDS.items():
        if name not in record:
            raise UserError(f"missing field (expected {kind.__name__})", path=where, field=name)
        if not isinstance(record[name], kind) or (kind is int and isinstance(record[name], bool)):
            raise UserError(
                f"expected {kind.__name__}, got {_shown(record[name])}", path=where, field=name
            )
    if record["status"] not in STATUSES:
        raise UserError(
            f"expected one of {', '.join(STATUSES)}, got {record['status']!r}",
            path=where,
            field="status",
        )
    if record["passed"] != (record["status"] == "pass"):
        raise UserError(
            f"got {_shown(record['passed'])} with status {_shown(record['status'])} "
            '(expected passed true exactly when status is "pass")',
            path=where,
            field="passed",
        )
    if record["run"] < 1:
        raise UserError(f"expected a run number >= 1, got {record['run']}", path=where, field="run")
    if record["run"] > NUMBER_LIMITS["count"]:
        raise UserError(f"expected at most {NUMBER_LIMITS['count']} (a bound of ci-eval's), "
                        f"got {_shown(record['run'])}", path=where, field="run")
    for name in (*COUNT_FIELDS, *OPTIONAL_COUNT_FIELDS, *OPTIONAL_AMOUNT_FIELDS):
        problem = number_problem(name, record[name]) if name in record else None
        if problem:
            raise UserError(problem, path=where, field=name)
    rubric = rubric_problem(record)
    if rubric:
        raise UserError(rubric[1], path=where, field=rubric[0])
    harness = record.get(HARNESS_FIELD)
    if harness is not None and not (isinstance(harness, str) and HARNESS_DIGEST.fullmatch(harness)):
        raise UserError(f"expected a sha256 digest (64 hex digits) or null, got {_shown(harness)}",
                        path=where, field=HARNESS_FIELD)
    if "arm" in record and record["arm"] not in ARMS:
        raise UserError(f"expected one of {', '.join(ARMS)}, got {_shown(record['arm'])}",
                        path=where, field="arm")
    expected_task = path.name[: -len(".jsonl")]
    if record["task"] != expected_task:
        raise UserError(
            f"record of task {record['task']!r} in the file of {expected_task!r}",
            path=where,
            field="task",
        )
    return record


def number_problem(name: str, value: Any) -> str | None:
    """What is wrong with `value` as the optional numeric record field `name` ("expected ...,
    got ..."), or None when it is fine. The one rule for reading results and for what an agent
    reports as usage (tokens, input_tokens, output_tokens, cost_usd). Every number is bounded
    (NUMBER_LIMITS), so that no sum, mean or float conversion over records can overflow."""
    if name in COUNT_FIELDS:
        minimum, limit = COUNT_FIELDS[name], NUMBER_LIMITS["count"]
        if not (_is_int(value) and value >= minimum):
            return f"expected a whole number >= {minimum}, got {_shown(value)}"
    elif name in OPTIONAL_COUNT_FIELDS:
        if value is None:
            return None
        limit = NUMBER_LIMITS["tokens"]
        if not (_is_int(value) and value >= 0):
            return f"expected a whole number >= 0 or null, got {_shown(value)}"
    elif name in OPTIONAL_AMOUNT_FIELDS:
        if value is None:
            return None
        limit = dict(_AMOUNT_LIMITS)[name]
        if not _bounded_amount(value, math.inf):
            return f"expected a finite number >= 0 or null, got {_shown(value)}"
    else:
        raise KeyError(name)
    if value > limit:  # exact for ints of any size: no float conversion
        return f"expected at most {limit} (a bound of ci-eval's), got {_shown(value)}"
    return None


def _bounded_amount(value: object, limit: float) -> bool:
    if _is_int(value):
        return 0 <= value <= limit  # compared exactly: math.isfinite(10**400) overflows
    return isinstance(value, float) and math.isfinite(value) and 0 <= value <= limit


def bound_usage(record: dict) -> list[str]:
    """Set to null the numeric fields of a record about to be written that number_problem
    refuses (a sum of attempts or models beyond the limits, a preset's reading out of range),
    so that the line can always be read back; notes on what was dropped."""
    notes = []
    for name in (*OPTIONAL_COUNT_FIELDS, *OPTIONAL_AMOUNT_FIELDS):
        if name in record and number_problem(name, record[name]):
            notes.append(f"{name} out of range ({_shown(record[name])[:40]}): recorded as null")
            record[name] = None
    return notes


RUBRIC_VERDICTS = ("PASS", "FAIL")


def rubric_problem(record: dict) -> tuple[str, str] | None:
    """(field, what is wrong) with a record's rubric fields, or None."""
    if "rubric_score" in record:
        value = record["rubric_score"]
        if not ((_is_int(value) or isinstance(value, float)) and math.isfinite(value)
                and 0 <= value <= 100):
            return "rubric_score", f"expected a number 0-100, got {_shown(value)}"
    if "rubric_verdict" in record:
        if record["rubric_verdict"] not in RUBRIC_VERDICTS:
            got = _shown(record["rubric_verdict"])
            return "rubric_verdict", f"expected PASS or FAIL, got {got}"
        if record["rubric_verdict"] == "FAIL" and record["status"] == "pass":
            return "status", ('"pass" with rubric_verdict FAIL (a run with a rubric passes only '
                              "when the rubric does)")
    for name in ("rubric_tripped", "rubric_auto_fail"):
        if name in record:
            value = record[name]
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                return name, f"expected a list of criterion ids, got {_shown(value)}"
    return None


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: object) -> str:
    """A value as JSON for messages ("abc" in quotes, NaN, null), cut short."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


class RunChecks:
    """The records of one task, a record at a time: each run once, one agent, and no run number
    beyond what the task was asked. Runs are numbered 1..k, plus confirmation runs up to
    `requested`, plus one more number per errored run (an errored run keeps its number and is
    not counted as valid). Results without k or requested (older versions) are bounded by their
    count. The first problem is raised by finish(), after every line was read."""

    def __init__(self, path: object):
        self.path = path
        self.first_line_of: dict[int, int] = {}
        self.first: tuple[str, int] | None = None  # (agent, line) of the first record
        self.problem: UserError | None = None  # the first run twice / other agent
        self.asked = 0
        self.errors = 0

    def add(self, record: dict, line: int) -> None:
        earlier = self.first_line_of.setdefault(record["run"], line)
        if self.first is None:
            self.first = (record["agent"], line)
        if self.problem is None:
            where = f"{self.path}:{line}"
            if earlier != line:
                self.problem = UserError(f"run {record['run']} recorded twice (also at line "
                                         f"{earlier}); each run is recorded once", path=where,
                                         field="run")
            elif record["agent"] != self.first[0]:
                self.problem = UserError(f"agent {record['agent']!r}, but line {self.first[1]} "
                                         f"has {self.first[0]!r}; a results file holds one "
                                         "agent's runs", path=where, field="agent")
        requested, k = record.get("requested"), record.get("k")  # whole numbers, or absent
        if requested is not None and requested > self.asked:
            self.asked = requested
        if k is not None and k > self.asked:
            self.asked = k
        if record["status"] == "error":
            self.errors += 1

    def finish(self) -> None:
        if self.problem is not None:
            raise self.problem
        limit = self.asked + self.errors if self.asked else len(self.first_line_of)
        for run, line in self.first_line_of.items():
            if run > limit:
                raise UserError(f"run {run} is beyond the runs asked of the task "
                                f"({limit}: k or requested, plus errored runs)",
                                path=f"{self.path}:{line}", field="run")


def check_runs(records: list[dict], lines: list[int], path: object) -> None:
    """The records of one task, together (see RunChecks): each run once, one agent, and no run
    number beyond what the task was asked."""
    checks = RunChecks(path)
    for record, line in zip(records, lines):
        checks.add(record, line)
    checks.finish()


def one_agent(firsts: Iterable[tuple[str, object, int]]) -> str | None:
    """The one agent of a results folder (or of merged shards) from each file's (agent, path,
    line of its first record), consumed lazily; None when there are none. A second agent is bad
    input naming file:line, raised as soon as it is seen."""
    first = None
    for agent, path, line in firsts:
        if first is None:
            first = (agent, f"{path}:{line}")
        elif agent != first[0]:
            raise UserError(f"results mix agents ({first[0]!r} at {first[1]}, {agent!r} here); "
                            "compare one agent's results", path=f"{path}:{line}", field="agent")
    return first[0] if first else None
