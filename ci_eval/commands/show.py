"""`ci-eval show TASK [RUN]`: one run's status, reason, usage, the end of its agent log, and its diff."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_json_argument,
    add_results_argument,
    add_root_argument,
    positive_int,
)

LOG_TAIL_LINES = 40


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "show",
        help="show one run: status, reason, usage, agent log tail, diff",
        description="Print what one recorded run did: its status and reason, tokens and cost, "
        "the agent's exit code and outcome, the last lines of its log (results/logs/TASK/RUN.log) "
        "and the diff it made. RUN defaults to the last run that did not pass (else the last "
        "run). Exit 0, 2 on bad input.",
    )
    add_root_argument(parser)
    add_results_argument(parser)
    parser.add_argument("task", metavar="TASK", help="task id, task-NNN or NNN")
    parser.add_argument("run_no", metavar="RUN", nargs="?", type=positive_int,
                        help="run number (default: the last one that did not pass)")
    parser.add_argument("--lines", type=positive_int, default=LOG_TAIL_LINES, metavar="N",
                        help=f"log lines shown (default {LOG_TAIL_LINES})")
    parser.add_argument("--no-diff", action="store_true", help="leave the diff out")
    add_json_argument(parser, "print the record and log as JSON")
    parser.set_defaults(handler=run)


def pick_run(records: list[dict], run_no: int | None) -> dict | None:
    """The asked run, else the last one that did not pass, else the last one."""
    if run_no is not None:
        return next((r for r in records if r["run"] == run_no), None)
    failing = [r for r in records if r["status"] != "pass"]
    chosen = failing or records
    return chosen[-1] if chosen else None


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from ci_eval.errors import UserError
    from ci_eval.render.inert import json_line_breaks, terminal_text
    from ci_eval.results import store as results
    from ci_eval.run.context import LOGS
    from ci_eval.tasks.load import load_tasks

    root = Path(args.root)
    (task,) = load_tasks(root, [args.task])
    results_dir = root / args.results
    path = results.results_path(results_dir, task.id)
    if not path.exists():
        raise UserError(f"no results for {task.id}", path=results_dir, field="--results")
    records = sorted(results.read_records(path), key=lambda r: r["run"])
    record = pick_run(records, args.run_no)
    if record is None:
        raise UserError(f"no run {args.run_no} recorded for {task.id} (runs: "
                        f"{', '.join(str(r['run']) for r in records)})", path=path, field="RUN")
    log_path = results_dir / LOGS / task.id / f"{record['run']}.log"
    tail = _log_tail(log_path, args.lines)
    if args.json:
        print(json_line_breaks(json.dumps(
            {"record": record, "log_tail": tail, "log_path": str(log_path)}, indent=2,
            ensure_ascii=False)))
        return 0
    out = _record_lines(root, task.id, record)
    out.append(f"\n--- agent log (last {len(tail)} lines of {log_path}) ---" if tail
               else f"\n--- no agent log ({log_path}) ---")
    out += tail
    if not args.no_diff:
        diff = record.get("diff") or ""
        cut = " (cut at the cap)" if record.get("diff_truncated") else ""
        out.append(f"\n--- diff{cut} ---" if diff else "\n--- no change ---")
        if diff:
            out.append(diff.rstrip("\n"))
    sys.stdout.write(terminal_text("\n".join(out)) + "\n")
    return 0


def _log_tail(log_path, lines: int) -> list[str]:
    """The last `lines` lines of the agent's log, as a CI log shows them (\r too)."""
    from ci_eval.output import UntrustedFile, read_capped

    try:
        log = (read_capped(log_path, 1024 * 1024) or b"").decode("utf-8", errors="replace")
    except UntrustedFile as exc:
        log = f"(log not shown: {exc})"
    # each line is made inert when printed
    tail = log.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return (tail[:-1] if tail and not tail[-1] else tail)[-lines:]


def _record_lines(root, task_id: str, record: dict) -> list[str]:
    """The run's status, reason, usage, harness, the agent's exit and its retried errors."""
    from ci_eval.agents.harness_of import recorded_harness_line
    from ci_eval.render.report import fmt_money

    out = [f"{task_id} run {record['run']} (attempt {record.get('attempt', 1)}): "
           f"{record['status']}"]
    if record.get("reason"):
        out.append(f"reason: {record['reason']}")
    usage = [f"tokens {record['tokens']}" if record.get("tokens") is not None else "tokens -",
             f"cost {fmt_money(record.get('cost_usd'))}"
             + (f" ({record['cost_source']})" if record.get("cost_source") else ""),
             f"wall {record.get('wall_seconds', '-')}s"]
    out.append("usage: " + ", ".join(usage))
    if isinstance(record.get("harness"), str):
        out.append(recorded_harness_line(root, record["agent"], record["harness"]))
    if record.get("agent_exit_code") is not None or record.get("agent_outcome"):
        outcome = ", ".join(f"{k}={v}" for k, v in (record.get("agent_outcome") or {}).items())
        out.append(f"agent: exit {record.get('agent_exit_code')}"
                   + (f", {outcome}" if outcome else ""))
    for earlier in record.get("retried_errors") or []:
        out.append(f"retried after: {earlier}")
    return out
