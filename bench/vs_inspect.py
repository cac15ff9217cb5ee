"""ci-eval against inspect_ai on the same workload, end to end through each one's CLI.

Workload: N tasks x 5 epochs (N = 20 and 100). Each sample copies a small repo-state (10 files)
into a fresh folder, runs the agent `bash -c "printf 'hello\\n' > greet.txt"` there, runs the
check `python checks.py` as a subprocess, records a pass/fail, and removes the folder. Both sides
run at most 4 agents at a time (ci-eval `-j 4`; inspect `--max-samples 4 --max-subprocesses 4`)
with the same interpreter of one throwaway venv holding both packages (ci-eval non-editable).
ci-eval scores a run's checks beside the next runs' agents, on at most the cores (`--checks-jobs`
default: up to 4 + 2 processes here); inspect scores a sample inside its sample slot.

  ci-eval: `ci-eval run -k 5 -j 4 --agent-cmd SCRIPT` (with its agent and checks sandboxes, its
           own diff and results files: what a user's CI pays).
  inspect: `inspect eval bench_task.py --model mockllm/model --epochs 5` with a solver that does
           the copy and the agent subprocess and a scorer that runs checks.py, log written.

The two workloads are run interleaved `--rounds` times (default 3); medians of wall time and
ratios ci-eval / inspect are printed (< 1.0: ci-eval is faster), and the cost of each extra
sample, (wall(100x5) - wall(20x5)) / 400, for each side.

inspect-ai is not installed by default (it is large): `--install` adds it to the throwaway venv;
without it, and with no inspect in a reused `--venv`, the figures are reported as skipped.

Run: python bench/vs_inspect.py --install [--json] [--rounds 3] [--venv DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _venv
from overhead import make_task

AGENT = "printf 'hello\\n' > greet.txt"
EPOCHS = 5
PARALLEL = 4
SIZES = (20, 100)

INSPECT_TASK = '''
import os, shutil, sys, tempfile
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, accuracy, scorer
from inspect_ai.solver import solver
from inspect_ai.util import subprocess as run_subprocess

TASKS = Path(os.environ["BENCH_TASKS"])
AGENT = {agent!r}


@solver
def agent():
    async def solve(state, generate):
        workspace = Path(tempfile.mkdtemp(prefix="inspect-ws-"))
        shutil.copytree(TASKS / state.input / "repo-state", workspace / "w", symlinks=True)
        await run_subprocess(["bash", "-c", AGENT], cwd=str(workspace / "w"))
        state.metadata["workspace"] = str(workspace)
        return state
    return solve


@scorer(metrics=[accuracy()])
def checks():
    async def score(state, target):
        workspace = Path(state.metadata["workspace"])
        done = await run_subprocess([sys.executable, str(TASKS / state.input / "checks.py")],
                                    cwd=str(workspace / "w"))
        shutil.rmtree(workspace)
        return Score(value=1 if done.returncode == 0 else 0)
    return score


@task
def bench():
    names = sorted(p.name for p in TASKS.iterdir())
    return Task(dataset=[Sample(input=name, target="pass") for name in names],
                solver=agent(), scorer=checks())
'''.format(agent=AGENT)


def time_ci_eval(repo: Path, out: Path) -> float:
    ci_eval = Path(sys.executable).with_name("ci-eval")
    started = time.perf_counter()
    done = subprocess.run([str(ci_eval), "run", "--root", str(repo), "--out", str(out),
                           "-k", str(EPOCHS), "-j", str(PARALLEL), "--agent-cmd", AGENT],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"ci-eval run failed ({done.returncode}): {done.stderr[-2000:]}")
    statuses = [json.loads(line)["status"] for path in out.glob("*.jsonl") for line in path.open()]
    count = len(list((repo / "tasks").iterdir()))
    if statuses != ["pass"] * (count * EPOCHS):
        raise SystemExit(f"ci-eval: expected {count * EPOCHS} passes, got {statuses[:10]}...")
    return elapsed


def time_inspect(tasks: Path, task_file: Path, logs: Path) -> float:
    inspect = Path(sys.executable).with_name("inspect")
    env = {**os.environ, "BENCH_TASKS": str(tasks), "INSPECT_LOG_DIR": str(logs),
           "INSPECT_DISPLAY": "none", "INSPECT_EVAL_LOG_FILE_PATTERN": "{task}"}
    started = time.perf_counter()
    done = subprocess.run([str(inspect), "eval", task_file.name, "--model", "mockllm/model",
                           "--epochs", str(EPOCHS), "--max-samples", str(PARALLEL),
                           "--max-subprocesses", str(PARALLEL), "--log-dir", str(logs),
                           "--log-format", "json"],
                          env=env, capture_output=True, text=True,
                          check=False, cwd=task_file.parent)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"inspect eval failed ({done.returncode}): {done.stderr[-2000:]}")
    [log] = logs.glob("*.json")
    result = json.loads(log.read_text())
    samples = result["results"]["completed_samples"]
    accuracy = result["results"]["scores"][0]["metrics"]["accuracy"]["value"]
    count = len(list(tasks.iterdir()))
    if samples != count * EPOCHS or accuracy != 1.0:
        raise SystemExit(f"inspect: {samples} samples, accuracy {accuracy}")
    return elapsed


def measure(base: Path, rounds: int) -> dict:
    task_file = base / "bench_task.py"
    task_file.write_text(INSPECT_TASK)
    walls: dict[str, list[float]] = {}
    for size in SIZES:
        for number in range(1, size + 1):
            make_task(base / f"repo-{size}" / "tasks", number)
    for round_no in range(rounds):
        for size in SIZES:
            repo = base / f"repo-{size}"
            print(f"round {round_no + 1}/{rounds}: {size}x{EPOCHS} ...", file=sys.stderr)
            walls.setdefault(f"inspect_{size}", []).append(
                time_inspect(repo / "tasks", task_file, base / f"logs-{size}-{round_no}"))
            walls.setdefault(f"ci_eval_{size}", []).append(
                time_ci_eval(repo, base / f"out-{size}-{round_no}"))
    median = {name: statistics.median(times) for name, times in walls.items()}
    extra = {side: (median[f"{side}_100"] - median[f"{side}_20"]) / ((100 - 20) * EPOCHS)
             for side in ("ci_eval", "inspect")}
    return {"ratio_20x5": round(median["ci_eval_20"] / median["inspect_20"], 3),
            "ratio_100x5": round(median["ci_eval_100"] / median["inspect_100"], 3),
            "wall_seconds": {name: round(value, 2) for name, value in median.items()},
            "extra_sample_ms": {side: round(value * 1000, 1) for side, value in extra.items()},
            "rounds": rounds, "parallel": PARALLEL, "skipped": None}


def inspect_version() -> str | None:
    if importlib.util.find_spec("inspect_ai") is None:
        return None
    from importlib.metadata import version

    return version("inspect-ai")


def inner(args) -> int:
    found = inspect_version()
    if found is None:
        figures = {"ratio_20x5": None, "ratio_100x5": None,
                   "skipped": "inspect-ai is not installed in the benchmark venv "
                              "(rerun with --install)"}
    else:
        base = Path(tempfile.mkdtemp(prefix="ci-eval-vs-inspect-"))
        try:
            figures = {"inspect_ai": found, "load_average_start": _venv.load_average()}
            figures.update(measure(base, args.rounds))
            figures["load_average_end"] = _venv.load_average()
        finally:
            shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
    elif figures["skipped"]:
        print(f"skipped: {figures['skipped']}")
    else:
        wall, extra = figures["wall_seconds"], figures["extra_sample_ms"]
        print(f"inspect-ai {figures['inspect_ai']}, {PARALLEL} samples at a time, "
              f"median of {figures['rounds']} interleaved rounds")
        for size in SIZES:
            print(f"{size}x{EPOCHS}: ci-eval {wall[f'ci_eval_{size}']} s, inspect "
                  f"{wall[f'inspect_{size}']} s, ratio {figures[f'ratio_{size}x5']:.2f} "
                  "(target < 1.0)")
        print(f"each extra sample: ci-eval {extra['ci_eval']} ms, inspect {extra['inspect']} ms")
        print(f"load average: {figures['load_average_start']} -> {figures['load_average_end']} "
              f"({os.cpu_count()} cores)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--install", action="store_true",
                        help="install inspect-ai into the benchmark venv (large; from PyPI)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median)")
    parser.add_argument("--venv", type=Path, help="reuse (or make) the venv here")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        return inner(args)
    return _venv.run_inside(__file__, args.venv,
                            ["--rounds", str(args.rounds)] + (["--json"] if args.json else []),
                            extra=("inspect-ai",) if args.install else ())


if __name__ == "__main__":
    sys.exit(main())
