"""`ci-eval grade TASK --patch FILE [--json]`: judge one candidate patch with the task's checks and
rubric in a fresh sandboxed workspace."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import add_json_argument, add_root_argument, add_runner_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "grade",
        help="grade a candidate patch: the task's checks and rubric in a fresh workspace",
        description="Apply FILE (a patch, as `git apply` takes it; then --3way, then patch "
        "--fuzz) to a fresh workspace of TASK, run its checks in their sandbox and score its "
        "rubric.yaml: each criterion's result and points, tests passed n/m, the score (0-100, "
        "one decimal) and the verdict with its reasons. PASS needs the checks to pass and the "
        "rubric to PASS (score at least pass_threshold, no auto_fail criterion tripped). A task "
        "without rubric.yaml is graded by its checks alone (score 100 or 0). Exit 0 PASS, "
        "1 FAIL, 2 bad input (unknown task, a patch that does not apply, a broken rubric).",
    )
    add_root_argument(parser)
    parser.add_argument("task", metavar="TASK", help="task id, task-NNN or NNN")
    parser.add_argument("--patch", required=True, metavar="FILE",
                        help="the candidate patch (relative to the current folder)")
    add_runner_argument(parser)
    add_json_argument(parser, "print a JSON report")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from ci_eval.agents.config_file import load_config
    from ci_eval.errors import EXIT_FAILED, EXIT_OK, UserError
    from ci_eval.run.grade import grade_patch, load_grading
    from ci_eval.run.runners import Runners
    from ci_eval.run.sandbox import isolation
    from ci_eval.tasks.load import load_tasks

    patch = Path(args.patch)
    if not patch.is_file():
        what = "is a folder" if patch.is_dir() else "no such file"
        raise UserError(f"{what} (expected a patch file)", path=patch, field="--patch")
    root = Path(args.root)
    config = load_config(root)
    task = load_tasks(root, [args.task])[0]
    load_grading(task)  # a broken rubric.yaml: exit 2 before any work
    iso = isolation.detect()
    for notice in iso.notices:
        print(f"ci-eval: NOTICE: {notice}", file=sys.stderr)
    runners = Runners.of(iso, None, args.runner, config.runner,
                         checks_host_home=config.checks_home == "host")
    runners.prepare([task], progress=lambda line: print(f"ci-eval: {line}", file=sys.stderr))
    report = grade_patch(task, patch, iso, config.checks_env, runner=runners.for_task(task))
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render(report))
    return EXIT_OK if report.verdict == "PASS" else EXIT_FAILED


def render(report) -> str:
    """The per-criterion table, tests n/m, score and verdict with its reasons."""
    data = report.to_json()
    lines = [f"grade {report.task} --patch {report.patch}",
             f"checks: {report.checks.status.upper()} ({_short(report.checks.reason)})", ""]
    for c in data["criteria"]:
        mark = {True: "PASS", False: "FAIL", None: "REVIEW"}[c["passed"]]
        points = (f"{_num(c['weight'])} manual" if c["passed"] is None
                  else f"{_num(c['points'])}/{_num(c['weight'])}")
        gate = "  [auto-fail]" if c["auto_fail"] else ""
        title = c["id"] if c["description"] == c["id"] else f"{c['id']}: {c['description']}"
        lines.append(f"{mark:<6} [{points}] {title}{gate}")
        lines.append(f"       {_short(c['reason'], 300)}")
    lines += ["", f"tests: {data['tests_passed']}/{data['tests_total']}",
              f"score: {data['score']:.1f}" + (f" (pass threshold {_num(data['pass_threshold'])})"
                                              if data["rubric"] else " (no rubric.yaml: the "
                                              "checks' verdict)"),
              f"verdict: {data['verdict']}"]
    lines += [f"- {reason}" for reason in _verdict_reasons(data)]
    if data["outstanding_review"]:
        lines.append(f"outstanding review (manual, not scored): "
                     f"{', '.join(data['outstanding_review'])}")
    lines += [f"note: {note}" for note in data["notes"]]
    return "\n".join(lines) + "\n"


def _verdict_reasons(data: dict) -> list[str]:
    reasons = []
    by_id = {c["id"]: c for c in data["criteria"]}
    for reason in data["reasons"]:
        if reason.startswith("auto-fail criteria tripped"):
            why = "; ".join(f"{i}: {by_id[i]['reason']}" for i in data["auto_fail_tripped"])
            reason = f"{reason} ({_short(why, 300)})"
        reasons.append(_short(reason, 400))
    return reasons


def _num(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
