"""Cost / tokens / wall gate simulation: false flags per PR and the detection of a rise.

A suite of --tasks tasks (default 20). Each task has its own per-run spread: the sd of the log
of its tokens evenly spread over 0.10-0.80 across the suite (0.8: a task whose runs vary by 2x
either way), wall time with its own spread (0.10-0.60) correlated with the tokens (rho 0.7),
and cost = tokens x price x a little noise (sd 0.05 in logs). Each trial:
  1. records a baseline per task from --baseline-runs runs (default 40): the per-run values go
     through stats.distribution, as `ci-eval baseline update` stores them;
  2. runs a PR: k = 5 runs per task, with nothing changed, or with tokens and cost multiplied
     by a true factor (1.25, 1.5, 2, 3) on one task (drawn uniformly);
  3. judges every axis of every task with the product's own verdict.axes.axis_status (the
     Hodges-Lehmann ratio above 1 + max_increase and the one-sided Mann-Whitney p < ALPHA).
The per-run values come from one of three families, so that the test is also seen on data it
does not assume: lognormal (what the log-t test models); "heavy": lognormal, and 1 run in 10
takes 3x (a retry loop, a long tool call); gamma (shape set so that its log sd matches).

Figures (--json keys, fractions):
  false_flag_per_pr     a PR with nothing changed has a flagged axis (any task)   target <= 0.02
  detect_rise_1_5       a task whose tokens and cost rose 1.5x is flagged on tokens
                        (printed, no target: at max_increase 0.5 a 1.5x rise is the line itself)
The same, with --max-increase set, for other rules; --alpha tries another level of the test.

    python bench/cost_sim.py              # 1000 PRs with nothing changed per family, 250 per rise
    python bench/cost_sim.py --json
    python bench/cost_sim.py --max-increase 0.25 --trials 1000
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ci_eval.results import stats
from ci_eval.verdict import axes
from ci_eval.verdict.rules import AxisRule

FAMILIES = ("lognormal", "heavy", "gamma")
RISES = (1.25, 1.5, 2.0, 3.0)
TARGET_FALSE_FLAGS = 0.02
HEAVY_SHARE, HEAVY_FACTOR = 0.1, 3.0
PRICE = 3e-6  # USD per token


def spreads(tasks: int, low: float, high: float) -> list[float]:
    return [low + (high - low) * i / max(1, tasks - 1) for i in range(tasks)]


def gamma_shape(log_sd: float) -> float:
    """The gamma shape whose log has this sd (trigamma(shape) = sd^2), by bisection."""
    def trigamma(x: float) -> float:
        total = 0.0
        while x < 6:
            total += 1 / (x * x)
            x += 1
        return total + 1 / x + 1 / (2 * x * x) + 1 / (6 * x ** 3) - 1 / (30 * x ** 5)

    lo, hi = 0.05, 1e4
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if trigamma(mid) > log_sd ** 2 else (lo, mid)
    return lo


class Task:
    def __init__(self, tokens_sd: float, wall_sd: float, family: str):
        self.tokens_sd, self.wall_sd, self.family = tokens_sd, wall_sd, family
        self.tokens_shape = gamma_shape(tokens_sd)
        self.wall_shape = gamma_shape(wall_sd)

    def runs(self, rng: random.Random, n: int, factor: float = 1.0):
        """n runs: (tokens, cost, wall) lists; tokens and cost multiplied by factor."""
        tokens, cost, wall = [], [], []
        for _ in range(n):
            z1 = rng.gauss(0, 1)
            z2 = 0.7 * z1 + math.sqrt(1 - 0.7 ** 2) * rng.gauss(0, 1)
            if self.family == "gamma":  # correlation through a shared uniform (a copula)
                t = rng.gammavariate(self.tokens_shape, 1 / self.tokens_shape)
                w = rng.gammavariate(self.wall_shape, 1 / self.wall_shape) * (t ** 0.5)
            else:
                t = math.exp(self.tokens_sd * z1)
                w = math.exp(self.wall_sd * z2)
                if self.family == "heavy" and rng.random() < HEAVY_SHARE:
                    t, w = t * HEAVY_FACTOR, w * HEAVY_FACTOR
            t *= 5000 * factor
            tokens.append(round(t))
            cost.append(t * PRICE * math.exp(rng.gauss(0, 0.05)))
            wall.append(60 * w)
        return {"tokens": tokens, "cost_usd": cost, "wall_seconds": wall}


def judged(rules, base, now):
    current = {name: stats.distribution(values) for name, values in now.items()}
    return axes.axis_statuses(rules, base, current)


def simulate(suite, rules, k, n_baseline, factor, trials, rng):
    """(PRs with any flagged axis, trials in which the risen task was flagged on tokens,
    flags per axis) over `trials` PRs; factor 1: nothing changed."""
    any_flag = risen_flag = 0
    per_axis = {axis: 0 for axis in rules}
    for _ in range(trials):
        risen = rng.randrange(len(suite)) if factor != 1.0 else -1
        flagged = False
        for index, task in enumerate(suite):
            base = {name: stats.distribution(values)
                    for name, values in task.runs(rng, n_baseline).items()}
            verdicts = judged(rules, base, task.runs(rng, k, factor if index == risen else 1.0))
            for verdict in verdicts:
                if verdict.status == "regressed":
                    per_axis[verdict.axis] += index != risen
                    flagged = flagged or index != risen
                    risen_flag += index == risen and verdict.axis == "tokens"
        any_flag += flagged
    return any_flag / trials, risen_flag / trials if factor != 1.0 else None, \
        {axis: n / trials for axis, n in per_axis.items()}


def run(args) -> dict:
    rule = AxisRule(max_increase=Fraction(str(args.max_increase)))
    rules = {axis: rule for axis in ("cost", "tokens", "wall")}
    rng = random.Random(args.seed)
    out = {"settings": {"tasks": args.tasks, "k": args.k, "baseline_runs": args.baseline_runs,
                        "trials": args.trials, "seed": args.seed, "alpha": axes.ALPHA,
                        "max_increase": args.max_increase}, "families": {}}
    for family in FAMILIES:
        suite = [Task(t, w, family) for t, w in zip(spreads(args.tasks, 0.10, 0.80),
                                                    spreads(args.tasks, 0.10, 0.60))]
        false, _, per_axis = simulate(suite, rules, args.k, args.baseline_runs, 1.0,
                                      args.trials, rng)
        row = {"false_flag_per_pr": false, "false_flag_per_pr_by_axis": per_axis}
        for rise in RISES:  # one task's axis: needs fewer trials than a PR-wide rate
            _, detect, _ = simulate(suite, rules, args.k, args.baseline_runs, rise,
                                    max(1, args.trials // 4), rng)
            row[f"detect_rise_{str(rise).replace('.', '_')}"] = detect
        out["families"][family] = row
        print(f"cost_sim: {family} done ({time.monotonic() - START:.0f} s)", file=sys.stderr)
    worst = max(r["false_flag_per_pr"] for r in out["families"].values())
    out["false_flag_per_pr"] = out["families"]["lognormal"]["false_flag_per_pr"]
    out["false_flag_per_pr_worst_family"] = worst
    out["detect_rise_1_5"] = out["families"]["lognormal"]["detect_rise_1_5"]
    out["target_met"] = worst <= TARGET_FALSE_FLAGS
    return out


def print_report(out: dict) -> None:
    s = out["settings"]
    print(f"cost_sim: {s['tasks']} tasks, baseline {s['baseline_runs']} runs, PR k={s['k']}, "
          f"{s['trials']} PRs with nothing changed and {max(1, s['trials'] // 4)} per rise, "
          f"per family, seed {s['seed']}")
    print(f"rule: an axis regresses when its Hodges-Lehmann ratio to the baseline is above "
          f"x{1 + s['max_increase']:g} and the one-sided Mann-Whitney test gives "
          f"p < {s['alpha']:g}")
    print()
    print(f"{'':44}" + "".join(f"{f:>12}" for f in FAMILIES))
    rows = [("false flags per PR (nothing changed)", "false_flag_per_pr")]
    rows += [(f"flags a task whose tokens+cost rose {r:g}x", f"detect_rise_{str(r).replace('.', '_')}")
             for r in RISES]
    for label, key in rows:
        print(f"  {label:42}" + "".join(f"{100 * out['families'][f][key]:11.1f}%"
                                        for f in FAMILIES))
    for axis in ("tokens", "cost", "wall"):
        print(f"  {'  of which on ' + axis:42}" + "".join(
            f"{100 * out['families'][f]['false_flag_per_pr_by_axis'][axis]:11.2f}%"
            for f in FAMILIES))
    print()
    print(f"target: false flags per PR <= {100 * TARGET_FALSE_FLAGS:.0f}% in every family: "
          f"{'met' if out['target_met'] else 'NOT met'} (worst "
          f"{100 * out['false_flag_per_pr_worst_family']:.2f}%); detection of a 1.5x rise "
          f"(lognormal): {100 * out['detect_rise_1_5']:.1f}%")


START = time.monotonic()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("-k", type=int, default=5, help="runs per task of a PR (default 5)")
    parser.add_argument("--baseline-runs", type=int, default=40)
    parser.add_argument("--max-increase", type=float, default=0.5)
    parser.add_argument("--alpha", type=float, default=None,
                        help="another level for the test (default: the shipped ALPHA)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if min(args.trials, args.tasks, args.k, args.baseline_runs) < 1 or args.max_increase <= 0:
        parser.error("--trials, --tasks, -k and --baseline-runs must be >= 1, "
                     "--max-increase > 0")
    if args.alpha is not None:
        if not 0 < args.alpha < 1:
            parser.error("--alpha must be between 0 and 1")
        axes.ALPHA = args.alpha
    out = run(args)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print_report(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
