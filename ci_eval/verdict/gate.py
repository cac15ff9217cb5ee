"""The gate (pure): per-task results against baseline entries -> a status per task and a Verdict
(the data in and out: verdict/model.py).

The rule (exact fractions, never floats): a task regresses when its pass rate over all its valid
runs is more than 0.30 below its baseline. 0.80 -> 0.50 is a drop of exactly 0.30 and passes;
8/10 -> 5/10 too. A rise of more than 0.30 is "improved". 0.30 is the default of ci-eval.yaml's
gate.regression_threshold, and 0.60, the rate below which a baseline is not gated, of
gate.min_baseline_rate (verdict/rules.py): `compare` takes them as GateRules.

Besides the pass rate, each task's cost, tokens and wall time are judged against the baseline's
per-run distributions (verdict/axes.py): TaskVerdict.axes. A regressed axis fails the gate
only when its rule says `fail: true`, and only for a gated task.

Statuses, in the order reports list them:
  regressed       gated, rate dropped more than 0.30 below the baseline          -> fails
  inconclusive    gated, fewer valid runs than asked (errors, missing results)    -> fails
  prompt-changed  prompt.md (or the results' prompt_hash) differs from the baseline's -> fails
  improved        rate rose more than 0.30 above the baseline
  new             no baseline entry (includes the new name of a renamed task)
  missing         baseline entry, but the task folder is gone and there are no results
  aspirational    metadata says aspirational, or the entry was recorded below 0.60: shown, never gated
  unchanged       everything else
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from fractions import Fraction

from ci_eval.errors import UserError
from ci_eval.results.summary import TaskSummary
from ci_eval.tasks.model import other_prompts, short_hash
from ci_eval.verdict.axes import AxisVerdict, axis_statuses, unknown_axes
from ci_eval.verdict.baseline import Baseline, BaselineEntry
from ci_eval.verdict.model import TaskResult, TaskState, TaskStatus, TaskVerdict, Verdict
from ci_eval.verdict.rules import DEFAULT_REGRESSION_THRESHOLD, DEFAULT_RULES, GateRules

REGRESSION_DROP = DEFAULT_REGRESSION_THRESHOLD  # the shipped default (gate.regression_threshold)

# --- the rule ---------------------------------------------------------------------------------


def is_regression(baseline_rate: Fraction, current_rate: Fraction,
                  threshold: Fraction = REGRESSION_DROP) -> bool:
    """True when the rate dropped MORE than the threshold (0.30) below the baseline (exactly
    the threshold passes)."""
    return Fraction(baseline_rate) - Fraction(current_rate) > threshold


def is_improvement(baseline_rate: Fraction, current_rate: Fraction,
                   threshold: Fraction = REGRESSION_DROP) -> bool:
    """True when the rate rose MORE than the threshold: the rule the other way round."""
    return Fraction(current_rate) - Fraction(baseline_rate) > threshold


def rate_status(baseline_rate: Fraction, passes: int, runs: int,
                threshold: Fraction = REGRESSION_DROP) -> TaskStatus:
    """"regressed" | "improved" | "unchanged" for passes/runs (runs >= 1) against a baseline."""
    rate = Fraction(passes, runs)
    if is_regression(baseline_rate, rate, threshold):
        return "regressed"
    if is_improvement(baseline_rate, rate, threshold):
        return "improved"
    return "unchanged"


def gated_baseline_rate(entry: BaselineEntry | None, *, aspirational: bool = False,
                        rules: GateRules = DEFAULT_RULES) -> Fraction | None:
    """The rate a task is gated against, or None when it is not gated (no entry, an aspirational
    entry, an entry below rules.min_baseline_rate, or `aspirational` in its metadata). What
    confirmation.runs_to_add takes."""
    if entry is None or aspirational or not is_gated_entry(entry, rules):
        return None
    return entry.pass_rate


def is_gated_entry(entry: BaselineEntry, rules: GateRules = DEFAULT_RULES) -> bool:
    """An entry gates unless it was recorded as aspirational or its rate is below
    min_baseline_rate (a threshold raised in ci-eval.yaml applies without a new baseline)."""
    return not entry.aspirational and entry.pass_rate >= rules.min_baseline_rate


def check_agents(baseline_agent: str | None, agent: str | None, *, allow_mismatch: bool,
                 results_path: object = None) -> str | None:
    """The results' agent (one per folder: results/records.one_agent), refused when it differs
    from the baseline's without allow_mismatch."""
    if agent and baseline_agent and agent != baseline_agent and not allow_mismatch:
        raise UserError(
            f"results were recorded with agent {agent!r} but the baseline with "
            f"{baseline_agent!r} (--allow-agent-mismatch compares them anyway)",
            path=results_path, field="agent",
        )
    return agent


# --- classification ---------------------------------------------------------------------------


def classify(
    task: str,
    entry: BaselineEntry | None,
    state: TaskState | None,
    result: TaskResult | None,
    rules: GateRules = DEFAULT_RULES,
) -> TaskVerdict:
    """The status of one task. entry: its baseline entry; state: its folder in tasks/ (None when
    there is none); result: its results (None when there are none)."""
    base, current = _verdict_fields(entry, result)
    aspirational = bool(state and state.aspirational) or bool(
        entry and not is_gated_entry(entry, rules))
    gated = entry is not None and not aspirational
    axes: tuple[AxisVerdict, ...] = ()
    if entry is None or result is None:
        pass
    elif _changed_prompt(entry, state, result):
        axes = unknown_axes(rules.axes, "another prompt than the baseline's")
    else:
        axes = axis_statuses(rules.axes, entry.distributions, result.summary.distributions)
    base["axes"] = axes
    notes = []
    if state is None and result is not None:
        notes.append("not in tasks/")
    if result is not None and result.summary.agent_nonzero:
        recorded = result.summary.runs + result.summary.errors
        notes.append(f"agent exited non-zero in {result.summary.agent_nonzero} of {recorded} runs")

    def verdict(status: TaskStatus, *extra: str) -> TaskVerdict:
        return TaskVerdict(task=task, status=status, gated=gated,
                           note="; ".join([*notes, *extra]), **base, **current)

    if entry is None:
        if state is not None and state.aspirational:
            return verdict("aspirational", "aspirational (metadata), no baseline")
        return verdict("new", "no baseline" + ("" if result else ", no results"))
    changed = _changed_prompt(entry, state, result)
    if changed:
        return verdict("prompt-changed", changed)
    if result is None:
        if state is None:
            return verdict("missing", "baseline entry, but no task folder and no results")
        if aspirational:
            return verdict("aspirational", _why_aspirational(state, entry, rules), "no results")
        return verdict("inconclusive", "no results")
    summary = result.summary
    error_note = f"{summary.errors} errored run(s)" if summary.errors else ""
    if aspirational:
        return verdict("aspirational", _why_aspirational(state, entry, rules),
                       *filter(None, [error_note]))
    if summary.runs == 0 or summary.inconclusive:
        return verdict("inconclusive",
                       f"{summary.runs} valid run(s) of {summary.requested}",
                       *filter(None, [error_note]))
    status = rate_status(entry.pass_rate, summary.passes, summary.runs,
                         rules.regression_threshold)
    return verdict(status, *filter(None, [error_note]))


def _verdict_fields(entry: BaselineEntry | None, result: TaskResult | None) -> tuple[dict, dict]:
    """A TaskVerdict's fields from the baseline entry, and from the results."""
    base = {}
    if entry is not None:
        base = {"baseline_passes": entry.passes, "baseline_runs": entry.runs,
                "baseline_tokens": entry.avg_tokens,
                "baseline_wall_seconds": entry.avg_wall_seconds}
    current = {}
    if result is not None:
        s = result.summary
        current = {"passes": s.passes, "runs": s.runs, "errors": s.errors,
                   "requested": s.requested, "tokens": s.mean_tokens,
                   "wall_seconds": s.mean_wall_seconds, "why": _why(s),
                   "rubric_runs": s.rubric_runs, "rubric_score": s.mean_rubric_score,
                   "rubric_tripped": s.rubric_tripped, "rubric_auto_fail": s.rubric_auto_fail}
    return base, current


def _why(summary: TaskSummary) -> str:
    if not summary.failure_reasons:
        return ""
    reason, runs = summary.failure_reasons[0]
    return f"{runs}× {reason}"


def setup_broken(outcomes: Iterable[tuple[str, bool, object]]) -> str | None:
    """The reason, when every run of the suite (at least two) errored or had its agent exit
    non-zero, all for the same reason: then the agent never worked (a missing key, a crash at
    start) and no task "regressed". None otherwise. `outcomes`: (status, agent exited non-zero,
    reason) of each run (summary.TaskRows.outcomes). The agent's part of a reason is its first
    "; "-separated part."""
    reasons = set()
    count = 0
    for status, exited, reason in outcomes:
        count += 1
        if status != "error" and not exited:
            return None
        reasons.add(str(reason or "").split("; ", 1)[0].strip())
        if len(reasons) > 1:
            return None
    return next(iter(reasons)) or "no reason given" if count >= 2 and reasons else None


def _why_aspirational(state: TaskState | None, entry: BaselineEntry, rules: GateRules) -> str:
    if state is not None and state.aspirational:
        return "aspirational (metadata)"
    if entry.aspirational:
        return f"aspirational (recorded below {float(rules.min_baseline_rate):.2f})"
    return f"aspirational (below gate.min_baseline_rate {float(rules.min_baseline_rate):.2f})"


def _changed_prompt(entry: BaselineEntry, state: TaskState | None,
                    result: TaskResult | None) -> str:
    if state is not None and state.prompt_hash is not None and \
            other_prompts([state.prompt_hash], entry.prompt_hash):
        return (f"prompt.md changed since the baseline ({short_hash(entry.prompt_hash)} -> "
                f"{short_hash(state.prompt_hash)}); frozen wording: add a new task instead")
    if result is not None:
        other = other_prompts(result.prompt_hashes, entry.prompt_hash)
        if other:
            return (f"results were run with another prompt ({short_hash(other[0])}) than the "
                    f"baseline's ({short_hash(entry.prompt_hash)})")
    return ""


def compare(
    baseline: Baseline,
    tasks: Mapping[str, TaskState],
    results: Mapping[str, TaskResult],
    *,
    k: int,
    agent: str | None = None,
    calibration: tuple = (),
    notes: tuple[str, ...] = (),
    broken: str | None = None,
    rules: GateRules = DEFAULT_RULES,
) -> Verdict:
    """Every task that has a baseline entry, a folder in tasks/ or results, classified; renamed
    tasks (a new task and a missing entry sharing the number or the prompt) are marked on both."""
    ids = sorted(set(baseline.entries) | set(tasks) | set(results))
    verdicts = {
        task: classify(task, baseline.entries.get(task), tasks.get(task), results.get(task),
                       rules)
        for task in ids
    }
    for old, new in _renames(baseline, tasks, verdicts):
        verdicts[old] = _with_note(verdicts[old], f"renamed to {new}?")
        verdicts[new] = _with_note(verdicts[new], f"renamed from {old}? its baseline is not "
                                   "carried over")
    return Verdict(
        tasks=tuple(verdicts[t] for t in ids),
        k=k,
        agent=agent,
        baseline_agent=baseline.agent,
        calibration=tuple(calibration),
        notes=tuple(notes),
        setup_broken=broken,
        rules=rules,
    )


def _renames(baseline: Baseline, tasks: Mapping[str, TaskState],
             verdicts: Mapping[str, TaskVerdict]) -> list[tuple[str, str]]:
    gone = [t for t, v in verdicts.items() if v.status == "missing"]
    added = [t for t, v in verdicts.items() if t in tasks and t not in baseline.entries]
    pairs = []
    for old in gone:
        entry = baseline.entries[old]
        number = _number(old)
        for new in added:
            state = tasks[new]
            if (number is not None and state.number == number) or (
                state.prompt_hash and state.prompt_hash == entry.prompt_hash
            ):
                pairs.append((old, new))
                added.remove(new)
                break
    return pairs


def _number(task_id: str) -> int | None:
    parts = task_id.split("-")
    return int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else None


def _with_note(verdict: TaskVerdict, text: str) -> TaskVerdict:
    note = f"{verdict.note}; {text}" if verdict.note else text
    return replace(verdict, note=note)
