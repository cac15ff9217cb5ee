"""Where a run's CPU goes, process by process, against the bare runner's, measured in one run.

bench/overhead.py's task and inline agent (its `per_sample`): groups of k=5 runs of a fresh task,
one bare group then one harness group, interleaved, after a warm-up group of each. The CPU of
each process (user + system, kernel work included) summed over the groups, per run:

  harness  runner           the harness process (getrusage): workspace, its .git, run folders,
                            the requests, the diff, results, the cleaner; it starts no program
           agent_launcher   the agents' sandbox launcher (/proc/PID/stat, in clock ticks: read
                            over many runs): its clone(2) into the namespaces, per request
           agent_sandbox    what it forked and reaped: the fork's view, the exec, then bash
           checks_launcher  the checks' launcher, the same
           checks_sandbox   the fork's view, the exec, `python -I -S -B -c BOOT` of
                            checks_program and checks.py
  bare     runner           this process: copy, results line, remove
           agent            `bash -c AGENT` (os.wait4)
           checks           `python checks.py`

Printed beside them: each side's total, `cpu_ratio` (harness over bare), the wall per run of each
(median over the groups) and `wall_ratio` (what overhead.py's per_sample_ratio measures; at -j 1
the harness runs a run's checks beside the next run's agent, so its wall is below its CPU), and
`extra_ms`: what each part of a run costs over its bare counterpart (runner over runner, both
agent processes over bash, both checks processes over `python checks.py`).

The runners create every file of a run, so their figures follow the disk: where creating a file
is slow and gets slower with churn (this project's machines: ext4 without a journal, /tmp after
many runs; docs/perf-round3.md), set TMPDIR to a tmpfs folder to split the harness's own work.

    python3 bench/run_cost.py [--json] [--groups 12] [--venv DIR]
(--venv: reuse or make the venv there instead of a throwaway one; ci-eval is reinstalled.)
"""

from __future__ import annotations

import itertools
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import overhead

HARNESS_PARTS = ("runner", "agent_launcher", "agent_sandbox", "checks_launcher", "checks_sandbox")
BARE_PARTS = ("runner", "agent", "checks")


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def harness_snapshot() -> dict[str, float]:
    """The harness side's CPU seconds so far, by part (the runner: this process, and what it
    reaped itself, which is nothing unless a step started a program)."""
    from ci_eval.run.sandbox import launcher

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    agents, agent_commands = overhead.launcher_cpu(launcher.AGENTS)
    checks, checks_commands = overhead.launcher_cpu(launcher.CHECKS)
    return {"runner": own_cpu() + children.ru_utime + children.ru_stime,
            "agent_launcher": agents, "agent_sandbox": agent_commands,
            "checks_launcher": checks, "checks_sandbox": checks_commands}


def measure(base: Path, groups: int) -> dict:
    from ci_eval.run.sandbox import isolation

    found = isolation.detect()
    if not (found.agent_sandboxed and found.checks_sandboxed):
        raise SystemExit("run_cost.py: no agent and checks sandbox here, nothing to split: "
                         + "; ".join(found.notices))
    repo = base / "repo"
    tasks = repo / "tasks"
    tasks.mkdir(parents=True)
    out = base / "out"
    out.mkdir()
    numbers = itertools.count(1)
    overhead.harness_group(overhead.make_task(tasks, next(numbers)), repo, out)  # warm-up
    overhead.bare_group(overhead.make_task(tasks, next(numbers)), base, out)
    harness = dict.fromkeys(HARNESS_PARTS, 0.0)
    bare = dict.fromkeys(BARE_PARTS, 0.0)
    walls: dict[str, list[float]] = {"harness": [], "bare": []}
    for _ in range(groups):
        task = overhead.make_task(tasks, next(numbers))
        started, before = time.perf_counter(), own_cpu()
        overhead.bare_group(task, base, out, bare)  # adds its agents' and checks' CPU
        bare["runner"] += own_cpu() - before
        walls["bare"].append((time.perf_counter() - started) / overhead.K)
        task = overhead.make_task(tasks, next(numbers))
        started, before = time.perf_counter(), harness_snapshot()
        overhead.harness_group(task, repo, out)
        after = harness_snapshot()
        walls["harness"].append((time.perf_counter() - started) / overhead.K)
        for part in HARNESS_PARTS:
            harness[part] += after[part] - before[part]
    return figures(harness, bare, walls, groups * overhead.K)


def figures(harness: dict, bare: dict, walls: dict, runs: int) -> dict:
    """Per-run milliseconds of each part, the totals, the ratios and the extra per part."""
    per_run = {side: {part: round(seconds / runs * 1000, 2) for part, seconds in parts.items()}
               for side, parts in (("harness", harness), ("bare", bare))}
    for parts in per_run.values():
        parts["total"] = round(sum(parts.values()), 2)
    wall = {side: round(statistics.median(times) * 1000, 2) for side, times in walls.items()}
    h, b = per_run["harness"], per_run["bare"]
    extra = {"runner": h["runner"] - b["runner"],
             "agent": h["agent_launcher"] + h["agent_sandbox"] - b["agent"],
             "checks": h["checks_launcher"] + h["checks_sandbox"] - b["checks"]}
    return {"cpu_ms_per_run": per_run, "cpu_ratio": round(h["total"] / b["total"], 3),
            "wall_ms_per_run": wall, "wall_ratio": round(wall["harness"] / wall["bare"], 3),
            "extra_ms": {part: round(ms, 2) for part, ms in extra.items()}, "runs": runs}


def inner(args) -> int:
    import _venv

    base = Path(tempfile.mkdtemp(prefix="ci-eval-bench-"))
    try:
        start = _venv.load_average()
        found = measure(base, args.groups)
        found.update(load_average_start=start, load_average_end=_venv.load_average())
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    h, b = found["cpu_ms_per_run"]["harness"], found["cpu_ms_per_run"]["bare"]
    print(f"CPU per run over {found['runs']} runs a side (ms): harness {h['total']} = runner "
          f"{h['runner']} + agent launcher {h['agent_launcher']} + agent sandbox "
          f"{h['agent_sandbox']} + checks launcher {h['checks_launcher']} + checks sandbox "
          f"{h['checks_sandbox']}")
    print(f"                                bare {b['total']} = runner {b['runner']} + agent "
          f"{b['agent']} + checks {b['checks']}")
    extra = found["extra_ms"]
    print(f"over bare: runner +{extra['runner']:.2f}, agent +{extra['agent']:.2f}, checks "
          f"+{extra['checks']:.2f} ms; CPU ratio {found['cpu_ratio']:.2f}, wall ratio "
          f"{found['wall_ratio']:.2f} (wall per run {found['wall_ms_per_run']['harness']} / "
          f"{found['wall_ms_per_run']['bare']} ms)")
    print(f"load average: {found['load_average_start']} -> {found['load_average_end']} "
          f"({os.cpu_count()} cores)")
    return 0


def main() -> int:
    return overhead.groups_cli(__doc__, __file__, inner)


if __name__ == "__main__":
    sys.exit(main())
