"""Gate simulation: false alarms, detection and agent runs of confirmation vs the literal 5-run rule.

A suite of --tasks tasks (default 20) whose true pass rates are evenly spread over 0.40-1.00.
Each trial:
  1. records a baseline per task from --baseline-runs N runs (default 40, as docs/how-it-works.md asks):
     its estimated rate, with its own noise; a task is gated only when that estimate is >= 0.60
     (else aspirational, as `ci-eval baseline update` does);
  2. runs a PR: k = 5 runs per task, with no true change, or with a true drop of 0.2 ... 0.5 on
     one task (drawn uniformly; figures about that task count the trials where it is gated);
  3. judges each gated task on the same first k runs twice: by the literal rule after k runs,
     and by confirmation (extra runs in stages, then the rule on all the task's runs).
Every decision is the product's own: baseline.meets_record_threshold (gated or not),
confirmation.runs_to_add (the staging, shipped defaults unless --stages) and gate.rate_status
(the verdict). --exact computes the same figures without sampling: every reachable (passes,
runs) state, weighted by its probability, through the same functions.

The figures (the --json keys, fractions, for the first --baseline-runs value):
  false_alarm_per_pr  a PR with nothing changed fails the gate              target <= 0.02
  detect_drop_0_4     a task whose true rate fell by 0.4 is flagged         target >= 0.85
  runs_ratio          agent runs of a PR with nothing changed / (5 x tasks)  target <= 1.4
  runs_drop_0_5       mean runs spent on a task whose true rate fell by 0.5  target <= 15
The "rate known" column is the ceiling set by the baseline's own noise: the rule applied to the
true current rate, as if the task had been run without end.

    python bench/gate_sim.py                     # Monte Carlo, 4000 trials per scenario, 10-25 s
    python bench/gate_sim.py --exact             # exact figures, a few seconds
    python bench/gate_sim.py --exact --json      # the figures for programs
    python bench/gate_sim.py --baseline-runs 20,40 --stages 5,10,20,30 --trials 2000
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

from ci_eval.errors import UserError
from ci_eval.verdict import baseline, confirmation, gate

DROPS = (Fraction(2, 10), Fraction(3, 10), Fraction(4, 10), Fraction(5, 10))
SCENARIOS = (Fraction(0), *DROPS)
FIGURE_SCENARIOS = (Fraction(0), Fraction(4, 10), Fraction(5, 10))  # what figures() needs
TARGETS = {  # key: (comparison, target)
    "false_alarm_per_pr": ("<=", 0.02),
    "detect_drop_0_4": (">=", 0.85),
    "runs_ratio": ("<=", 1.4),
    "runs_drop_0_5": ("<=", 15.0),
}


def true_rates(tasks: int) -> list[Fraction]:
    """Evenly spread over 0.40-1.00, exactly (so drops and the rule compare without floats)."""
    if tasks < 2:
        return [Fraction(7, 10)]
    return [Fraction(2, 5) + Fraction(3, 5) * Fraction(i, tasks - 1) for i in range(tasks)]


def after_drop(rate: Fraction, drop: Fraction) -> Fraction:
    return max(rate - drop, Fraction(0))


class Judge:
    """The product's decisions, memoized per (baseline, passes, runs): they are pure, and the
    Monte Carlo asks the same ones thousands of times. Looked up on the modules at call time."""

    def __init__(self, stages: tuple[int, ...]):
        self.stages = stages
        self._extra: dict = {}
        self._regressed: dict = {}

    def runs_to_add(self, base: Fraction, passes: int, runs: int) -> int:
        key = (base, passes, runs)
        if key not in self._extra:
            self._extra[key] = confirmation.runs_to_add(base, passes, runs, self.stages)
        return self._extra[key]

    def regressed(self, base: Fraction, passes: int, runs: int) -> bool:
        key = (base, passes, runs)
        if key not in self._regressed:
            self._regressed[key] = gate.rate_status(base, passes, runs) == "regressed"
        return self._regressed[key]


def gated(base: Fraction) -> bool:
    return baseline.meets_record_threshold(base)


# --- Monte Carlo ------------------------------------------------------------------------------


def binomial(rng: random.Random, n: int, p: float) -> int:
    return sum(1 for _ in range(n) if rng.random() < p)


def judge_task(rng, judge: Judge, base: Fraction, p: float, k: int):
    """(literal verdict, confirmed verdict, runs used by confirmation) for one gated task."""
    passes = binomial(rng, k, p)
    literal = judge.regressed(base, passes, k)
    runs = k
    while extra := judge.runs_to_add(base, passes, runs):
        passes += binomial(rng, extra, p)
        runs += extra
    return literal, judge.regressed(base, passes, runs), runs


def simulate(rates, n_baseline, k, stages, drop, trials, rng):
    """One scenario by sampling. Returns n (trials counted), pr_fail and flagged (literal,
    confirmation), runs (suite runs / (tasks x k): literal, confirmation), dropped_runs (mean
    runs of the dropped task: literal, confirmation) and gated (tasks gated per trial)."""
    judge = Judge(tuple(stages))
    drop = Fraction(drop).limit_denominator(1000)
    fails, flagged, dropped_runs = [0, 0], [0, 0], 0
    counted = runs_total = gated_total = 0
    for _ in range(trials):
        baselines = [Fraction(binomial(rng, n_baseline, float(p)), n_baseline) for p in rates]
        is_gated = [gated(b) for b in baselines]
        dropped = rng.randrange(len(rates)) if drop else None
        if dropped is not None and not is_gated[dropped]:
            continue  # an aspirational task cannot be detected by design; not counted
        counted += 1
        gated_total += sum(is_gated)
        pr = [False, False]
        for i, p in enumerate(rates):
            if not is_gated[i]:
                runs_total += k
                continue
            current = after_drop(p, drop) if i == dropped else p
            literal, confirmed, used = judge_task(rng, judge, baselines[i], float(current), k)
            runs_total += used
            pr[0] |= literal
            pr[1] |= confirmed
            if i == dropped:
                flagged[0] += literal
                flagged[1] += confirmed
                dropped_runs += used
        fails[0] += pr[0]
        fails[1] += pr[1]
    counted = max(counted, 1)
    return {
        "n": counted,
        "pr_fail": [f / counted for f in fails] if not drop else [None, None],
        "flagged": [f / counted for f in flagged],
        "runs": [1.0, runs_total / (counted * len(rates) * k)],
        "dropped_runs": [float(k), dropped_runs / counted] if drop else [None, None],
        "gated": gated_total / counted,
    }


# --- exact ------------------------------------------------------------------------------------


def pmf(n: int, p: float) -> list[float]:
    return [math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(n + 1)]


def staged(judge: Judge, base: Fraction, p: float, k: int):
    """Exactly, for one gated task with true rate p: (P(literal regressed), P(confirmed
    regressed), E[runs]) over every reachable (passes, runs) state."""
    literal = confirmed = runs = 0.0
    states = {}
    for c, q in enumerate(pmf(k, p)):
        literal += q * judge.regressed(base, c, k)
        states[(c, k)] = q
    while states:
        following = {}
        for (c, n), q in states.items():
            if not q:
                continue
            extra = judge.runs_to_add(base, c, n)
            if not extra:
                confirmed += q * judge.regressed(base, c, n)
                runs += q * n
                continue
            for y, qq in enumerate(pmf(extra, p)):
                following[(c + y, n + extra)] = following.get((c + y, n + extra), 0.0) + q * qq
        states = following
    return literal, confirmed, runs


def exact_task(judge, p_base, p_now, n_baseline, k):
    """Over the task's baseline estimates: P(gated), P(gated, literal regressed), P(gated,
    confirmed regressed), E[runs] (ungated: k), E[runs; gated]."""
    g = lit = conf = runs = gated_runs = 0.0
    for x, w in enumerate(pmf(n_baseline, float(p_base))):
        if not w:
            continue
        b = Fraction(x, n_baseline)
        if not gated(b):
            runs += w * k
            continue
        literal, confirmed, used = staged(judge, b, float(p_now), k)
        g, lit, conf = g + w, lit + w * literal, conf + w * confirmed
        runs, gated_runs = runs + w * used, gated_runs + w * used
    return g, lit, conf, runs, gated_runs


def exact(rates, n_baseline, k, stages, drop, judge=None):
    """One scenario exactly; the same keys as simulate() (n is None). `judge` replaces the
    product's staging (bench/gate_limit.py passes the optimal one)."""
    judge = judge or Judge(tuple(stages))
    drop = Fraction(drop).limit_denominator(1000)
    per = [exact_task(judge, p, p, n_baseline, k) for p in rates]
    suite = len(rates) * k
    if not drop:
        return {"n": None,
                "pr_fail": [1 - math.prod(1 - t[1] for t in per),
                            1 - math.prod(1 - t[2] for t in per)],
                "flagged": [None, None], "runs": [1.0, sum(t[3] for t in per) / suite],
                "dropped_runs": [None, None], "gated": sum(t[0] for t in per)}
    lit = conf = den = runs = own = 0.0
    for i, p in enumerate(rates):
        g, t_lit, t_conf, _, gated_runs = exact_task(judge, p, after_drop(p, drop), n_baseline, k)
        lit, conf, den, own = lit + t_lit, conf + t_conf, den + g, own + gated_runs
        others = sum(t[3] for j, t in enumerate(per) if j != i)
        runs += g * others + gated_runs  # suite runs when task i is the dropped one, gated
    return {"n": None, "pr_fail": [None, None], "flagged": [lit / den, conf / den],
            "runs": [1.0, runs / den / suite], "dropped_runs": [float(k), own / den],
            "gated": None}


def rate_known(rates, n_baseline, drop):
    """The ceiling the baseline's noise sets: the rule on the true current rate (runs without
    end). Without a drop: P(a PR fails); with one: P(the dropped task is flagged | gated)."""
    drop = Fraction(drop).limit_denominator(1000)
    per = []
    for p in rates:
        g = flag = 0.0
        for x, w in enumerate(pmf(n_baseline, float(p))):
            b = Fraction(x, n_baseline)
            if gated(b):
                g += w
                flag += w * gate.is_regression(b, after_drop(p, drop))
        per.append((g, flag))
    if not drop:
        return 1 - math.prod(1 - f for _, f in per)
    return sum(f for _, f in per) / sum(g for g, _ in per)


# --- report -----------------------------------------------------------------------------------


def scenarios(rates, n_baseline, k, stages, trials, seed, use_exact, progress=None, judge=None,
              only=SCENARIOS):
    """Rows per scenario (no change, then each drop in DROPS, or those in `only`)."""
    rng = random.Random(f"{seed}-{n_baseline}")
    rows = {}
    for drop in only:
        if progress:
            progress(f"N={n_baseline}, {'no change' if not drop else f'a {float(drop):.1f} drop'}")
        if use_exact:
            rows[drop] = exact(rates, n_baseline, k, stages, drop, judge)
        else:
            rows[drop] = simulate(rates, n_baseline, k, stages, drop, trials, rng)
        rows[drop]["rate_known"] = rate_known(rates, n_baseline, drop)
    return rows


def figures(rows) -> dict:
    """The four --json figures of one baseline size, plus the literal rule's and the ceiling's."""
    none, d4, d5 = rows[Fraction(0)], rows[Fraction(4, 10)], rows[Fraction(5, 10)]
    return {
        "false_alarm_per_pr": none["pr_fail"][1],
        "detect_drop_0_4": d4["flagged"][1],
        "runs_ratio": none["runs"][1],
        "runs_drop_0_5": d5["dropped_runs"][1],
        "literal": {"false_alarm_per_pr": none["pr_fail"][0],
                    "detect_drop_0_4": d4["flagged"][0], "runs_ratio": 1.0,
                    "runs_drop_0_5": d5["dropped_runs"][0]},
        "rate_known": {"false_alarm_per_pr": none["rate_known"],
                       "detect_drop_0_4": d4["rate_known"]},
        "flagged": {f"drop_{float(d):.1f}".replace(".", "_"): rows[d]["flagged"][1]
                    for d in DROPS if d in rows},
    }


def met(values: dict) -> dict:
    return {key: (values[key] <= target if op == "<=" else values[key] >= target)
            for key, (op, target) in TARGETS.items()}


def pct(value, n=None):
    if value is None:
        return "-"
    text = f"{value * 100:5.1f}%"
    if n:
        text += f" ±{math.sqrt(value * (1 - value) / n) * 100:.1f}"
    return text


def print_report(rates, n_baseline, k, rows):
    none = rows[Fraction(0)]
    n = none["n"]
    print(f"\nbaseline recorded from N={n_baseline} runs per task; gated (baseline >= 0.60): "
          f"{none['gated']:.1f} of {len(rates)} tasks on average")
    lines = [("", f"literal rule, k={k}", "confirmation", "rate known"),
             ("false alarms per PR (no change)", pct(none["pr_fail"][0], n),
              pct(none["pr_fail"][1], n), pct(none["rate_known"]))]
    for drop in DROPS:
        row = rows[drop]
        lines.append((f"flags a task with a true {float(drop):.1f} drop", pct(row["flagged"][0],
                      row["n"]), pct(row["flagged"][1], row["n"]), pct(row["rate_known"])))
    lines.append(("agent runs vs 5/task, no change", "1.00x", f"{none['runs'][1]:.2f}x", ""))
    for drop in DROPS:
        lines.append((f"agent runs vs 5/task, {float(drop):.1f} drop", "1.00x",
                      f"{rows[drop]['runs'][1]:.2f}x", ""))
    for drop in DROPS:
        lines.append((f"runs of the task with the {float(drop):.1f} drop", f"{k}",
                      f"{rows[drop]['dropped_runs'][1]:.1f}", ""))
    for label, literal, confirmed, known in lines:
        print(f"  {label:38}{literal:>18}{confirmed:>15}{known:>12}")
    values = figures(rows)
    ok = met(values)
    print("  targets (confirmation): " + "; ".join(
        f"{key} {values[key]:.4g} {op} {target:g}: {'met' if ok[key] else 'NOT met'}"
        for key, (op, target) in TARGETS.items()))
    return values


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Figures and how to read them: docs/gate.md, 'Confirmation'.")
    parser.add_argument("--trials", type=int, default=4000,
                        help="Monte Carlo trials per scenario (default 4000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=20, help="tasks in the suite (default 20)")
    parser.add_argument("-k", type=int, default=5, help="runs per task of the fixed protocol")
    parser.add_argument("--baseline-runs", default="40",
                        help="runs each baseline is estimated from; a comma list runs each, the "
                        "first gives the --json figures (default 40)")
    parser.add_argument("--stages", default=confirmation.format_stages(
        confirmation.DEFAULT_STAGES), help="confirmation stages (default: the shipped ones)")
    parser.add_argument("--exact", action="store_true",
                        help="exact figures instead of sampling")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    try:
        stages = confirmation.parse_stages(args.stages, field="--stages")
    except UserError as exc:
        parser.error(f"--stages: {exc}")
    sizes = [int(x) for x in args.baseline_runs.split(",") if x.strip().isdigit()]
    if not sizes or len(sizes) != len(args.baseline_runs.split(",")) or min(sizes) < 1:
        parser.error(f"--baseline-runs: expected run counts like 40 or 20,40, got "
                     f"{args.baseline_runs!r}")
    if args.trials < 1 or args.tasks < 1 or args.k < 1:
        parser.error("--trials, --tasks and -k must be at least 1")
    rates = true_rates(args.tasks)
    started = time.monotonic()
    mode = "exact" if args.exact else f"Monte Carlo, {args.trials} trials/scenario, seed {args.seed}"

    def progress(text):
        print(f"gate_sim: {text} ({time.monotonic() - started:.0f} s)", file=sys.stderr,
              flush=True)

    results = {}
    if not args.json:
        print(f"gate_sim: {args.tasks} tasks, true pass rates {float(rates[0]):.2f}-"
              f"{float(rates[-1]):.2f} evenly spread, k={args.k}, {mode}")
        print(f"confirmation: {confirmation.describe(stages)}")
    for n_baseline in sizes:
        rows = scenarios(rates, n_baseline, args.k, stages, args.trials, args.seed, args.exact,
                         progress)
        results[n_baseline] = (print_report(rates, n_baseline, args.k, rows) if not args.json
                               else figures(rows))
    seconds = time.monotonic() - started
    if args.json:
        first = results[sizes[0]]
        out = {key: first[key] for key in TARGETS}
        out.update({
            "targets": {key: {"op": op, "target": target} for key, (op, target) in TARGETS.items()},
            "met": met(first), "baseline_runs": sizes[0], "mode": "exact" if args.exact else
            "monte-carlo", "trials": None if args.exact else args.trials, "seed": args.seed,
            "tasks": args.tasks, "k": args.k, "stages": list(stages),
            "by_baseline_runs": {str(n): values for n, values in results.items()},
            "seconds": round(seconds, 1)})
        print(json.dumps(out, indent=2))
    else:
        print(f"\n({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
