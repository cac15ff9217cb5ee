"""results/ + baseline.json + tasks/ -> the new baseline.json (`ci-eval baseline update`, and the
baseline dispatch's `propose-baseline`): which tasks are recorded, refused or unchanged, and why.
The decision per task is verdict/baseline.updated_entry's; this module loads and saves."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.results import stream
from ci_eval.results.summary import summarize_results
from ci_eval.tasks.load import load_tasks
from ci_eval.tasks.model import other_prompts
from ci_eval.verdict import gate
from ci_eval.verdict.harness_changes import recorded_harness
from ci_eval.verdict.baseline import (
    RECOMMENDED_RUNS,
    RECORD_THRESHOLD,
    Baseline,
    baseline_path,
    load_baseline,
    save_baseline,
    updated_entry,
)


@dataclass(frozen=True)
class BaselineUpdate:
    lines: tuple[str, ...]  # one per task ("TASK: added ..."), then notes
    outcome: str            # wrote PATH / PATH unchanged / not written, with the tally
    refused: int


def update_baseline(root: Path, tasks: list[str], *, every: bool, results_dir: Path,
                    baseline_file: str | None, recorded: str, k: int | None = None,
                    allow_below_threshold: bool = False,
                    allow_agent_mismatch: bool = False,
                    min_baseline_rate: Fraction = RECORD_THRESHOLD,
                    harness_of: Callable[[str], Mapping[str, str] | None] | None = None
                    ) -> BaselineUpdate:
    """Record the named tasks (or, with `every`, each task that has results) from results_dir
    into the baseline file, dated `recorded`. Bad input is a UserError naming file and field;
    nothing is written then. min_baseline_rate: ci-eval.yaml's gate.min_baseline_rate.
    harness_of(agent): the repo's harness of that agent now ({file: digest}, or None), recorded
    with the results' harness digest when it is theirs (harness_changes.recorded_harness)."""
    if every == bool(tasks):
        raise UserError("name the tasks to record, or pass --all (not both)", field="TASK")
    all_tasks = load_tasks(root)
    selected = all_tasks if every else load_tasks(root, tasks)
    loaded = stream.load_runs(results_dir)  # streamed: per-task rows, no diffs held
    path = baseline_path(root, baseline_file)
    if path.exists() and not path.is_file():
        raise UserError("is a folder, expected the baseline file (or nothing, to start one)",
                        path=path, field="--baseline")
    existed = path.exists()
    baseline = load_baseline(path) if existed else Baseline()

    missing = [t.id for t in selected if not loaded.get(t.id)]
    if missing and not every:
        raise UserError(f"no results for {', '.join(missing)}", path=results_dir,
                        field="--results")
    with_results = [t for t in selected if loaded.get(t.id)]
    if not with_results:
        raise UserError("no results for any task in tasks/", path=results_dir, field="--results")
    agent = gate.check_agents(baseline.agent, stream.agent_of(loaded),
                              allow_mismatch=allow_agent_mismatch, results_path=results_dir)
    entries, lines, counts = record_tasks(
        with_results, loaded, summarize_results(loaded, k), baseline.entries, recorded=recorded,
        allow_below_threshold=allow_below_threshold, threshold=min_baseline_rate)
    lines += [f"{task_id}: skipped: no results" for task_id in missing]
    lines += closing_notes(entries, baseline, all_tasks if every else None)
    accepted = counts.get("added", 0) + counts.get("updated", 0) + counts.get("unchanged", 0)
    if agent and baseline.agent and agent != baseline.agent and not accepted:
        # every task refused: another agent's observations do not go into this agent's baseline
        entries = dict(baseline.entries)
        lines.append(f"note: nothing accepted: the baseline stays {baseline.agent!r}'s")
    new_agent = agent or baseline.agent
    recorded_any = counts.get("added", 0) + counts.get("updated", 0) > 0
    harness, harness_note = recorded_harness(
        {digest for task in with_results for digest in loaded[task.id].harnesses},
        harness_of(agent) if harness_of and agent else None)
    if harness_note:
        lines.append(harness_note)
    harness = harness if recorded_any else baseline.harness
    agent_switch = bool(baseline.agent) and new_agent != baseline.agent and counts.get("unchanged")
    observed_any = entries != baseline.entries  # e.g. a refused task's new observation
    changed = recorded_any or agent_switch or observed_any
    if changed and agent and baseline.agent and agent != baseline.agent:
        lines.append(f"note: the baseline's agent changes from {baseline.agent!r} to {agent!r}")
    tally = ", ".join(f"{n} {a}" for a, n in sorted(counts.items()))
    # relative to the repo root: these lines go into the baseline PR's body, where the runner's
    # absolute path means nothing
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    if changed:
        save_baseline(path, Baseline(agent=new_agent, entries=entries, harness=harness))
        outcome = f"wrote {shown}: {tally}"
    elif existed:
        outcome = f"{shown} unchanged: {tally}"
    else:
        outcome = f"{shown} not written (no baseline yet, nothing recorded): {tally}"
    return BaselineUpdate(tuple(lines), outcome, counts.get("refused", 0))


def record_tasks(tasks, loaded, summaries, entries, *, recorded: str,
                 allow_below_threshold: bool, threshold: Fraction):
    """(the entries with each task's results recorded or refused, a line per task, how many
    tasks ended in each action)."""
    entries = dict(entries)
    lines = []
    counts: dict[str, int] = {}
    for task in tasks:
        if not task.prompt_path.is_file():
            raise UserError("missing prompt.md (its hash is part of the baseline)",
                            path=task.prompt_path)
        summary = summaries[task.id]
        reason = _refusal(task, summary, loaded[task.id].prompt_hashes)
        if reason:
            action, message = "refused", f"refused: {reason}"
        else:
            change = updated_entry(
                entries.get(task.id),
                task=task.id,
                passes=summary.passes,
                runs=summary.runs,
                recorded=recorded,
                prompt_hash=task.prompt_hash,
                avg_tokens=summary.mean_tokens,
                avg_wall_seconds=summary.mean_wall_seconds,
                allow_below_threshold=allow_below_threshold,
                distributions=summary.distributions,
                threshold=threshold,
            )
            action, message = change.action, change.message
            if change.stored is not None:
                entries[task.id] = change.stored  # refusals keep the gate, add the observation
        counts[action] = counts.get(action, 0) + 1
        lines.append(f"{task.id}: {message}")
    return entries, lines, counts


def closing_notes(entries, baseline: Baseline, all_tasks) -> list[str]:
    """Entries whose task folder is gone (with --all: `all_tasks`), and entries recorded now
    from fewer than RECOMMENDED_RUNS runs."""
    lines = []
    if all_tasks is not None:
        stale = sorted(set(entries) - {t.id for t in all_tasks})
        if stale:
            lines.append(f"note: baseline entries with no task folder, left as they are: "
                         f"{', '.join(stale)}")
    few = sorted(t for t, e in entries.items() if e.runs < RECOMMENDED_RUNS
                 and (t not in baseline.entries or e.snapshot != baseline.entries[t].snapshot))
    if few:
        lines.append(f"note: {len(few)} task(s) recorded from fewer than {RECOMMENDED_RUNS} runs; "
                     "such baselines make the gate noisier (see docs/gate.md)")
    return lines


def _refusal(task, summary, prompt_hashes) -> str:
    """Why a task's results cannot become its baseline; "" when they can."""
    if summary.runs == 0 or summary.inconclusive:
        return (f"inconclusive ({summary.runs} valid run(s) of {summary.requested}, "
                f"{summary.errors} error(s)); not recorded")
    if other_prompts(prompt_hashes, task.prompt_hash):
        return "the results were run with another prompt.md than tasks/ holds now; rerun"
    return ""
