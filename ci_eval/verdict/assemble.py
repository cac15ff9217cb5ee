"""results/ + baseline.json + tasks/ -> the gate's Verdict: the verdict stage in one call (what
`ci-eval compare` prints and the action's report mode publishes). This module loads; every
decision it applies is a pure function of gate, calibration and baseline."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ci_eval.results import control_arm, stream
from ci_eval.results.history import RunSummary
from ci_eval.results.notices import label_notices
from ci_eval.results.summary import summarize_results, typical_k
from ci_eval.tasks.load import load_tasks
from ci_eval.verdict import against as against_results
from ci_eval.verdict import calibration, control, gate, main_record, model
from ci_eval.verdict.baseline import Baseline, existing_baseline, load_baseline
from ci_eval.verdict.harness_changes import changes_note
from ci_eval.verdict.rules import DEFAULT_RULES, GateRules

NO_BASELINE_NOTE = ("No baseline yet: every task is new. Record one from 40 runs per task: "
                    "`ci-eval run -k 40 --agent NAME`, then `ci-eval baseline update --all`.")


def verdict_notes(loaded, baseline: Baseline, agent: str | None, other, *,
                  missing_baseline: bool, harness_of) -> tuple[str, ...]:
    """The verdict's notes: no baseline, another agent's runs as the baseline or an allowed
    agent mismatch, what changed in the agent's harness, the isolation notices."""
    notes: tuple[str, ...] = (NO_BASELINE_NOTE,) if missing_baseline else ()
    if other is not None:
        notes += (f"The runs in {other.results_dir} are the baseline.", *other.notes)
    elif agent and baseline.agent and agent != baseline.agent:
        notes += (f"Agent mismatch (allowed): results from {agent!r}, baseline from "
                  f"{baseline.agent!r}.",)
    harness_note = changes_note(baseline.harness,
                                {d for runs in loaded.values() for d in runs.harnesses},
                                harness_of(agent) if harness_of and agent else None)
    notes += (harness_note,) if harness_note else ()
    labels = {label for runs in loaded.values() for label in runs.isolation}
    return notes + tuple(f"NOTICE: {n}" for n in label_notices(labels))


def build_verdict(root: Path, results_dir: Path, baseline_file: str | None, *, k: int | None = None,
                  allow_agent_mismatch: bool = False, selected: list[str] | None = None,
                  rules: GateRules = DEFAULT_RULES, allow_empty: bool = False,
                  harness_of: Callable[[str], Mapping[str, str] | None] | None = None,
                  against_dir: Path | None = None, main_history: Sequence[RunSummary] = ()):
    """Load results, baseline.json and tasks/ and compare them: the gate's Verdict (what
    `ci-eval compare` prints and the action's report mode publishes). A missing baseline file
    makes every task new (a repo's first PR gets a report); `selected` compares those tasks
    only (the others are neither inconclusive nor missing). The results are streamed: per-task
    rows, no diff held. `rules`: ci-eval.yaml's gate section (agents.config_file.Config.gate).
    `allow_empty`: a folder with no results compares as no results (the report of a run whose
    every planned shard is missing). `harness_of(agent)`: the repo's harness of that agent now
    ({file: digest}, or None), to name what changed in it since the baseline (a note).
    `against_dir`: another agent's results on the same tasks take the baseline's place
    (verdict/against.py); the verdict then has `.against`. `main_history`: the run summaries of
    the default branch (oldest first): each gated task is judged against main's record in them
    too (verdict/main_record.py)."""
    loaded = stream.load_runs(results_dir) if allow_empty else stream.require_runs(results_dir)
    tasks = load_tasks(root, selected)
    other = None
    if against_dir is not None:
        other = against_results.load_against(
            against_dir, {t.id: t.prompt_hash if t.prompt_path.is_file() else None for t in tasks},
            k=k, selected={t.id for t in tasks} if selected else None)
        baseline, missing_baseline, allow_agent_mismatch = other.baseline, False, True
    else:
        path = existing_baseline(root, baseline_file)
        missing_baseline = path is None
        baseline = Baseline() if path is None else load_baseline(path)
    if selected:
        chosen = {t.id for t in tasks}
        loaded = {task: runs for task, runs in loaded.items() if task in chosen}
        baseline = baseline.without(set(baseline.entries) - chosen)

    shown_k = k or typical_k(loaded)  # shown in the report; each task has its own
    agent = gate.check_agents(baseline.agent, stream.agent_of(loaded),
                              allow_mismatch=allow_agent_mismatch, results_path=results_dir)
    notes = verdict_notes(loaded, baseline, agent, other, missing_baseline=missing_baseline,
                          harness_of=harness_of)
    states = {
        t.id: model.TaskState(t.id, t.number,
                             t.prompt_hash if t.prompt_path.is_file() else None, t.aspirational)
        for t in tasks
    }
    summaries = summarize_results(loaded, k)
    task_results = {
        task: model.TaskResult(summaries[task], frozenset(runs.prompt_hashes))
        for task, runs in loaded.items()
    }
    warnings = calibration.check_all(
        calibration.expected_rates(tasks),
        {task: [(s.recorded, s.passes, s.runs) for s in entry.history]
         for task, entry in baseline.entries.items()},
    ) if other is None else ()  # calibration reads a recorded baseline's history
    outcomes = (outcome for runs in loaded.values() for outcome in runs.outcomes())
    verdict = gate.compare(baseline, states, task_results, k=shown_k, agent=agent,
                           calibration=tuple(warnings), notes=notes,
                           broken=gate.setup_broken(outcomes), rules=rules)
    controls = {task: counts for task, counts in control_arm.load_control(results_dir).items()
                if task in loaded}
    records = main_record.records_of(main_history, verdict, today=dt.datetime.now(dt.timezone.utc).date())
    if records:  # main's record of its last pushes: the reference, and control evidence
        verdict = main_record.with_record(verdict, records, controls, rules)
    elif controls:  # `run --control-ref`: the PR judged against main's agent now
        verdict = control.with_control(verdict, controls, rules)
    tokens = [s.total_tokens for s in summaries.values() if s.total_tokens is not None]
    costs = [s.total_cost_usd for s in summaries.values() if s.total_cost_usd is not None]
    return dataclasses.replace(verdict, total_tokens=sum(tokens) if tokens else None,
                               total_cost_usd=math.fsum(costs) if costs else None,
                               against=other)
