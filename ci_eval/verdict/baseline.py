"""baseline.json: the data model, strict loading (schema + consistency) and atomic saving.

    {"schema_version": 3, "agent": "claude-code",
     "tasks": {"task-001-x": {"passes": 4, "runs": 5, "pass_rate": 0.8, "avg_tokens": 5120.0,
                              "avg_wall_seconds": 41.3, "recorded": "2026-03-02",
                              "prompt_hash": "sha256:…", "aspirational": false,
                              "observations": [{"recorded": "2026-02-01", "passes": 5, "runs": 5},
                                               {"recorded": "2026-03-02", "passes": 4, "runs": 5},
                                               {"recorded": "2026-04-01", "passes": 2, "runs": 5}],
                              "distributions": {"tokens": {"n": 5, "mean": 5120.0, "sd": 810.2,
                                                           "log_mean": 8.53, "log_sd": 0.16},
                                                "cost_usd": {...}, "wall_seconds": {...}}}}}

Two separate things per task:
- the gate value (passes, runs, pass_rate, recorded, ...): what `compare` gates against;
- `observations`: what every `baseline update` measured (last MAX_SNAPSHOTS, oldest first),
  including the updates that did not move the gate (a gated task measured below 0.60 is refused,
  its gate stays, but the measurement is recorded). Calibration reads observations, so a drop
  that the gate refused to follow is still seen by the "3 consecutive observations" rule.

- `distributions` (version 3): per results field (tokens, cost_usd, wall_seconds) the per-run
  distribution of the gate value's valid runs (n, mean, sd, and the mean and sd of the logs):
  what the cost / tokens / wall gate tests against (verdict/axes.py). Fields the agent never
  reported are left out.

Version 1 files (`snapshots`, each one an update that also became the gate, the last one the
entry itself) are read as version 2: their snapshots are the observations. Version 2 files
(no distributions) are read as they are: their cost, tokens and wall are "unknown" to the gate
until the next `baseline update`. Any write produces version 3; a ci-eval that only knows an
older version refuses such a file ("newer than supported").

Rates are exact: the gate uses Fraction(passes, runs); `pass_rate` is for people reading the file.
Only `ci-eval baseline update` writes the file (see ci_eval/commands/baseline.py; the GC drops
archived tasks' entries); the decisions about what an update changes are pure and live here too
(`updated_entry`), the file I/O at the bottom.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import cast
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

from ci_eval import strict_json
from ci_eval.errors import UserError
from ci_eval.output import write_atomic
from ci_eval.results.stats import MAX_VALUES, Distribution
from ci_eval.tasks import schema
from ci_eval.verdict.harness_changes import HarnessRecord

BASELINE_FILE = "baseline.json"
SCHEMA_VERSION = 3  # the newest format this version reads and writes (and the one it writes)
# 1: `snapshots` (every update also moved the gate); 2: `observations`; 3: + `distributions`
READABLE_VERSIONS = (1, 2, 3)
MAX_BASELINE_BYTES = 64 * 1024 * 1024
MAX_SNAPSHOTS = 10  # observations kept per task; calibration needs the last 3
# The gate's false-alarm and detection figures (docs/gate.md) assume baselines from >= 40 runs.
RECOMMENDED_RUNS = 40
RECORD_THRESHOLD = Fraction(3, 5)  # a baseline below this is aspirational (not gated)


def meets_record_threshold(rate: Fraction, threshold: Fraction = RECORD_THRESHOLD) -> bool:
    """A baseline is recorded (gated) only at >= 0.60 (ci-eval.yaml's gate.min_baseline_rate);
    below, the task stays aspirational."""
    return Fraction(rate) >= Fraction(threshold)


@dataclass(frozen=True)
class Snapshot:
    """One observation: what an update measured (whether or not it became the gate value)."""

    recorded: str  # YYYY-MM-DD
    passes: int
    runs: int

    @property
    def pass_rate(self) -> Fraction:
        return Fraction(self.passes, self.runs)

    def to_json(self) -> dict:
        return {"recorded": self.recorded, "passes": self.passes, "runs": self.runs}


@dataclass(frozen=True)
class BaselineEntry:
    task: str
    passes: int
    runs: int
    recorded: str
    prompt_hash: str
    avg_tokens: float | None = None
    avg_wall_seconds: float | None = None
    aspirational: bool = False  # recorded below the threshold: reported, never gated
    observations: tuple[Snapshot, ...] = ()  # every update's measurement, oldest first
    distributions: Mapping[str, Distribution] = field(default_factory=dict)  # per results field

    @property
    def pass_rate(self) -> Fraction:
        return Fraction(self.passes, self.runs)

    @property
    def snapshot(self) -> Snapshot:
        """The gate value as an observation (the update that recorded it)."""
        return Snapshot(self.recorded, self.passes, self.runs)

    @property
    def history(self) -> tuple[Snapshot, ...]:
        """The observations, oldest first: what calibration reads. The last one need not be the
        gate value (an update may have measured a rate it refused to gate on). An entry written
        without any (by hand) has observed its own gate value once."""
        return self.observations or (self.snapshot,)

    def to_json(self) -> dict:
        return {
            "passes": self.passes,
            "runs": self.runs,
            "pass_rate": float(self.pass_rate),
            "avg_tokens": _rounded(self.avg_tokens, 1),
            "avg_wall_seconds": _rounded(self.avg_wall_seconds, 3),
            "recorded": self.recorded,
            "prompt_hash": self.prompt_hash,
            "aspirational": self.aspirational,
            "observations": [s.to_json() for s in self.history],
            "distributions": {name: self.distributions[name].to_json()
                              for name in sorted(self.distributions)},
        }


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


@dataclass(frozen=True)
class Baseline:
    agent: str | None = None
    entries: dict[str, BaselineEntry] = field(default_factory=dict)
    harness: HarnessRecord | None = None  # the agent's harness it was recorded with

    def to_json(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "agent": self.agent,
            **({"harness": self.harness.to_json()} if self.harness else {}),
            "tasks": {task: self.entries[task].to_json() for task in sorted(self.entries)},
        }

    def without(self, task_ids) -> Baseline:
        """A copy without the given tasks' entries (e.g. archived tasks)."""
        drop = set(task_ids)
        return replace(self, entries={k: v for k, v in self.entries.items() if k not in drop})


# --- pure decisions of `baseline update` ------------------------------------------------------


@dataclass(frozen=True)
class EntryChange:
    task: str
    action: str  # "added" | "updated" | "unchanged" | "refused"
    old: BaselineEntry | None
    new: BaselineEntry | None  # the new gate value; None when refused
    message: str
    # What baseline.json holds for the task afterwards: `new`, or for a refusal the old gate
    # with the measurement added to its observations (None: nothing to store).
    stored: BaselineEntry | None = None


def _refused(old: BaselineEntry, measured: Snapshot, prompt_hash: str, shown: str,
             threshold: Fraction) -> EntryChange:
    """A gated task's new rate below the threshold: the entry stays, the measurement is
    observed (unless the prompt changed)."""
    stored = old
    observed = ""
    if old.prompt_hash == prompt_hash:  # another wording's history would mislead calibration
        stored = replace(old, observations=_observed(old.history, measured))
        observed = "; observation recorded for calibration"
    return EntryChange(
        old.task, "refused", old, None,
        f"refused: {shown} is below {float(threshold):.2f}; the baseline stays "
        f"{old.passes}/{old.runs} = {float(old.pass_rate):.2f} "
        f"(--allow-below-threshold records it anyway){observed}",
        stored=stored,
    )


def updated_entry(
    old: BaselineEntry | None,
    *,
    task: str,
    passes: int,
    runs: int,
    recorded: str,
    prompt_hash: str,
    avg_tokens: float | None,
    avg_wall_seconds: float | None,
    allow_below_threshold: bool,
    distributions: Mapping[str, Distribution] | None = None,
    threshold: Fraction = RECORD_THRESHOLD,
) -> EntryChange:
    """What `baseline update` does with one task's new evidence.

    - rate >= threshold, or allow_below_threshold: record a gated entry.
    - below the threshold and the task was gated: refuse (the old entry stays; a deliberate
      `--allow-below-threshold` is needed to lower a gate).
    - below the threshold and the task was not gated (no entry, or aspirational): record it as
      aspirational: reported and kept for calibration, never gated.
    Every outcome but a refusal after a prompt change adds the measurement to the task's
    observations (`stored`), refusals included: calibration must see a drop the gate refused
    to follow. The old entry's observations carry over (last MAX_SNAPSHOTS), unless the prompt
    changed: they were about another wording, so they restart.
    """
    rate = Fraction(passes, runs)
    below = not meets_record_threshold(rate, threshold)
    shown = f"{passes}/{runs} = {float(rate):.2f}"
    if below and not allow_below_threshold and old is not None and not old.aspirational:
        return _refused(old, Snapshot(recorded, passes, runs), prompt_hash, shown, threshold)
    aspirational = below and not allow_below_threshold
    history: tuple[Snapshot, ...] = ()
    notes = []
    if old is not None:
        if old.prompt_hash == prompt_hash:
            history = old.history
        else:
            notes.append("prompt changed: history restarts")
    history = _observed(history, Snapshot(recorded, passes, runs))
    new = BaselineEntry(
        task=task,
        passes=passes,
        runs=runs,
        recorded=recorded,
        prompt_hash=prompt_hash,
        avg_tokens=avg_tokens,
        avg_wall_seconds=avg_wall_seconds,
        aspirational=aspirational,
        observations=history,
        distributions=dict(distributions or {}),
    )
    if aspirational:
        notes.append(f"below {float(threshold):.2f}: aspirational, not gated")
    elif old is not None and old.aspirational:
        notes.append("now gated")
    elif below:
        notes.append(f"below {float(threshold):.2f}, gated as asked")
    suffix = f" ({'; '.join(notes)})" if notes else ""
    if old is None:
        return EntryChange(task, "added", None, new, f"added: {shown}{suffix}", stored=new)
    if new == old:
        return EntryChange(task, "unchanged", old, old, f"unchanged: {shown}", stored=old)
    was = f"{old.passes}/{old.runs} = {float(old.pass_rate):.2f}"
    return EntryChange(task, "updated", old, new, f"updated: {was} -> {shown}{suffix}",
                       stored=new)


def _observed(history: tuple[Snapshot, ...], snapshot: Snapshot) -> tuple[Snapshot, ...]:
    """History plus one observation (the same evidence on the same date twice adds none),
    capped to the last MAX_SNAPSHOTS."""
    if not history or history[-1] != snapshot:
        history = history + (snapshot,)
    return history[-MAX_SNAPSHOTS:]


# --- file I/O ---------------------------------------------------------------------------------


def baseline_path(root: Path, given: str | None = None) -> Path:
    """--baseline FILE (relative to --root, like --results), else ROOT/baseline.json."""
    return Path(root) / (given or BASELINE_FILE)


def existing_baseline(root: Path, given: str | None = None) -> Path | None:
    """The baseline file to read; None when there is none yet. Only the default path
    (ROOT/baseline.json, named or not) may be absent (the first run): another file named with
    --baseline (the action's `baseline:` input) that is not there is a typo, exit 2."""
    path = baseline_path(root, given)
    if path.exists() or path.is_symlink():
        return path
    if Path(os.path.normpath(path)) == Path(os.path.normpath(baseline_path(root))):
        return None
    raise UserError("baseline file not found (only the default baseline.json may be absent, "
                    "before the first baseline is recorded)", path=path, field="--baseline")


def recorded_walls(root: Path, given: str | None, task_ids) -> dict[str, float | None]:
    """task id -> the baseline's avg_wall_seconds (None: not recorded); no baseline file = none
    recorded. What shard planning balances on."""
    path = existing_baseline(root, given)
    entries = load_baseline(path).entries if path is not None else {}
    return {t: entries[t].avg_wall_seconds for t in task_ids if t in entries}


def load_baseline(path: Path) -> Baseline:
    """Read and validate baseline.json; every problem is a UserError naming file and field."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise UserError("is a folder, expected the baseline file", path=path)
    if not path.is_file():
        raise UserError(
            "baseline file not found (record one with `ci-eval baseline update --all "
            "--results DIR`)",
            path=path,
        )
    data = strict_json.load_file(path, cap=MAX_BASELINE_BYTES, what="baseline.json")
    return parse_baseline(data, path)


def parse_baseline(data: object, path: object = BASELINE_FILE) -> Baseline:
    """Validate parsed baseline.json (version 1, 2 or 3) into a Baseline; UserError naming the
    field. Version 1 is migrated on the way in (see the module docstring)."""
    version = None
    if isinstance(data, dict):
        version = data.get("schema_version")
        if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            raise UserError(
                f"schema_version {version} is newer than this ci-eval supports "
                f"({SCHEMA_VERSION}); upgrade ci-eval",
                path=path, field="$.schema_version",
            )
    bad_number = strict_json.first_non_finite(data)
    if bad_number is not None:
        where, value = bad_number
        raise UserError(f"expected a finite number, got {strict_json.show_number(value)}",
                        path=path, field=where)
    schema.validate_instance(data, "baseline", path=path)
    data = cast(dict, data)  # the schema's top level is an object with an integer version
    version = data["schema_version"]
    # Each version has its own name for the list: the other one is a mistake, not a synonym.
    own, other = ("snapshots", "observations") if version == 1 else ("observations", "snapshots")
    entries = {}
    for task, raw in data["tasks"].items():
        where = f"$.tasks.{task}"
        if other in raw:
            raise UserError(f"unknown field in a schema_version {version} file (expected "
                            f"{own!r})", path=path, field=f"{where}.{other}")
        if "distributions" in raw and version < 3:
            raise UserError(f"unknown field in a schema_version {version} file (distributions "
                            "came with version 3)", path=path, field=f"{where}.distributions")
        if raw["passes"] > raw["runs"]:
            raise UserError(f"{raw['passes']} passes is more than {raw['runs']} runs",
                            path=path, field=f"{where}.passes")
        if abs(raw["pass_rate"] - raw["passes"] / raw["runs"]) > 1e-6:
            raise UserError(
                f"{raw['pass_rate']} is not passes/runs = {raw['passes']}/{raw['runs']}",
                path=path, field=f"{where}.pass_rate",
            )
        observations = []
        for index, snap in enumerate(raw.get(own, [])):
            if snap["passes"] > snap["runs"]:
                raise UserError(f"{snap['passes']} passes is more than {snap['runs']} runs",
                                path=path, field=f"{where}.{own}[{index}].passes")
            observations.append(Snapshot(snap["recorded"], snap["passes"], snap["runs"]))
        entry = BaselineEntry(
            task=task,
            passes=raw["passes"],
            runs=raw["runs"],
            recorded=raw["recorded"],
            prompt_hash=raw["prompt_hash"],
            avg_tokens=raw.get("avg_tokens"),
            avg_wall_seconds=raw.get("avg_wall_seconds"),
            aspirational=raw.get("aspirational", False),
            observations=tuple(observations),
            distributions={name: _distribution(value, path, f"{where}.distributions.{name}")
                           for name, value in raw.get("distributions", {}).items()},
        )
        entries[task] = migrated_v1_entry(entry) if version == 1 else entry
    harness = HarnessRecord.from_json(data["harness"]) if "harness" in data else None
    return Baseline(agent=data["agent"], entries=entries, harness=harness)


def _distribution(raw: dict, path: object, where: str) -> Distribution:
    kept = min(raw["n"], MAX_VALUES)
    if len(raw["values"]) != kept:
        raise UserError(f"{len(raw['values'])} values for n = {raw['n']} runs (expected {kept})",
                        path=path, field=f"{where}.values")
    return Distribution(**{**raw, "values": tuple(sorted(raw["values"]))})


def migrated_v1_entry(entry: BaselineEntry) -> BaselineEntry:
    """A version 1 entry's snapshots as observations. In version 1 every snapshot was an update
    that became the gate and the list ended with the entry itself (hand-written files may have
    left it out): the same list, with the entry appended when it is not its last element."""
    if entry.observations and entry.observations[-1] == entry.snapshot:
        return entry
    return replace(entry, observations=(entry.observations + (entry.snapshot,))[-MAX_SNAPSHOTS:])


def dumps_baseline(baseline: Baseline) -> str:
    return json.dumps(baseline.to_json(), indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def save_baseline(path: Path, baseline: Baseline) -> None:
    """Write atomically (ci_eval.output.write_atomic): never half-written; keeps the file mode."""
    write_atomic(path, dumps_baseline(baseline), field="--baseline")
