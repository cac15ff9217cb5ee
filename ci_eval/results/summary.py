"""Per-task summary of run records (pure): the numbers every report and the gate start from.

How many valid runs a task was asked for (fewer = inconclusive), in this order:
  1. an explicit k (the -k of report, compare, baseline update): max(k, recorded runs);
  2. what its records say: the largest `requested` (k, or the confirmation stage the run was part
     of) or `k` recorded with its runs by `ci-eval run`. Each task has its own: confirmation
     adding runs to other tasks does not raise it;
  3. results recorded without either (older ci-eval): max(fallback, recorded runs), where the
     fallback of a results folder is the most common number of runs per task (default_k).
summarize_results applies this to a whole folder; run, report, compare and baseline update use it.

What a summary needs of a task's records is kept in a TaskRows (one small row per run: no diff,
no output), which the streaming reader (stream.load_runs) fills line by line, so report, compare
and baseline update hold per-task aggregates, not records.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import NamedTuple, TypeGuard

from ci_eval.results import stats
from ci_eval.results.records import RunStatus

VALID_STATUSES = ("pass", "fail", "timeout")  # timeout counts as a fail; error is excluded


@dataclass(frozen=True)
class RunCounts:
    valid: int  # pass, fail or timeout: the runs a pass rate is over
    passes: int


def count_runs(records: Iterable[dict]) -> RunCounts:
    """The one rule for which runs count: errors are left out, timeouts count as fails."""
    valid = passes = 0
    for record in records:
        if record["status"] in VALID_STATUSES:
            valid += 1
            passes += record["status"] == "pass"
    return RunCounts(valid, passes)


@dataclass(frozen=True)
class TaskSummary:
    task: str
    requested: int  # valid runs asked for (see the module docstring)
    runs: int  # valid runs (pass/fail/timeout)
    passes: int
    fails: int
    timeouts: int
    errors: int
    pass_rate: Fraction | None
    pass_at_1: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    k: int  # the k used for pass@k / pass^k (min(the k asked, runs))
    mean_tokens: float | None
    mean_wall_seconds: float | None
    p95_wall_seconds: float | None
    total_cost_usd: float | None
    error_reasons: tuple[str, ...]
    agents: tuple[str, ...]
    failure_reasons: tuple[tuple[str, int], ...] = ()  # of runs that did not pass, most common first
    agent_nonzero: int = 0  # runs whose agent exited non-zero (the checks still judged them)
    rubric_runs: int = 0  # valid runs graded by a rubric (rubric_score recorded)
    mean_rubric_score: float | None = None
    rubric_tripped: tuple[tuple[str, int], ...] = ()  # criterion -> runs it failed, most first
    rubric_auto_fail: tuple[tuple[str, int], ...] = ()  # auto-fail gate -> runs it tripped
    # results field (tokens, cost_usd, wall_seconds) -> the distribution of its valid runs'
    # values (fields no valid run reported are left out): what the cost/tokens/wall gate tests
    distributions: Mapping[str, stats.Distribution] = field(default_factory=dict)
    total_tokens: int | None = None  # over every run, errored ones included (like the cost)
    total_wall_seconds: float | None = None

    @property
    def inconclusive(self) -> bool:
        """Fewer valid runs than asked for: never read as a pass."""
        return self.runs < self.requested

    def to_json(self) -> dict:
        data = asdict(self)
        data["pass_rate"] = float(self.pass_rate) if self.pass_rate is not None else None
        data["error_reasons"] = list(self.error_reasons)
        data["agents"] = list(self.agents)
        data["failure_reasons"] = [{"reason": r, "runs": n} for r, n in self.failure_reasons]
        data["rubric_tripped"] = [{"criterion": c, "runs": n} for c, n in self.rubric_tripped]
        data["rubric_auto_fail"] = [{"criterion": c, "runs": n} for c, n in self.rubric_auto_fail]
        data["pass_at_k_label"] = pass_at_k_label(self.k)
        data["inconclusive"] = self.inconclusive
        data["distributions"] = {name: d.to_json() for name, d in self.distributions.items()}
        return data


REASON_SHOWN = 200  # characters of a reason kept when counting distinct reasons


def pass_at_k_label(k: int) -> str:
    return f"pass@{k} (unbiased)"


class Row(NamedTuple):
    """What a summary needs of one run's record: no diff, no output."""

    run: int
    status: RunStatus
    tokens: int | None
    wall_seconds: float | None
    cost_usd: float | None
    agent_exited: bool  # agent_exit_code other than 0 or null
    reason: str | None  # as counted in failure_reasons (runs that did not pass)
    raw_reason: object  # the record's `reason` as is (errored runs and non-zero agent exits)
    rubric: tuple | None  # (score, tripped, auto_fail) of a valid run graded by a rubric


def shown_reason(status: str, reason: object) -> str:
    """A run's reason as failure_reasons counts it: whitespace folded, cut at REASON_SHOWN."""
    return " ".join(str(reason or f"({status})").split())[:REASON_SHOWN]


class TaskRows:
    """One task's records as its summary needs them, added one at a time: a Row per run and a
    few sets, never a diff or an output. Rows are put in run order when summarized, so the
    result is the same whatever order the lines came in."""

    __slots__ = ("agents", "harnesses", "isolation", "k", "prompt_hashes", "request", "rows",
                 "task")

    def __init__(self, task: str) -> None:
        self.task = task
        self.rows: list[Row] = []
        self.agents: set[str] = set()
        self.prompt_hashes: set[str] = set()
        self.harnesses: set[str] = set()  # the harness digests the runs recorded
        self.isolation: set[str] = set()
        self.request: int | None = None  # the largest `requested` or `k` recorded
        self.k: int | None = None  # the largest `k` recorded

    @classmethod
    def of(cls, task: str, records: Iterable[dict]) -> TaskRows:
        runs = cls(task)
        for record in records:
            runs.add(record)
        return runs

    def add(self, record: dict, texts: dict[str, str] | None = None) -> None:
        """Take one checked record. `texts` (shared across records) keeps one copy of each
        distinct reason text."""
        get = record.get
        status = _STATUS.get(record["status"], record["status"])
        exited = get("agent_exit_code") not in (0, None)
        reason = raw = rubric = None
        if status != "pass":
            reason = shown_reason(status, get("reason"))
            if texts is not None:
                reason = texts.setdefault(reason, reason)
        if status == "error" or exited:
            raw = get("reason", "")
            if texts is not None and type(raw) is str:
                raw = texts.setdefault(raw, raw)
        if "rubric_score" in record:
            score = record["rubric_score"]
            if status in VALID_STATUSES and isinstance(score, (int, float)):
                rubric = (score, _criteria(get("rubric_tripped")),
                          _criteria(get("rubric_auto_fail")))
        self.rows.append(Row(record["run"], status, get("tokens"), get("wall_seconds"),
                             get("cost_usd"), exited, reason, raw, rubric))
        self.agents.add(record["agent"])
        prompt_hash, isolation = get("prompt_hash"), get("isolation")
        if isinstance(prompt_hash, str):
            self.prompt_hashes.add(prompt_hash)
        if isolation:
            self.isolation.add(isolation)
        if isinstance(get("harness"), str):
            self.harnesses.add(record["harness"])
        requested, k = get("requested"), get("k")
        if _count(requested):
            self.request = max(self.request or 0, requested)
        if _count(k):
            self.request = max(self.request or 0, k)
            self.k = max(self.k or 0, k)

    def outcomes(self):
        """(status, agent exited non-zero, reason) of each run, in run order: what
        gate.setup_broken reads."""
        return ((row.status, row.agent_exited, row.raw_reason) for row in self.sorted_rows())

    def sorted_rows(self) -> list[Row]:
        return sorted(self.rows, key=lambda row: row.run)

    def __len__(self) -> int:
        return len(self.rows)

    # Pickled with plain tuples for rows: a NamedTuple pickles ~10x slower than a tuple, and
    # load_runs sends 100,000s of rows back from the processes that read them.
    def __getstate__(self) -> tuple:
        return (self.task, [tuple(row) for row in self.rows], self.agents, self.prompt_hashes,
                self.isolation, self.request, self.k, self.harnesses)

    def __setstate__(self, state: tuple) -> None:
        (self.task, rows, self.agents, self.prompt_hashes, self.isolation, self.request,
         self.k, self.harnesses) = state
        self.rows = list(map(Row._make, rows))


_STATUS = {name: name for name in ("pass", "fail", "timeout", "error")}  # one copy of each


def _criteria(value: object) -> tuple[str, ...]:
    """A rubric_tripped / rubric_auto_fail list: its criterion ids, each once, in order."""
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(v for v in value if isinstance(v, str)))


def _count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _runs(records: list[dict] | TaskRows, task: str = "") -> TaskRows:
    return records if isinstance(records, TaskRows) else TaskRows.of(task, records)


def default_k(run_counts: Iterable[int]) -> int:
    """The fallback for results recorded without k: the most common number of recorded runs
    per task (ties: the smaller, since confirmation only ever adds runs). 1 for no results."""
    counts = Counter(n for n in run_counts if n > 0)
    if not counts:
        return 1
    best = max(counts.values())
    return min(n for n, c in counts.items() if c == best)


def summarize_results(loaded: Mapping[str, list[dict] | TaskRows],
                      k: int | None = None) -> dict[str, TaskSummary]:
    """Every task of a results folder (task id -> records, or their TaskRows), with the same
    requested counts whichever command asks: k (explicit) overrides; see the module
    docstring."""
    runs = {task: _runs(records, task) for task, records in loaded.items()}
    fallback = None
    if k is None:
        fallback = default_k(len(r) for r in runs.values() if r.request is None)
    return {task: summarize(task, r, k, fallback_k=fallback) for task, r in runs.items()}


def typical_k(loaded: Mapping[str, list[dict] | TaskRows]) -> int:
    """One k to show for a whole results folder: the most common k recorded (the fallback for
    results without one)."""
    return default_k(r.k or len(r) for r in (_runs(records) for records in loaded.values()))


def summarize(task: str, records: list[dict] | TaskRows, k: int | None = None, *,
              fallback_k: int | None = None) -> TaskSummary:
    """Summarize one task's records (one per run), or their TaskRows. k: an explicit number of
    runs asked (it overrides what the records say); fallback_k: for records that say nothing;
    neither: the number of recorded runs. Reasons and criteria tied in count are listed in run
    order."""
    runs = _runs(records, task)
    rows = runs.sorted_rows()
    asked = runs.request
    if k is None and asked is not None:
        requested, k = asked, runs.k or asked
    else:
        k = k or fallback_k
        requested = max(k or 0, len(rows))
    valid = [row for row in rows if row.status in VALID_STATUSES]
    passes = sum(1 for row in valid if row.status == "pass")
    n = len(valid)
    used_k = min(k or n, n)
    tokens = [row.tokens for row in valid if row.tokens is not None]
    walls = [float(row.wall_seconds) for row in valid if row.wall_seconds is not None]
    costs = [row.cost_usd for row in rows if row.cost_usd is not None]
    valid_costs = [row.cost_usd for row in valid if row.cost_usd is not None]
    all_tokens = [row.tokens for row in rows if row.tokens is not None]
    all_walls = [float(row.wall_seconds) for row in rows if row.wall_seconds is not None]
    distributions = {name: shape for name, values in
                     (("tokens", tokens), ("cost_usd", valid_costs), ("wall_seconds", walls))
                     if (shape := stats.distribution(values)) is not None}
    graded = [row.rubric for row in valid if row.rubric is not None]
    return TaskSummary(
        task=task,
        requested=requested,
        runs=n,
        passes=passes,
        fails=sum(1 for row in valid if row.status == "fail"),
        timeouts=sum(1 for row in valid if row.status == "timeout"),
        errors=sum(1 for row in rows if row.status == "error"),
        pass_rate=stats.pass_rate(passes, n),
        pass_at_1=stats.pass_at_k(n, passes, 1) if n else None,
        pass_at_k=stats.pass_at_k(n, passes, used_k) if n else None,
        pass_hat_k=stats.pass_hat_k(n, passes, used_k) if n else None,
        k=used_k,
        mean_tokens=stats.mean(tokens),
        mean_wall_seconds=stats.mean(walls),
        p95_wall_seconds=stats.percentile(walls, 95),
        total_cost_usd=math.fsum(costs) if costs else None,
        error_reasons=tuple(str(row.raw_reason) for row in rows if row.status == "error"),
        agents=tuple(sorted(runs.agents)),
        failure_reasons=tuple(Counter(row.reason for row in rows  # set on every run not passed
                                      if row.status != "pass" and row.reason is not None)
                              .most_common()),
        agent_nonzero=sum(1 for row in rows if row.agent_exited),
        rubric_runs=len(graded),
        mean_rubric_score=stats.mean([float(score) for score, _, _ in graded]),
        rubric_tripped=tuple(Counter(c for _, tripped, _ in graded for c in tripped)
                             .most_common()),
        rubric_auto_fail=tuple(Counter(c for _, _, gates in graded for c in gates)
                               .most_common()),
        distributions=distributions,
        total_tokens=round(sum(all_tokens)) if all_tokens else None,
        total_wall_seconds=math.fsum(all_walls) if all_walls else None,
    )
