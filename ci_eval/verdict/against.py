"""`compare --against RESULTS`: another agent's results on the same tasks, taken as the baseline
the gate compares with. Each task's entry is that agent's valid runs (passes/runs, per-run cost,
tokens and wall), so the verdict is the gate's own (verdict/gate.py, verdict/axes.py): a task
regresses when this agent's pass rate is more than gate.regression_threshold below the other
agent's, a task the other agent passes below gate.min_baseline_rate is shown but not gated, and
cost / tokens / wall are judged with the same rank test. baseline_of is pure; load_against
reads the folder."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.results import stream
from ci_eval.results.summary import TaskSummary, summarize_results
from ci_eval.verdict.baseline import Baseline, BaselineEntry


@dataclass(frozen=True)
class Against:
    """The other agent's side of the comparison."""

    baseline: Baseline
    results_dir: Path
    summaries: Mapping[str, TaskSummary]
    notes: tuple[str, ...] = ()

    @property
    def total_cost_usd(self) -> float | None:
        costs = [s.total_cost_usd for s in self.summaries.values() if s.total_cost_usd is not None]
        return math.fsum(costs) if costs else None

    @property
    def passes(self) -> int:
        return sum(s.passes for s in self.summaries.values())

    @property
    def runs(self) -> int:
        return sum(s.runs for s in self.summaries.values())


def baseline_of(agent: str | None, summaries: Mapping[str, TaskSummary],
                prompt_hashes: Mapping[str, set[str]],
                current_prompts: Mapping[str, str | None]) -> tuple[Baseline, tuple[str, ...]]:
    """(the entries the gate compares with, notes). A task whose runs used several prompts is
    entered with today's prompt when it is among them (else the gate reports prompt-changed);
    a task with no valid run has no entry (it shows as new) and gets a note."""
    entries, notes = {}, []
    for task, summary in sorted(summaries.items()):
        if summary.runs == 0:
            notes.append(f"{task}: no valid run of {agent or 'the other agent'} "
                         f"({summary.errors} errored): not compared")
            continue
        if summary.inconclusive:
            notes.append(f"{task}: {agent or 'the other agent'} has {summary.runs} valid run(s) "
                         f"of {summary.requested}; compared with those")
        hashes = prompt_hashes.get(task) or set()
        current = current_prompts.get(task)
        prompt = current if current in hashes else min(hashes, default="")
        entries[task] = BaselineEntry(
            task=task, passes=summary.passes, runs=summary.runs, recorded="", prompt_hash=prompt,
            avg_tokens=summary.mean_tokens, avg_wall_seconds=summary.mean_wall_seconds,
            distributions=dict(summary.distributions))
    return Baseline(agent=agent, entries=entries), tuple(notes)


def load_against(against_dir: Path, current_prompts: Mapping[str, str | None], *,
                 k: int | None = None, selected: set[str] | None = None) -> Against:
    """Read the other agent's results folder (refused when it holds none)."""
    loaded = stream.load_runs(against_dir)
    if not loaded:
        raise UserError("no *.jsonl results in the folder", path=against_dir, field="--against")
    if selected is not None:
        loaded = {task: runs for task, runs in loaded.items() if task in selected}
    summaries = summarize_results(loaded, k)
    baseline, notes = baseline_of(stream.agent_of(loaded), summaries,
                                  {task: runs.prompt_hashes for task, runs in loaded.items()},
                                  current_prompts)
    return Against(baseline, Path(against_dir), summaries, notes)
