#!/usr/bin/env python3
"""Write a recorded-looking history folder: --runs CI runs of a simulated --tasks-task suite,
each summary built and written by ci-eval's own history code (results/history.py), with per
task pass counts, tokens, cost and wall, and (--baseline) the baseline.json recorded from the
first --baseline-runs CI runs, written by ci-eval's baseline code. What docs/dashboard.png was
rendered from:

    python scripts/demo_history.py /tmp/history --runs 24 --baseline /tmp/baseline.json
    ci-eval history site --history /tmp/history --baseline /tmp/baseline.json --out /tmp/site
    chromium --headless --screenshot=docs/dashboard.png --window-size=1100,1250 /tmp/site/index.html

With --baseline, every later run also records main's drift against it, per gated task (the gate's
rate rule). Deterministic for a given --seed. One task drifts down from the middle of the window, one gets
3x more expensive at the same pass rate, two are flaky (pass rate 0.6); the others pass at 0.97
or more.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import random
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ci_eval import __version__
from ci_eval.results import history
from ci_eval.results.summary import summarize
from ci_eval.verdict.baseline import Baseline, BaselineEntry, save_baseline
from ci_eval.verdict.gate import rate_status
from ci_eval.verdict.rules import DEFAULT_MIN_BASELINE_RATE


def write_baseline(path: Path, counts: dict[str, list[int]], recorded: str, agent: str) -> None:
    """A baseline.json whose gate values are the pooled counts of the first runs."""
    entries = {task: BaselineEntry(task, passes, runs, recorded,
                                   "sha256:" + hashlib.sha256(task.encode()).hexdigest())
               for task, (passes, runs) in counts.items()}
    save_baseline(path, Baseline(agent=agent, entries=entries))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="history folder to write into (created)")
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--agent", default="claude:claude-sonnet-4-5")
    parser.add_argument("--baseline", type=Path, metavar="FILE",
                        help="also write a baseline.json recorded from the first runs")
    parser.add_argument("--baseline-runs", type=int, default=8, metavar="N",
                        help="CI runs the baseline pools (default 8)")
    args = parser.parse_args(argv)
    if min(args.runs, args.tasks, args.k) < 1:
        parser.error("--runs, --tasks and -k must be >= 1")
    rng = random.Random(args.seed)
    words = ("parse-dates", "fix-off-by-one", "rename-api", "add-retry", "csv-quoting",
             "cache-ttl", "unicode-paths", "flaky-network", "json-schema", "cli-flags",
             "sort-stable", "tz-math")
    names = [f"task-{i + 1:03d}-{words[i] if i < len(words) else 'demo'}"
             for i in range(args.tasks)]
    rates = [1.0 if i % 3 == 0 else 0.97 + 0.03 * rng.random() for i in range(len(names))]
    pooled = {task: [0, 0] for task in names}
    start = dt.datetime(2026, 10, 1, 9, 0, tzinfo=dt.timezone.utc)
    for run in range(args.runs):
        moment = start + dt.timedelta(days=2 * run, minutes=rng.randrange(600))
        summaries = {}
        for index, task in enumerate(names):
            rate = rates[index]
            if index == 1 and run >= args.runs // 2:
                rate = max(0.1, rate - 0.45)  # drifted down
            if index in (2, 3):
                rate = 0.6  # flaky
            cost_factor = 3.0 if index == 4 and run >= 2 * args.runs // 3 else 1.0
            records = []
            for attempt in range(1, args.k + 1):
                tokens = int(rng.lognormvariate(8.7 + 0.1 * index, 0.3) * cost_factor)
                records.append({"run": attempt, "task": task, "agent": args.agent, "k": args.k,
                                "status": "pass" if rng.random() < rate else "fail",
                                "tokens": tokens, "cost_usd": round(tokens * 3e-6, 6),
                                "wall_seconds": round(rng.lognormvariate(3.5, 0.35), 2)})
            summaries[task] = summarize(task, records)
            if run < args.baseline_runs:
                pooled[task][0] += sum(r["status"] == "pass" for r in records)
                pooled[task][1] += len(records)
        drift = None
        if args.baseline and run >= args.baseline_runs:  # main against the recorded baseline
            drift = {task: (rate_status(Fraction(*pooled[task]), s.passes, s.runs) == "regressed",
                            *pooled[task]) for task, s in summaries.items()
                     if s.runs and Fraction(*pooled[task]) >= DEFAULT_MIN_BASELINE_RATE}
        summary = history.build_summary(
            summaries, date=moment.date().isoformat(), recorded_at=history.utc_timestamp(moment),
            commit=f"{rng.getrandbits(160):040x}", agent=args.agent, ci_eval_version=__version__,
            drift=drift)
        history.write_summary(Path(args.out), summary)
        if args.baseline and run == min(args.runs, args.baseline_runs) - 1:
            write_baseline(args.baseline, pooled, summary.date, args.agent)
    print(f"wrote {args.runs} run summaries of {len(names)} tasks into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
