"""Run history: one summary file per CI run, in a folder (locally `ci-eval history record`; on
GitHub the summary artifacts of earlier eval runs, fetched into a folder).

A summary (schema: `ci-eval schema run-summary`):

    {"format": "ci-eval-run-summary", "schema_version": 1,
     "date": "2026-03-01", "recorded_at": "2026-03-01T12:00:03.123456Z",
     "commit": "0123abcd…" | null, "agent": "claude" | null, "ci_eval_version": "0.1.0",
     "ci_run": {"id": 123, "attempt": 1, "url": "https://…", "ref": "main"},      (optional)
     "tasks": {"task-001-x": {"runs": 5, "passes": 5, "errors": 0, "requested": 5,
                              "status": "pass", "gate": "unchanged",          (gate optional)
                              "tokens": 24100, "cost_usd": 0.41, "wall_seconds": 212.5,
                              "drifted": false, "baseline": {"passes": 38, "runs": 40}}}}

Per task: `runs` valid runs (errors excluded, timeouts count as fails), `passes`, `errors`,
`requested` (valid runs asked, see results/summary.py) and `status`, which follows from them:
  pass          every valid run passed and there are as many as asked (runs >= requested >= 1)
  fail          at least one valid run failed
  inconclusive  no failure, but fewer valid runs than asked (errored runs)
`gate` is the gate's status for the task in that run when the summary was written with a verdict
(report mode); absent otherwise. `tokens`, `cost_usd`, `wall_seconds` (optional): the totals
over the task's runs in that CI run, errored runs included, left out when no run reported one
(what the dashboard, `ci-eval history site`, charts as cost and wall per run). `drifted` and
`baseline` (optional, together): on the default branch, for a gated task with a baseline, whether
main fell below the baseline's line in that run (verdict/main_drift.py) and the baseline's counts.

Order: by `date`, then `recorded_at` (a full UTC timestamp), then file name. Files are named
`DATE-NNN-COMMIT12.json` (NNN: 1 + the highest counter already used for that date in the folder),
so a folder written by `history record` also lists in order; a file is never overwritten.

Reading is strict: every entry of the folder not starting with "." must be a summary; anything
else (another file, a folder, a link, a broken or foreign JSON) is bad input naming the file and
the field, never silently skipped. Two files of the same CI run (same ci_run id and attempt, or
the same content under two names) are an error naming both: a run counted twice would fake
history.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from ci_eval import strict_json
from ci_eval.errors import UserError
from ci_eval.output import ensure_dir
from ci_eval.results.summary import TaskSummary
from ci_eval.tasks import schema

FORMAT = "ci-eval-run-summary"
SCHEMA_VERSION = 1
SCHEMA_NAME = "run-summary"
DEFAULT_HISTORY_DIR = ".ci-eval/history"
MAX_SUMMARY_BYTES = 4 * 1024 * 1024
STATUSES = ("pass", "fail", "inconclusive")
USAGE_FIELDS = ("tokens", "cost_usd", "wall_seconds")
COMMIT_RE = re.compile(r"^[0-9a-f]{4,64}$")
_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})-(\d{3,})-")


@dataclass(frozen=True)
class TaskRecord:
    """One task in one CI run."""

    task: str
    runs: int
    passes: int
    errors: int
    requested: int
    gate: str | None = None
    tokens: int | None = None  # totals over the task's runs in this CI run
    cost_usd: float | None = None
    wall_seconds: float | None = None
    # on the default branch, against the baseline (verdict/main_drift.py): main below it?
    drifted: bool | None = None
    baseline_passes: int | None = None
    baseline_runs: int | None = None

    @property
    def baseline_rate(self) -> Fraction | None:
        return (Fraction(self.baseline_passes, self.baseline_runs)
                if self.baseline_runs and self.baseline_passes is not None else None)

    @property
    def status(self) -> str:
        return task_status(self.runs, self.passes, self.requested)

    @property
    def passed_every_run(self) -> bool:
        return self.status == "pass"

    def to_json(self) -> dict:
        data = {"runs": self.runs, "passes": self.passes, "errors": self.errors,
                "requested": self.requested, "status": self.status}
        if self.gate is not None:
            data["gate"] = self.gate
        for name in USAGE_FIELDS:
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.drifted is not None:
            data["drifted"] = self.drifted
            data["baseline"] = {"passes": self.baseline_passes, "runs": self.baseline_runs}
        return data


@dataclass(frozen=True)
class RunSummary:
    date: str  # YYYY-MM-DD
    recorded_at: str  # UTC timestamp, e.g. 2026-03-01T12:00:03Z
    commit: str | None
    agent: str | None
    ci_eval_version: str
    tasks: Mapping[str, TaskRecord]
    ci_run: Mapping | None = None
    source: str | None = field(default=None, compare=False)  # file name, when read from disk
    # the agent's harness of the runs: {"digest": sha256, "files": {path: digest} or None}
    harness: Mapping | None = None

    def to_json(self) -> dict:
        data = {
            "format": FORMAT,
            "schema_version": SCHEMA_VERSION,
            "date": self.date,
            "recorded_at": self.recorded_at,
            "commit": self.commit,
            "agent": self.agent,
            "ci_eval_version": self.ci_eval_version,
        }
        if self.ci_run is not None:
            data["ci_run"] = dict(self.ci_run)
        if self.harness is not None:
            data["harness"] = dict(self.harness)
        data["tasks"] = {task: self.tasks[task].to_json() for task in sorted(self.tasks)}
        return data

    @property
    def label(self) -> str:
        """How a summary is named in messages: its file, or its date and commit."""
        return self.source or f"{self.date} {(self.commit or 'no commit')[:12]}"

    def sort_key(self) -> tuple:
        return (self.date, _timestamp(self.recorded_at), self.source or "")


def task_status(runs: int, passes: int, requested: int) -> str:
    """pass | fail | inconclusive, from the counts (see the module docstring)."""
    if passes < runs:
        return "fail"
    if runs >= 1 and runs >= requested:
        return "pass"
    return "inconclusive"


# --- building (pure) ----------------------------------------------------------------------------


def build_summary(
    summaries: Mapping[str, TaskSummary],
    *,
    date: str,
    recorded_at: str,
    commit: str | None,
    agent: str | None,
    ci_eval_version: str,
    gate: Mapping[str, str] | None = None,
    ci_run: Mapping | None = None,
    harness: Mapping | None = None,
    drift: Mapping[str, tuple[bool, int, int]] | None = None,
) -> RunSummary:
    """The summary of one CI run from its per-task summaries (results.summary.summarize_results)
    and, optionally, the gate's status per task (task id -> status, from a Verdict) and, on the
    default branch, its drift (task id -> (drifted, baseline passes, baseline runs))."""
    drift = drift or {}
    tasks = {
        task: TaskRecord(task, s.runs, s.passes, s.errors, s.requested,
                         gate=(gate or {}).get(task), tokens=s.total_tokens,
                         **_drift_fields(drift.get(task)),
                         cost_usd=None if s.total_cost_usd is None else round(s.total_cost_usd, 6),
                         wall_seconds=None if s.total_wall_seconds is None
                         else round(s.total_wall_seconds, 3))
        for task, s in summaries.items()
    }
    return RunSummary(date=date, recorded_at=recorded_at, commit=commit, agent=agent,
                      ci_eval_version=ci_eval_version, tasks=tasks,
                      ci_run=dict(ci_run) if ci_run else None,
                      harness=dict(harness) if harness else None)


def _drift_fields(drift: tuple[bool, int, int] | None) -> dict:
    if drift is None:
        return {}
    drifted, passes, runs = drift
    return {"drifted": drifted, "baseline_passes": passes, "baseline_runs": runs}


def ci_run_from_env(env: Mapping[str, str]) -> dict | None:
    """The GitHub Actions run this process belongs to (GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT,
    GITHUB_SERVER_URL/GITHUB_REPOSITORY, GITHUB_REF_NAME), or None outside Actions."""
    run_id = env.get("GITHUB_RUN_ID", "")
    if not run_id.isdigit():
        return None
    data: dict = {"id": int(run_id)}
    attempt = env.get("GITHUB_RUN_ATTEMPT", "")
    if attempt.isdigit() and int(attempt) >= 1:
        data["attempt"] = int(attempt)
    server, repo = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY")
    if server and repo:
        data["url"] = f"{server.rstrip('/')}/{repo}/actions/runs/{run_id}"
    if env.get("GITHUB_REF_NAME"):
        data["ref"] = env["GITHUB_REF_NAME"]
    return data


def status_tally(summary: RunSummary) -> str:
    """"3 pass, 1 fail": how many of the summary's tasks ended in each status."""
    statuses = [t.status for t in summary.tasks.values()]
    return ", ".join(f"{statuses.count(s)} {s}" for s in STATUSES if s in statuses)


def utc_timestamp(moment: dt.datetime) -> str:
    """2026-03-01T12:00:03.123456Z (microseconds; what `recorded_at` holds)."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def summary_filename(summary: RunSummary, taken: Iterable[str]) -> str:
    """DATE-NNN-COMMIT12.json, NNN one more than the highest counter of DATE among `taken`."""
    used = [int(m.group(2)) for name in taken
            if (m := _NAME_RE.match(name)) and m.group(1) == summary.date]
    commit = (summary.commit or "no-commit")[:12]
    return f"{summary.date}-{max(used, default=0) + 1:03d}-{commit}.json"


# --- reading (validated) ------------------------------------------------------------------------


def parse_summary(data: object, path: object) -> RunSummary:
    """A parsed summary file, validated: UserError naming the file and the field."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"not a ci-eval run summary (expected \"format\": \"{FORMAT}\")",
                        path=path, field="$.format")
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise UserError(f"schema_version {version} is newer than this ci-eval supports "
                        f"({SCHEMA_VERSION}); upgrade ci-eval", path=path,
                        field="$.schema_version")
    schema.validate_instance(data, SCHEMA_NAME, path=path)
    try:
        _timestamp(data["recorded_at"])
    except ValueError:
        raise UserError(f"expected a UTC timestamp YYYY-MM-DDTHH:MM:SSZ, got "
                        f"{data['recorded_at']!r}", path=path, field="$.recorded_at") from None
    tasks = {}
    for task, raw in data["tasks"].items():
        where = f"$.tasks.{task}"
        if raw["passes"] > raw["runs"]:
            raise UserError(f"{raw['passes']} passes is more than {raw['runs']} runs",
                            path=path, field=f"{where}.passes")
        if ("drifted" in raw) != ("baseline" in raw):
            raise UserError("drifted and baseline come together (both or neither)", path=path,
                            field=f"{where}.{'baseline' if 'drifted' in raw else 'drifted'}")
        base = raw.get("baseline")
        if base is not None and base["passes"] > base["runs"]:
            raise UserError(f"{base['passes']} passes is more than {base['runs']} runs",
                            path=path, field=f"{where}.baseline.passes")
        record = TaskRecord(task, raw["runs"], raw["passes"], raw["errors"], raw["requested"],
                            gate=raw.get("gate"), tokens=raw.get("tokens"),
                            cost_usd=raw.get("cost_usd"), wall_seconds=raw.get("wall_seconds"),
                            **_drift_fields(base and (raw["drifted"], base["passes"],
                                                      base["runs"])))
        if raw["status"] != record.status:
            raise UserError(f"{raw['status']!r} does not match {raw['passes']}/{raw['runs']} "
                            f"valid runs of {raw['requested']} asked (expected "
                            f"{record.status!r})", path=path, field=f"{where}.status")
        tasks[task] = record
    return RunSummary(date=data["date"], recorded_at=data["recorded_at"], commit=data["commit"],
                      agent=data["agent"], ci_eval_version=data["ci_eval_version"], tasks=tasks,
                      ci_run=data.get("ci_run"), source=Path(str(path)).name,
                      harness=data.get("harness"))


def read_summary(path: Path) -> RunSummary:
    """One summary file: not followed if a link, read with a size cap, strict JSON, validated."""
    data = strict_json.load_file(path, cap=MAX_SUMMARY_BYTES, what="a run summary *.json")
    return parse_summary(data, path)


def load_history(folder: Path, *, missing_ok: bool = False) -> list[RunSummary]:
    """Every summary of a history folder, oldest first (see the module docstring for the order
    and the strictness). UserError if any entry is not a summary, or if the folder is missing
    (unless missing_ok: then there is no history yet, [])."""
    folder = Path(folder)
    if missing_ok and not folder.exists() and not folder.is_symlink():
        return []
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "history folder not found"
        raise UserError(f"{what} (expected a folder of run summaries: `ci-eval history record`)",
                        path=folder, field="--history")
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue  # hidden files, and the writer's temp files
        if entry.is_symlink():
            raise UserError("is a symbolic link (not followed; expected a run summary file)",
                            path=entry)
        if entry.is_dir():
            raise UserError("is a folder (a history folder holds only run summary files)",
                            path=entry)
        if entry.suffix != ".json":
            raise UserError("not a run summary (a history folder holds only the *.json files "
                            "that `ci-eval history record` writes)", path=entry)
        found.append(read_summary(entry))
    _refuse_duplicates(found, folder)
    return sorted(found, key=RunSummary.sort_key)


def _refuse_duplicates(summaries: list[RunSummary], folder: Path) -> None:
    seen: dict[object, RunSummary] = {}
    for summary in summaries:
        keys: list[object] = [dumps_summary(summary)]  # the same content under two names
        if summary.ci_run and "id" in summary.ci_run:
            keys.append(("run", summary.ci_run["id"], summary.ci_run.get("attempt", 1)))
        for key in keys:
            if key in seen:
                raise UserError(f"the same CI run as {seen[key].source} (a run is counted once; "
                                "remove one of them)", path=folder / str(summary.source))
            seen[key] = summary


def _timestamp(text: str) -> dt.datetime:
    """recorded_at as an aware datetime (ValueError if it is not a timestamp with a zone)."""
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(text)
    return moment.astimezone(dt.timezone.utc)


# --- writing ------------------------------------------------------------------------------------


def dumps_summary(summary: RunSummary) -> str:
    return json.dumps(summary.to_json(), indent=2, ensure_ascii=False) + "\n"


def write_summary(folder: Path, summary: RunSummary) -> Path:
    """Write `summary` as a new file in `folder` (created if missing) and return its path.
    Never overwrites: the name is taken with an exclusive link of a fully written temp file, so
    a reader never sees half a summary and two writers never share a name."""
    folder = ensure_dir(Path(folder), field="--history")
    text = dumps_summary(summary).encode("utf-8")
    tmp = folder / f".summary.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "xb") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        for _ in range(1000):
            target = folder / summary_filename(summary, os.listdir(folder))
            try:
                os.link(tmp, target)
            except FileExistsError:
                continue  # another writer took the name in between: take the next counter
            return target
        raise UserError("no free summary file name", path=folder, field="--history")
    except OSError as exc:
        raise UserError(f"cannot write ({exc.strerror or exc})", path=folder,
                        field="--history") from None
    finally:
        tmp.unlink(missing_ok=True)


# --- views (pure) -------------------------------------------------------------------------------


def task_points(summaries: list[RunSummary], task: str) -> list[TaskRecord | None]:
    """The task's record in each summary, in order (None where it was not run)."""
    return [s.tasks.get(task) for s in summaries]


def tasks_in(summaries: Iterable[RunSummary]) -> list[str]:
    """Every task id that appears in any of the summaries, sorted."""
    return sorted({task for s in summaries for task in s.tasks})


def suite_rate(summary: RunSummary) -> Fraction | None:
    """The suite's pass rate in one run: every task's valid runs pooled (None: no valid run)."""
    runs = sum(r.runs for r in summary.tasks.values())
    return Fraction(sum(r.passes for r in summary.tasks.values()), runs) if runs else None


def suite_cost(summary: RunSummary) -> float | None:
    """The run's total cost over the tasks that recorded one (None: none did)."""
    costs = [r.cost_usd for r in summary.tasks.values() if r.cost_usd is not None]
    return math.fsum(costs) if costs else None
