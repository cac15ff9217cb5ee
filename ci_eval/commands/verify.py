"""`ci-eval verify`: prove tasks valid (fails untouched, passes with solution, fails negatives)."""

from __future__ import annotations

from ci_eval.cli_options import (
    add_json_argument,
    add_root_argument,
    add_runner_argument,
    add_tasks_argument,
    positive_int,
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="prove that tasks' checks tell the solution from the untouched state and negatives",
        description="For each task, in fresh workspaces: checks must fail on the untouched "
        "repo-state, pass after solution/, fail after each negatives/ entry, and give the same "
        "verdict twice on the same state. A task with rubric.yaml is judged by its checks "
        "and its rubric. A task that declares fail_to_pass / pass_to_pass tests gets a table of "
        "each test's outcome on the untouched state (BASE) and after solution/ (GOLDEN), and is "
        "invalid when a fail_to_pass test already passes at BASE or a pass_to_pass test does "
        "not. One line per task; exit 1 if a task is invalid, 2 on bad input.",
    )
    add_root_argument(parser)
    add_tasks_argument(parser)
    parser.add_argument("-j", "--jobs", type=positive_int, default=None,
                        help="check runs at once, across tasks and their states (default: "
                        "number of CPUs)")
    add_runner_argument(parser)
    add_json_argument(parser, "print a JSON report")
    parser.set_defaults(handler=run)


def run(args) -> int:
    import json
    import os
    import sys
    from pathlib import Path

    from ci_eval.agents.config_file import load_config
    from ci_eval.errors import EXIT_FAILED, EXIT_OK, UserError
    from ci_eval.grading.testids import short_outcome
    from ci_eval.run.grade import check_gradings
    from ci_eval.run.runners import Runners
    from ci_eval.run.sandbox import isolation
    from ci_eval.run.verify import verify_tasks
    from ci_eval.tasks.load import load_tasks

    config = load_config(Path(args.root))
    tasks = load_tasks(Path(args.root), args.tasks)
    if not tasks:
        raise UserError("no tasks to verify", path=Path(args.root) / "tasks")
    check_gradings(tasks)
    iso = isolation.detect()
    for notice in iso.notices:
        print(f"ci-eval: NOTICE: {notice}", file=sys.stderr)
    jobs = args.jobs or os.cpu_count() or 1
    verdicts = []
    runners = Runners.of(iso, None, args.runner, config.runner,
                         checks_host_home=config.checks_home == "host")
    runners.prepare(tasks, progress=lambda line: print(f"ci-eval: {line}", file=sys.stderr))
    verdicts = _verify_all(verify_tasks(tasks, iso, config.checks_env, runners.for_task, jobs),
                           args.json, short_outcome)
    invalid = [v for v in verdicts if not v.valid]
    if args.json:
        print(json.dumps({"valid": not invalid, "tasks": [v.to_json() for v in verdicts]}, indent=2))
    else:
        print(f"{len(verdicts) - len(invalid)}/{len(verdicts)} tasks valid")
    return EXIT_FAILED if invalid else EXIT_OK


def _verify_all(verified, quiet, short_outcome) -> list:
    """The tasks' verdicts; a line per task as it is done (not with --json)."""
    verdicts = []
    for verdict in verified:
        verdicts.append(verdict)
        if not quiet:
            mark = "ok     " if verdict.valid else "INVALID"
            detail = f"{verdict.states} states, {verdict.seconds:.1f}s"
            if verdict.problems:
                detail = "; ".join(verdict.problems)
            print(f"{mark} {verdict.task}: {detail}", flush=True)
            for line in _details(verdict, short_outcome):
                print(line, flush=True)
    return verdicts


def _details(verdict, short_outcome) -> list[str]:
    """The per-test table (declared tests) and the rubric score of each state (rubric tasks)."""
    lines = []
    if verdict.tests:
        lines.append("        BASE    GOLDEN  TEST")
        lines += [f"        {short_outcome(row.base):<7} {short_outcome(row.golden):<7} "
                  f"{row.test_id}" for row in verdict.tests]
    if verdict.rubric:
        lines.append("        rubric: " + "; ".join(
            f"{state['state']} {state['score']:.1f} {state['verdict']}" for state in verdict.rubric))
    return lines
