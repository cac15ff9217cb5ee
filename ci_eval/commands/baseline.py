"""`ci-eval baseline update|show`: the only writer of baseline.json, and a reader."""

from __future__ import annotations

import argparse

from ci_eval.main import add_results_argument, add_root_argument, positive_int


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "baseline",
        help="record (update) or show the baseline that compare gates against",
        description="`baseline update` records pass rates from a results folder into "
        "baseline.json; `baseline show` prints it.",
    )
    sub = parser.add_subparsers(dest="baseline_command", metavar="ACTION")
    sub.required = True

    update = sub.add_parser(
        "update",
        help="record tasks' pass rates from a results folder",
        description="Record TASK... (or --all tasks that have results) from --results into "
        "baseline.json, atomically, and say what changed. A task below 0.60 is not gated: "
        "if it had no gated entry it is recorded as aspirational; if it had one, the update is "
        "refused and the old entry stays (--allow-below-threshold records it as a gate). "
        "Tasks with fewer valid runs than asked (errors) are refused. Exit 0 (refusals are "
        "reported), 2 on bad input.",
    )
    add_root_argument(update)
    update.add_argument("tasks", nargs="*", metavar="TASK", help="task ids or numbers")
    update.add_argument("--all", action="store_true", help="every task that has results")
    add_results_argument(update)
    update.add_argument("--baseline", metavar="FILE",
                        help="baseline file, relative to --root (default baseline.json)")
    update.add_argument("--allow-below-threshold", action="store_true",
                        help="record (and gate) tasks whose pass rate is below 0.60")
    update.add_argument("--allow-agent-mismatch", action="store_true",
                        help="record results of another agent than the baseline's (the "
                        "baseline's agent becomes theirs)")
    update.add_argument("--date", metavar="YYYY-MM-DD",
                        help="recorded date (default: today, UTC)")
    update.add_argument("-k", type=positive_int, default=None, metavar="N",
                        help="valid runs asked of every task, overriding what `ci-eval run` "
                        "recorded; a task with fewer is refused (default: each task's own k, "
                        "or confirmation stage, recorded with its runs)")
    update.set_defaults(handler=run_update)

    show = sub.add_parser("show", help="print baseline.json as a table (or --json)",
                          description="Print the baseline: agent, and per task the pass rate, "
                          "runs, recorded date, gated or aspirational, tokens, wall seconds.")
    add_root_argument(show)
    show.add_argument("--baseline", metavar="FILE",
                      help="baseline file, relative to --root (default baseline.json)")
    show.add_argument("--json", action="store_true", help="print the validated file as JSON")
    show.set_defaults(handler=run_show)


def _parse_date(text: str | None) -> str:
    import datetime

    from ci_eval.errors import UserError

    if text is None:
        return datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise UserError(f"expected a date YYYY-MM-DD, got {text!r}", field="--date") from None


def run_update(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from ci_eval.errors import UserError
    from ci_eval.results import stream
    from ci_eval.results.summary import summarize_results
    from ci_eval.tasks.load import load_tasks
    from ci_eval.verdict import gate
    from ci_eval.verdict.baseline import (
        RECOMMENDED_RUNS,
        Baseline,
        baseline_path,
        load_baseline,
        save_baseline,
        updated_entry,
    )

    if args.all == bool(args.tasks):
        raise UserError("name the tasks to record, or pass --all (not both)", field="TASK")
    recorded = _parse_date(args.date)
    root = Path(args.root)
    all_tasks = load_tasks(root)
    selected = all_tasks if args.all else load_tasks(root, args.tasks)
    results_dir = root / args.results
    loaded = stream.load_runs(results_dir)  # streamed: per-task rows, no diffs held
    path = baseline_path(root, args.baseline)
    if path.exists() and not path.is_file():
        raise UserError("is a folder, expected the baseline file (or nothing, to start one)",
                        path=path, field="--baseline")
    existed = path.exists()
    baseline = load_baseline(path) if existed else Baseline()

    missing = [t.id for t in selected if not loaded.get(t.id)]
    if missing and not args.all:
        raise UserError(f"no results for {', '.join(missing)}", path=results_dir,
                        field="--results")
    with_results = [t for t in selected if loaded.get(t.id)]
    if not with_results:
        raise UserError("no results for any task in tasks/", path=results_dir, field="--results")
    agent = gate.check_agents(
        baseline.agent,
        (agent for t in with_results for agent in sorted(loaded[t.id].agents)),
        allow_mismatch=args.allow_agent_mismatch,
        results_path=results_dir,
    )
    summaries = summarize_results(loaded, args.k)

    entries = dict(baseline.entries)
    lines = []
    counts: dict[str, int] = {}
    for task in with_results:
        if not task.prompt_path.is_file():
            raise UserError("missing prompt.md (its hash is part of the baseline)",
                            path=task.prompt_path)
        runs = loaded[task.id]
        summary = summaries[task.id]
        old = entries.get(task.id)
        reason = _refusal(task, summary, runs.prompt_hashes)
        if reason:
            action, message = "refused", f"refused: {reason}"
        else:
            change = updated_entry(
                old,
                task=task.id,
                passes=summary.passes,
                runs=summary.runs,
                recorded=recorded,
                prompt_hash=task.prompt_hash,
                avg_tokens=summary.mean_tokens,
                avg_wall_seconds=summary.mean_wall_seconds,
                allow_below_threshold=args.allow_below_threshold,
            )
            action, message = change.action, change.message
            if change.stored is not None:
                entries[task.id] = change.stored  # refusals keep the gate, add the observation
        counts[action] = counts.get(action, 0) + 1
        lines.append(f"{task.id}: {message}")
    for task_id in missing:
        lines.append(f"{task_id}: skipped: no results")
    if args.all:
        known = {t.id for t in all_tasks}
        stale = sorted(set(entries) - known)
        if stale:
            lines.append(f"note: baseline entries with no task folder, left as they are: "
                         f"{', '.join(stale)}")
    few = sorted(t for t, e in entries.items() if e.runs < RECOMMENDED_RUNS
                 and (t not in baseline.entries or e.snapshot != baseline.entries[t].snapshot))
    if few:
        lines.append(f"note: {len(few)} task(s) recorded from fewer than {RECOMMENDED_RUNS} runs; "
                     "such baselines make the gate noisier (see docs/gate.md)")
    new_agent = agent or baseline.agent
    recorded_any = counts.get("added", 0) + counts.get("updated", 0) > 0
    agent_switch = bool(baseline.agent) and new_agent != baseline.agent and counts.get("unchanged")
    observed_any = entries != baseline.entries  # e.g. a refused task's new observation
    changed = recorded_any or agent_switch or observed_any
    if changed and agent and baseline.agent and agent != baseline.agent:
        lines.append(f"note: the baseline's agent changes from {baseline.agent!r} to {agent!r}")
    print("\n".join(lines))
    tally = ", ".join(f"{n} {a}" for a, n in sorted(counts.items()))
    if changed:
        save_baseline(path, Baseline(agent=new_agent, entries=entries))
        print(f"wrote {path}: {tally}")
    elif existed:
        print(f"{path} unchanged: {tally}")
    else:
        print(f"{path} not written (no baseline yet, nothing recorded): {tally}")
    if counts.get("refused"):
        print(f"ci-eval: {counts['refused']} task(s) refused; see above", file=sys.stderr)
    return 0


def _refusal(task, summary, prompt_hashes) -> str:
    """Why a task's results cannot become its baseline; "" when they can."""
    if summary.runs == 0 or summary.inconclusive:
        return (f"inconclusive ({summary.runs} valid run(s) of {summary.requested}, "
                f"{summary.errors} error(s)); not recorded")
    from ci_eval.tasks.model import other_prompts

    if other_prompts(prompt_hashes, task.prompt_hash):
        return "the results were run with another prompt.md than tasks/ holds now; rerun"
    return ""


def run_show(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from tabulate import tabulate

    from ci_eval.tasks.model import short_hash
    from ci_eval.verdict.baseline import baseline_path, dumps_baseline, load_baseline

    path = baseline_path(Path(args.root), args.baseline)
    baseline = load_baseline(path)
    if args.json:
        sys.stdout.write(dumps_baseline(baseline))
        return 0
    rows = []
    for task in sorted(baseline.entries):
        e = baseline.entries[task]
        rows.append([
            task,
            f"{float(e.pass_rate):.2f} ({e.passes}/{e.runs})",
            "aspirational" if e.aspirational else "gated",
            e.recorded,
            "—" if e.avg_tokens is None else f"{e.avg_tokens:.0f}",
            "—" if e.avg_wall_seconds is None else f"{e.avg_wall_seconds:.1f}",
            len(e.history),
            short_hash(e.prompt_hash),
        ])
    print(f"{path}: agent {baseline.agent or 'none'}, {len(rows)} task(s)")
    if rows:
        print(tabulate(rows, headers=["Task", "Pass rate", "Gate", "Recorded", "Avg tokens",
                                      "Avg wall s", "Snapshots", "Prompt"],
                       tablefmt="simple", disable_numparse=True))
    return 0
