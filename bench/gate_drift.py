"""Drift: the gate with a control arm on the base branch, against the baseline alone.

gate_sim's suite (20 tasks, true pass rates 0.40-1.00, baselines of 40 runs, gated from 0.60,
PR k = 5, the shipped confirmation stages). After the baseline, main's true rate moves by
`drift` on every task (the model changed for everyone); the PR changes nothing further, or drops
one gated task by 0.4 more. Each gated task is judged twice on the same PR runs:
  baseline alone  today's gate: confirmation.runs_to_add, then gate.rate_status;
  control arm     control.next_step stages both arms (the control arm runs main's agent at
                  main's true rate), then control.arm_status.
  + main's record the same, with main's record of its last --record-pushes pushes (k runs per
                  task each, taken after the drift: eval.yml runs every task on each push to
                  main) as free evidence: main_record.reference takes the baseline's place,
                  main_record.arm_status judges (the record pooled into the control arm).
                  The "after main's last push" scenarios take the record before the drift (the
                  record does not show it yet). The pushes' own runs are not a PR's: they are
                  reported apart (per push), not in runs per PR. Main's suite-wide drift
                  (main_record.suite_shift) is taken over the gated tasks' records
                  (--no-suite-shift: the rule before it). The "on half the tasks" scenarios
                  drift every other task only: a drift that is not the whole suite's.
Every decision is the product's own (ci_eval/verdict/control.py, main_record.py,
confirmation.py, gate.py). The record's draws use a random stream of their own, so the first two
columns are the same trials, figure for figure, with or without the third.
Targets (issue 32, judged on the third column): PRs failed with main drifted by 0.1 and 0.2 and the PR unchanged <= 2%;
false alarms with no drift <= 2%; a PR-caused 0.4 drop detected >= 80% with and without drift;
agent runs per PR, both arms, <= 1.5x of 5 per task (no change, and each drift).

    python bench/gate_drift.py                   # 2000 trials per scenario, seed 1
    python bench/gate_drift.py --trials 500 --json
    python bench/gate_drift.py --record-pushes 0      # without main's record (two columns)
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

from gate_sim import Judge, after_drop, binomial, gated, true_rates

from ci_eval.verdict import confirmation, control, gate, main_record

PR_DROP = Fraction(4, 10)
DRIFTS = (Fraction(0), Fraction(1, 10), Fraction(2, 10))
TARGETS = {"pr_fail_drift_0_1": ("<=", 0.02), "pr_fail_drift_0_2": ("<=", 0.02),
           "false_alarm_per_pr": ("<=", 0.02), "detect_drop_0_4": (">=", 0.80),
           "detect_drop_0_4_drift_0_1": (">=", 0.80), "detect_drop_0_4_drift_0_2": (">=", 0.80),
           "runs_ratio": ("<=", 1.5), "runs_ratio_drift_0_1": ("<=", 1.5),
           "runs_ratio_drift_0_2": ("<=", 1.5)}


class ArmJudge:
    """control.next_step / arm_status, memoized (pure; asked the same states many times)."""

    def __init__(self, stages, alpha, futility=control.FUTILITY_P):
        self.stages, self.alpha, self.futility = stages, alpha, futility
        self._step, self._status = {}, {}

    def step(self, base, a, n, c, m):
        key = (base, a, n, c, m)
        if key not in self._step:
            self._step[key] = control.next_step(base, a, n, c, m, self.stages, alpha=self.alpha,
                                                futility=self.futility)
        return self._step[key]

    def screen_clears(self, base, passes, runs) -> bool:
        """The first stage alone ends the task (the baseline screen clears it): no control."""
        step = confirmation.next_step(base, passes, runs, self.stages)
        return not step.runs_to_add and not gate.is_regression(base, Fraction(passes, runs))

    def status(self, base, a, n, c, m):
        key = (base, a, n, c, m)
        if key not in self._status:
            self._status[key] = control.arm_status(base, a, n, c, m, alpha=self.alpha)
        return self._status[key]

    def record_status(self, ref, record, a, n, c, m):
        """main_record.arm_status: the third column's verdict (ref: main_record.Reference)."""
        key = (ref, record, a, n, c, m)
        if key not in self._status:
            self._status[key] = main_record.arm_status(ref, record, a, n, c, m, alpha=self.alpha)
        return self._status[key]


def two_arms(rng, judge: ArmJudge, base, p_pr, p_control, first, record=None, shift=None):
    """(status, PR runs, control runs) of one gated task whose first k PR runs passed `first`.
    With `record` ((baseline passes, runs), main_record.MainRecord): staged against
    main_record.reference's rate (with main's suite-wide drift `shift`, if shown), judged by
    main_record.arm_status."""
    rate, ref = base, None
    if record is not None:
        ref = main_record.reference(*record[0], record[1], shift=shift)
        rate = ref.rate
    a, n, c, m = first[0], first[1], 0, 0
    while not (step := judge.step(rate, a, n, c, m)).final:
        a += binomial(rng, step.pr_runs, p_pr)
        n += step.pr_runs
        c += binomial(rng, step.control_runs, p_control)
        m += step.control_runs
    if ref is None:
        return judge.status(rate, a, n, c, m), n, m
    return judge.record_status(ref, record[1], a, n, c, m), n, m


def trial(rng, alone: Judge, arms: ArmJudge, rates, n_baseline, k, drift, drop, drift_fails,
          record_rng, pushes, after_push, half=False, suite_shift=True):
    """One PR. record_rng: the stream of main's record and of the third column's further runs;
    pushes: main's recorded pushes (k runs per task each; 0: no third column); after_push: the
    drift came after main's last push (the record is at the rate before it); half: only every
    other task drifts; suite_shift: the third column takes main's suite-wide drift
    (main_record.suite_shift)."""
    counts = [binomial(rng, n_baseline, float(p)) for p in rates]
    baselines = [Fraction(x, n_baseline) for x in counts]
    candidates = [i for i, b in enumerate(baselines) if gated(b)]
    target = rng.choice(candidates) if drop and candidates else None
    records, shifts = {}, {}
    if pushes:
        for i in candidates:
            moved = after_drop(rates[i], drift) if not (half and i % 2) else rates[i]
            records[i] = main_record.MainRecord(
                binomial(record_rng, pushes * k, float(rates[i] if after_push else moved)),
                pushes * k, pushes)
        if suite_shift:
            shifts = main_record.suite_shift({i: (counts[i], n_baseline, records[i])
                                              for i in candidates})
    failed, flagged, runs, control_runs = [False] * 3, [False] * 3, [0, 0, 0, 0], [0, 0]
    drifted = 0
    for i, p in enumerate(rates):
        base = baselines[i]
        if not gated(base):
            for mode in range(4):
                runs[mode] += k
            continue
        main_rate = float(after_drop(p, drift) if not (half and i % 2) else p)
        now = float(after_drop(after_drop(p, drift), drop)) if i == target else main_rate
        first = binomial(rng, k, now)
        runs[2] += k + (0 if arms.screen_clears(base, first, k) else arms.stages[0])
        passes, used = first, k  # the baseline alone
        while extra := alone.runs_to_add(base, passes, used):
            passes += binomial(rng, extra, now)
            used += extra
        regressed = alone.regressed(base, passes, used)
        status, pr_used, ctl_used = two_arms(rng, arms, base, now, main_rate, (first, k))
        fails = status == "regressed" or (drift_fails and status == "drifted")
        with_record = False
        if pushes:
            rec_status, rec_pr, rec_ctl = two_arms(record_rng, arms, base, now, main_rate,
                                                   (first, k), ((counts[i], n_baseline),
                                                                records[i]), shifts.get(i))
            with_record = rec_status == "regressed" or (drift_fails and rec_status == "drifted")
            runs[3] += rec_pr + rec_ctl
            control_runs[1] += rec_ctl
        failed[0] |= regressed
        failed[1] |= fails
        failed[2] |= with_record
        drifted += status == "drifted"
        runs[0] += used
        runs[1] += pr_used + ctl_used
        control_runs[0] += ctl_used
        if i == target:
            flagged = [regressed, fails, with_record]
    return failed, flagged, runs, control_runs, drifted, target


def scenario(rng, alone, arms, rates, args, drift, drop, record_rng=None, after_push=False,
             half=False):
    """One scenario's figures: [baseline alone, control arm, control arm + main's record] for
    PRs failed, the dropped task flagged and runs per PR / (tasks x k), each with its 95%
    interval half-width (`*_ci`); `floor_ratio`: the runs if every task the first stage does not
    clear got one stage of control runs and nothing more (see control_floor)."""
    modes = 3 if args.record_pushes else 2
    fails, flags, ctl, drifted = [0] * modes, [0] * modes, [0, 0], 0
    per_trial = [[], [], [], []]  # runs of each PR: alone, control arm, floor, with the record
    for _ in range(args.trials):
        failed, flagged, used, control_runs, n_drifted, target = trial(
            rng, alone, arms, rates, args.baseline_runs, args.k, drift, drop, args.drift_fails,
            record_rng, args.record_pushes, after_push, half, not args.no_suite_shift)
        if drop and target is None:
            continue
        ctl = [ctl[0] + control_runs[0], ctl[1] + control_runs[1]]
        drifted += n_drifted
        for mode in range(modes):
            fails[mode] += failed[mode]
            flags[mode] += flagged[mode]
        for mode in range(4):
            per_trial[mode].append(used[mode] / (len(rates) * args.k))
    counted = max(len(per_trial[0]), 1)
    ratios = [mean_ci(values) for values in per_trial]
    shown = ratios[:2] + ratios[3:modes + 1]
    return {"pr_fail": [f / counted for f in fails], "flagged": [f / counted for f in flags],
            "pr_fail_ci": [proportion_ci(f, counted) for f in fails],
            "flagged_ci": [proportion_ci(f, counted) for f in flags],
            "runs_ratio": [r[0] for r in shown], "runs_ratio_ci": [r[1] for r in shown],
            "floor_ratio": ratios[2][0],
            "control_share": ctl[0] / max(sum(per_trial[1]) * len(rates) * args.k, 1),
            "record_control_share": ctl[1] / max(sum(per_trial[3]) * len(rates) * args.k, 1),
            "drifted_per_pr": drifted / counted, "trials": len(per_trial[0])}


def proportion_ci(hits: int, n: int) -> float:
    """Half-width of the 95% interval of hits/n (normal approximation, at least 1/n's worth)."""
    rate = hits / max(n, 1)
    return 1.96 * math.sqrt(max(rate * (1 - rate), 1 / max(n, 1)) / max(n, 1))


def mean_ci(values: list[float]) -> tuple[float, float]:
    """(mean, half-width of its 95% interval)."""
    n = max(len(values), 1)
    mean = sum(values) / n
    spread = sum((v - mean) ** 2 for v in values) / max(n - 1, 1)
    return mean, 1.96 * math.sqrt(spread / n)


def run(args) -> dict:
    rates = true_rates(args.tasks)
    stages = confirmation.DEFAULT_STAGES
    alone, arms = Judge(stages), ArmJudge(stages, args.alpha, args.futility)
    rows = {}
    cases = [(f"drift {float(d):.1f}", d, Fraction(0)) for d in DRIFTS]
    cases += [(f"drift {float(d):.1f} + PR drop 0.4", d, PR_DROP) for d in DRIFTS]
    cases += [("drift to zero (1.0) + PR drop 0.4", Fraction(1), PR_DROP)]
    if args.record_pushes:
        cases += [(f"{label} after main's last push", d, drop) for label, d, drop in
                  [("drift 0.1", DRIFTS[1], Fraction(0)), ("drift 0.2", DRIFTS[2], Fraction(0)),
                   ("drift 0.2 + PR drop 0.4", DRIFTS[2], PR_DROP)]]
        cases += [(f"{label} on half the tasks", d, drop) for label, d, drop in
                  [("drift 0.1", DRIFTS[1], Fraction(0)), ("drift 0.2", DRIFTS[2], Fraction(0)),
                   ("drift 0.1 + PR drop 0.4", DRIFTS[1], PR_DROP),
                   ("drift 0.2 + PR drop 0.4", DRIFTS[2], PR_DROP)]]
    for label, drift, drop in cases:
        print(f"gate_drift: {label}", file=sys.stderr, flush=True)
        rng = random.Random(f"{args.seed}-{label}")
        record_rng = random.Random(f"{args.seed}-{label}-record")
        rows[label] = scenario(rng, alone, arms, rates, args, drift, drop, record_rng,
                               after_push="after main's last push" in label,
                               half="on half the tasks" in label)
    column = 2 if args.record_pushes else 1  # the figures: the design this run measures
    figures = {
        "false_alarm_per_pr": rows["drift 0.0"]["pr_fail"][column],
        "pr_fail_drift_0_1": rows["drift 0.1"]["pr_fail"][column],
        "pr_fail_drift_0_2": rows["drift 0.2"]["pr_fail"][column],
        "detect_drop_0_4": rows["drift 0.0 + PR drop 0.4"]["flagged"][column],
        "detect_drop_0_4_drift_0_1": rows["drift 0.1 + PR drop 0.4"]["flagged"][column],
        "detect_drop_0_4_drift_0_2": rows["drift 0.2 + PR drop 0.4"]["flagged"][column],
        "runs_ratio": rows["drift 0.0"]["runs_ratio"][column],
        "runs_ratio_drift_0_1": rows["drift 0.1"]["runs_ratio"][column],
        "runs_ratio_drift_0_2": rows["drift 0.2"]["runs_ratio"][column],
    }
    met = {key: (figures[key] <= t if op == "<=" else figures[key] >= t)
           for key, (op, t) in TARGETS.items()}
    return {"settings": {"tasks": args.tasks, "k": args.k, "baseline_runs": args.baseline_runs,
                         "trials": args.trials, "seed": args.seed, "alpha": str(args.alpha),
                         "futility": str(args.futility), "record_pushes": args.record_pushes,
                         "drift_fails": args.drift_fails, "stages": list(stages),
                         "suite_shift": not args.no_suite_shift},
            "scenarios": rows, "figures": figures, "met": met}


def print_report(out: dict) -> None:
    s = out["settings"]
    pushes = s["record_pushes"]
    print(f"gate_drift: {s['tasks']} tasks, baselines of {s['baseline_runs']} runs, PR k={s['k']}, "
          f"{s['trials']} trials per scenario, seed {s['seed']}, control alpha {s['alpha']}, "
          f"futility p >= {s['futility']}{', drift: fail' if s['drift_fails'] else ''}"
          + (f", main's record: last {pushes} pushes x {s['k']} runs per task" if pushes else ""))
    print("  (± : half-width of the 95% interval; trials: PRs counted, a drop scenario counts "
          "only PRs whose dropped task is gated)")
    heads = ["baseline alone", "control arm"] + (["+ main's record"] if pushes else [])
    print(f"\n  {'':50}" + "".join(f"{h:>18}" for h in heads))
    for label, row in out["scenarios"].items():
        key = "flagged" if "drop" in label else "pr_fail"
        what = "flags the task" if key == "flagged" else "PRs failed"
        print(f"  {label + ': ' + what:50}" + "".join(
            f"{100 * v:10.1f}% ±{100 * ci:4.1f}" for v, ci in zip(row[key], row[key + "_ci"]))
            + f"   trials {row['trials']}, drifted tasks/PR {row['drifted_per_pr']:.2f}")
    print(f"\n  {'runs per PR / (5 x tasks)':50}" + "".join(f"{h:>18}" for h in heads)
          + f"{'floor':>8}")
    for label, row in out["scenarios"].items():
        print(f"  {label:50}" + "".join(
            f"{v:11.2f}x ±{ci:4.2f}" for v, ci in zip(row["runs_ratio"], row["runs_ratio_ci"]))
            + f"{row['floor_ratio']:7.2f}x  (control runs {100 * row['control_share']:.0f}%"
            + (f", with the record {100 * row['record_control_share']:.0f}%)" if pushes else ")"))
    print("  floor: one stage of control runs on every gated task the first stage does not clear,"
          " nothing more")
    if pushes:
        print(f"  main's record: {pushes} pushes x {s['k']} runs per task, run by eval.yml on "
              "each push to main whatever the PRs (its cost is per push, not per PR: 1.00x a "
              "push at k runs, plus its own confirmation staging)")
    print(f"  targets ({heads[-1]}): " + "; ".join(
        f"{key} {out['figures'][key]:.4g} {op} {t:g}: {'met' if out['met'][key] else 'NOT met'}"
        for key, (op, t) in TARGETS.items()))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--baseline-runs", type=int, default=40)
    parser.add_argument("--alpha", type=Fraction, default=control.CONTROL_ALPHA,
                        help="the control test's level per task (default: the shipped one)")
    parser.add_argument("--futility", type=Fraction, default=control.FUTILITY_P,
                        help="both arms stop once the one-sided p is at least this "
                             "(default: the shipped one)")
    parser.add_argument("--record-pushes", type=int, default=main_record.RECORD_PUSHES,
                        help="main's recorded pushes (k runs per task each) as free control "
                             "evidence, the third column (0: no record, two columns)")
    parser.add_argument("--no-suite-shift", action="store_true",
                        help="the third column without main's suite-wide drift "
                             "(main_record.suite_shift): the rule before it")
    parser.add_argument("--drift-fails", action="store_true",
                        help="as with `gate: {drift: fail}`: a drifted task fails the PR")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if min(args.trials, args.tasks, args.k, args.baseline_runs) < 1:
        parser.error("--trials, --tasks, -k and --baseline-runs must be at least 1")
    if args.record_pushes < 0:
        parser.error(f"--record-pushes: expected 0 or more, got {args.record_pushes}")
    if not 0 < args.alpha < 1:
        parser.error(f"--alpha: expected a level between 0 and 1, got {args.alpha}")
    if not 0 < args.futility <= 1:
        parser.error(f"--futility: expected a p between 0 (excluded) and 1, got {args.futility}")
    out = run(args)
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        print_report(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
