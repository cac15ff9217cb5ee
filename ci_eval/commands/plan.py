"""`ci-eval plan`: split the tasks into N balanced shards -> the job matrix for GitHub Actions."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_baseline_argument,
    add_json_argument,
    add_root_argument,
    add_tasks_argument,
    positive_int,
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="split the tasks into balanced shards (the matrix of the eval workflow)",
        description="Assign the tasks to at most N shards, longest first by the baseline's "
        "avg_wall_seconds x runs (tasks without a recorded duration count as the median), "
        "deterministically: `ci-eval run --shard I/N` computes the same assignment. Never more "
        "shards than tasks, at most 256. --github-output also writes the outputs `matrix` "
        "(for fromJSON in the next job), `shards`, `plan` (each shard's tasks, for the report: "
        "a shard that uploads nothing is named there) and `skip` to $GITHUB_OUTPUT; for a pull "
        "request from a fork or by Dependabot (no secrets reach those runs) it writes "
        "skip=true and a notice instead of a plan. Exit 0, 2 on bad input.",
    )
    add_root_argument(parser)
    add_tasks_argument(parser)
    parser.add_argument("--shards", type=positive_int, required=True, metavar="N",
                        help="shards wanted (1-256; fewer when there are fewer tasks)")
    add_baseline_argument(parser, "baseline with the recorded durations, relative to --root "
                          "(default baseline.json; missing = every task counts the same)")
    parser.add_argument("-k", type=positive_int, default=5, metavar="N",
                        help="runs per task, for the expected seconds shown (default 5)")
    add_json_argument(parser, "print the plan as JSON")
    parser.add_argument("--github-output", action="store_true",
                        help="also write matrix, shards and skip to $GITHUB_OUTPUT")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from ci_eval.errors import UserError
    from ci_eval.github import actions, context
    from ci_eval.run import shards
    from ci_eval.tasks.load import load_tasks
    from ci_eval.verdict.baseline import recorded_walls
    from ci_eval.verdict.planned_shards import plan_json

    shards.check_count(args.shards)
    root = Path(args.root)
    if args.github_output:
        skip = context.no_secrets_reason(context.from_env())
        if skip:
            actions.notice(f"ci-eval skipped: {skip}", title="ci-eval")
            actions.append_summary(f"### ⏭️ ci-eval skipped\n\n{skip}\n")
            actions.set_outputs({"skip": "true", "shards": "0",
                                 "matrix": json.dumps({"include": []})})
            print(f"ci-eval: skipped: {skip}", file=sys.stderr)
            return 0
    tasks = load_tasks(root, args.tasks)
    if not tasks:
        raise UserError("no tasks to plan", path=root / "tasks")
    ids = [t.id for t in tasks]
    plan = shards.build_plan(ids, recorded_walls(root, args.baseline, ids), args.shards,
                             args.k)
    if args.github_output:
        actions.set_outputs({"skip": "false", "shards": str(plan["shards"]),
                             "matrix": json.dumps(plan["matrix"], separators=(",", ":")),
                             "plan": plan_json(plan["plan"], plan["shards"]),
                             "idle": idle_reason_of(root, args.baseline)})
    if args.json:
        sys.stdout.write(json.dumps(plan, indent=2) + "\n")
        return 0
    head = f"{len(tasks)} task(s) over {plan['shards']} shard(s) (asked {args.shards})"
    if not plan["durations_known"]:
        print(f"{head}; no recorded durations in the baseline: the tasks are spread evenly")
    else:
        print(f"{head}; expected {plan['makespan_seconds']:.0f} s for the longest shard, "
              f"{plan['total_seconds']:.0f} s in all at k={args.k} ({plan['durations_known']} "
              "task(s) with a recorded duration, the others counted at the median)")
    for shard in plan["plan"]:
        cost = f"{shard['seconds']:.0f} s, " if plan["durations_known"] else ""
        print(f"  shard {shard['shard']}/{plan['shards']}: {cost}{len(shard['tasks'])} "
              f"task(s): {', '.join(shard['tasks'])}")
    return 0


def idle_reason_of(root, baseline: str | None) -> str:
    """For a pull request that changes nothing the default agent's verdict depends on (its
    harness, tasks/, the config, the baseline, the workflows): the one line the report posts
    instead of running any agent; "" when the tasks run (any other event, CI_EVAL_RUN_ALL=true,
    a relevant change, or changes that cannot be told)."""
    import os
    import sys

    from ci_eval.agents.harness_of import watched_paths
    from ci_eval.github import actions, context
    from ci_eval.github.pull_files import changed_paths
    from ci_eval.verdict.baseline import BASELINE_FILE
    from ci_eval.verdict.relevance import idle_reason, relevant_changes

    ctx = context.from_env()
    if ctx.event_name != "pull_request" or os.environ.get("CI_EVAL_RUN_ALL", "") == "true":
        return ""
    watched = watched_paths(root, baseline or BASELINE_FILE)
    changed, why = changed_paths(ctx) if watched is not None else (None, "")
    if changed is None or watched is None:
        print("ci-eval: every task runs (" + (f"the pull request's files are not known: {why}"
              if watched is not None else "what the default agent depends on is not known: a "
              "command agent without harness:, or no default_agent") + ")", file=sys.stderr)
        return ""
    relevant = relevant_changes(changed, watched)
    if relevant:
        print(f"ci-eval: every task runs: the pull request changes {', '.join(relevant[:5])}",
              file=sys.stderr)
        return ""
    reason = idle_reason(changed)
    actions.notice(reason, title="ci-eval")
    print(f"ci-eval: {reason}", file=sys.stderr)
    return reason
