"""gate_sim extended past the 40-run limit: pool the default branch's runs into the reference.

The runs on the default branch since the last baseline are evidence about the same agent (same
prompt hashes, same agent identity). This measures the opt-in mode issue 23 asks about: a PR's
reference rate is (baseline passes + pooled passes) / (baseline runs + pooled runs), but only
while the pooled runs agree with the baseline (a two-sided z-test at --agree-z, default 2: a
main branch that moved away from its baseline is not pooled, the baseline alone is used).

The suite, the 40-run baselines, the PR's k = 5 runs, the confirmation stages and the verdict
are gate_sim's (the product's own confirmation.runs_to_add and gate.rate_status, judged against
the reference instead of the baseline). M = --main-runs default-branch CI runs are pooled, each
with k runs per task (8 CI runs: 40 more runs per task). Scenarios, per gated task:
  no change         main and the PR at the baseline's true rate;
  0.4 drop          the PR's true rate 0.4 below it (main unchanged);
  drift D           main's true rate moved down by D after the baseline (every task), the PR
                    no further: does the gate see main's drift?
  drift D + 0.4-D   main drifted D, the PR drops the rest of 0.4: 0.4 below the baseline in all
                    (what pooling hides when the pooled runs still agree).
Ship rule (issue 23): pooling ships only if, with 8 pooled runs, a 0.4 drop is detected >= 90%
at <= 2% false alarms per PR and <= 1.4x runs.

    python bench/gate_pool.py                 # 2000 trials per scenario
    python bench/gate_pool.py --main-runs 2,8 --json
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gate_sim import Judge, after_drop, binomial, gated, true_rates  # noqa: E402

from ci_eval.verdict import confirmation  # noqa: E402

TARGETS = {"false_alarm_per_pr": ("<=", 0.02), "detect_drop_0_4": (">=", 0.90),
           "runs_ratio": ("<=", 1.4)}
DRIFTS = (Fraction(1, 10), Fraction(2, 10))


def agrees(b: int, n: int, m: int, runs: int, z: float) -> bool:
    """Do `m` passes of `runs` pooled runs agree with the baseline's `b` of `n`? (two-sided)"""
    pooled = (b + m) / (n + runs)
    spread = math.sqrt(max(pooled * (1 - pooled), 1e-12) * (1 / n + 1 / runs))
    return abs(m / runs - b / n) <= z * spread


def trial(rng, judge, rates, n_baseline, k, main_runs, agree_z, drift, drop):
    """One PR: (failed, flagged-task, runs used, the flagged task's index or None, pooled
    tasks) with or without pooling (index 0: baseline alone, 1: pooled)."""
    baselines = [binomial(rng, n_baseline, float(p)) for p in rates]
    is_gated = [gated(Fraction(b, n_baseline)) for b in baselines]
    candidates = [i for i, g in enumerate(is_gated) if g]
    target = rng.choice(candidates) if drop and candidates else None
    failed, flagged, runs, pooled_tasks = [False, False], [False, False], [0, 0], 0
    for i, p in enumerate(rates):
        if not is_gated[i]:
            runs[0] += k
            runs[1] += k
            continue
        main_rate = after_drop(p, drift)
        pooled_runs = main_runs * k
        m = binomial(rng, pooled_runs, float(main_rate)) if pooled_runs else 0
        pool = pooled_runs and agrees(baselines[i], n_baseline, m, pooled_runs, agree_z)
        pooled_tasks += bool(pool)
        references = [Fraction(baselines[i], n_baseline),
                      Fraction(baselines[i] + m, n_baseline + pooled_runs) if pool
                      else Fraction(baselines[i], n_baseline)]
        current = float(after_drop(main_rate, drop) if i == target else main_rate)
        first = binomial(rng, k, current)  # the same first runs judged both ways
        judged = {}  # reference -> (verdict, runs): an unpooled task is judged once, alike
        for mode, base in enumerate(references):
            if base not in judged:
                passes, used = first, k
                while extra := judge.runs_to_add(base, passes, used):
                    passes += binomial(rng, extra, current)
                    used += extra
                judged[base] = (judge.regressed(base, passes, used), used)
            verdict, used = judged[base]
            failed[mode] |= verdict
            runs[mode] += used
            if i == target:
                flagged[mode] = verdict
    return failed, flagged, runs, target, pooled_tasks, sum(is_gated)


def scenario(rates, n_baseline, k, main_runs, agree_z, drift, drop, trials, rng, judge):
    fails, flags, runs, counted, pooled, gated_n = [0, 0], [0, 0], [0, 0], 0, 0, 0
    for _ in range(trials):
        failed, flagged, used, target, pooled_tasks, n_gated = trial(
            rng, judge, rates, n_baseline, k, main_runs, agree_z, drift, drop)
        if drop and target is None:
            continue
        counted += 1
        pooled += pooled_tasks
        gated_n += n_gated
        for mode in (0, 1):
            fails[mode] += failed[mode]
            flags[mode] += flagged[mode]
            runs[mode] += used[mode]
    counted = max(counted, 1)
    return {"pr_fail": [f / counted for f in fails], "flagged": [f / counted for f in flags],
            "runs_ratio": [r / (counted * len(rates) * k) for r in runs],
            "pooled_share": pooled / max(gated_n, 1)}


def run(args) -> dict:
    rates = true_rates(args.tasks)
    judge = Judge(confirmation.DEFAULT_STAGES)
    out = {"settings": {"tasks": args.tasks, "k": args.k, "baseline_runs": args.baseline_runs,
                        "trials": args.trials, "seed": args.seed, "agree_z": args.agree_z},
           "main_runs": {}}
    for main_runs in args.main_runs:
        rng = random.Random(f"{args.seed}-{main_runs}")
        rows = {}
        cases = [("no change", 0, 0), ("0.4 drop", 0, Fraction(4, 10))]
        cases += [(f"drift {float(d):.1f}", d, 0) for d in DRIFTS]
        cases += [(f"drift {float(d):.1f} + PR drop {float(Fraction(4, 10) - d):.1f}", d,
                   Fraction(4, 10) - d) for d in DRIFTS]
        for label, drift, drop in cases:
            print(f"gate_pool: M={main_runs}: {label}", file=sys.stderr)
            rows[label] = scenario(rates, args.baseline_runs, args.k, main_runs, args.agree_z,
                                   drift, drop, args.trials, rng, judge)
        figures = {"false_alarm_per_pr": rows["no change"]["pr_fail"][1],
                   "detect_drop_0_4": rows["0.4 drop"]["flagged"][1],
                   "runs_ratio": rows["no change"]["runs_ratio"][1]}
        met = {key: (figures[key] <= t if op == "<=" else figures[key] >= t)
               for key, (op, t) in TARGETS.items()}
        out["main_runs"][str(main_runs)] = {"scenarios": rows, "pooled": figures, "met": met,
                                           "ships": all(met.values())}
    return out


def print_report(out: dict) -> None:
    s = out["settings"]
    print(f"gate_pool: {s['tasks']} tasks, baselines of {s['baseline_runs']} runs, PR k={s['k']}, "
          f"{s['trials']} trials per scenario, pooled only while |main - baseline| <= "
          f"{s['agree_z']:g} SE")
    for main_runs, result in out["main_runs"].items():
        print(f"\nM = {main_runs} default-branch CI runs pooled ({int(main_runs) * s['k']} runs "
              f"per task)                  baseline alone    pooled")
        for label, row in result["scenarios"].items():
            key = "pr_fail" if label in ("no change",) or (
                label.startswith("drift") and "+" not in label) else "flagged"
            what = "PRs failed" if key == "pr_fail" else "flags the task"
            print(f"  {label + ': ' + what:58}{100 * row[key][0]:12.1f}%{100 * row[key][1]:9.1f}%"
                  f"   (pooled in {100 * row['pooled_share']:.0f}% of gated tasks)")
        none = result["scenarios"]["no change"]
        print(f"  {'runs vs 5/task, no change':58}{none['runs_ratio'][0]:12.2f}x"
              f"{none['runs_ratio'][1]:9.2f}x")
        met = ", ".join(f"{k} {'met' if v else 'NOT met'}" for k, v in result["met"].items())
        print(f"  ship rule: {met} -> {'ships' if result['ships'] else 'does not ship'}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--baseline-runs", type=int, default=40)
    parser.add_argument("--main-runs", default="8",
                        help="comma-separated numbers of pooled default-branch CI runs")
    parser.add_argument("--agree-z", type=float, default=2.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        args.main_runs = [int(v) for v in args.main_runs.split(",")]
    except ValueError:
        parser.error(f"--main-runs: expected numbers like 2,8, got {args.main_runs!r}")
    if min([args.trials, args.tasks, args.k, args.baseline_runs]) < 1 or min(args.main_runs) < 0:
        parser.error("--trials, --tasks, -k, --baseline-runs must be >= 1, --main-runs >= 0")
    out = run(args)
    print(json.dumps(out, indent=2, default=str) if args.json else "", end="")
    if not args.json:
        print_report(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
