"""`ci-eval calibrate`: flag tasks whose checks disagree with the human label, from baseline.json."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import add_baseline_argument, add_json_argument, add_root_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="flag checks that look too strict or too loose against human labels",
        description="For tasks whose metadata has human_label.expected_pass_rate: warn when "
        "the observed pass rate is more than 0.20 away from it (exactly) in each of the last 3 "
        "baseline observations (kept in baseline.json, so this works in a shallow clone); below "
        "expected = checks too strict, above = too loose. Exit 0 even with warnings "
        "(they are warnings), 2 on bad input.",
    )
    add_root_argument(parser)
    add_baseline_argument(parser)
    add_json_argument(parser, "print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ci_eval.tasks.load import load_tasks
    from ci_eval.verdict import calibration
    from ci_eval.verdict.baseline import baseline_path, load_baseline

    root = Path(args.root)
    tasks = load_tasks(root)
    baseline = load_baseline(baseline_path(root, args.baseline))
    expected = calibration.expected_rates(tasks)
    history = {task: [(s.recorded, s.passes, s.runs) for s in entry.history]
               for task, entry in baseline.entries.items()}
    warnings = calibration.check_all(expected, history)
    short = sorted(t for t in expected if len(history.get(t, ())) < calibration.WINDOW)
    if args.json:
        print(json.dumps({
            "labelled": sorted(expected),
            "not_enough_history": short,
            "warnings": [w.to_json() for w in warnings],
        }, indent=2))
        return 0
    for warning in warnings:
        print(f"warning: {warning.message}")
    summary = (f"calibration: {len(expected)} labelled task(s), {len(warnings)} warning(s)")
    if short:
        summary += (f"; fewer than {calibration.WINDOW} baseline observations yet: "
                    f"{', '.join(short)}")
    print(summary)
    return 0
