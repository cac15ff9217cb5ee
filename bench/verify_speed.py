"""`ci-eval verify` against the same checks run bare, and against another checkout's verify, in
one run (interleaved rounds, so that the machine's load falls on every side alike).

Per round, on the bundled tasks named (default: all):
  verify          `python -m ci_eval verify --root REPO -j J TASKS` with this checkout's ci_eval
  verify_against  the same with the ci_eval of --against DIR (e.g. `git archive` of main's commit
                  unpacked there), the same tasks, the same J
  bare            each state's checks.py once per state (untouched repo-state, solution/, each
                  negative), as `python checks.py` in a workspace built from repo-state with the
                  output applied, CI_EVAL_TASK_DIR set, no sandbox, no harness, J at once; only
                  the checks runs are timed (the copies are made before)
Each figure: wall seconds, median over --rounds; ratios verify / bare and verify / against.

    python3 bench/verify_speed.py [--against DIR] [--rounds 1] [-j J] [--json] [TASK ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ci_eval.run.workspace.build import apply_output, create_workspace
from ci_eval.tasks.load import load_tasks


def verify_seconds(package_parent: Path, tasks: list[str], jobs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ci_eval", "verify", "--root", str(REPO),
                           "-j", str(jobs), *tasks], env=env, cwd=REPO, capture_output=True,
                          text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"verify with {package_parent} exited {done.returncode}:\n"
                         f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds


def bare_states(work: Path, tasks: list) -> list[tuple[Path, Path]]:
    """(checks.py, workspace) of every state of every task, the workspaces built here."""
    states = []
    for task in tasks:
        outputs = [None, task.solution_dir, *task.negatives()]
        for number, output in enumerate(outputs):
            workspace = work / f"{task.id}-{number}"
            create_workspace(task.repo_state, workspace)
            if output is not None:
                apply_output(output, workspace)
            states.append((task.checks_path, workspace))
    return states


def bare_seconds(work: Path, tasks: list, jobs: int) -> float:
    states = bare_states(work, tasks)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def one(state: tuple[Path, Path]) -> None:
        checks, workspace = state
        subprocess.run([sys.executable, str(checks)], cwd=workspace, check=False,
                       env={**env, "CI_EVAL_TASK_DIR": str(checks.parent),
                            "CI_EVAL_WORKSPACE": str(workspace)},
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, states))
    seconds = time.perf_counter() - started
    for _, workspace in states:
        shutil.rmtree(workspace, ignore_errors=True)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="*", help="bundled task ids (default: all)")
    parser.add_argument("--against", type=Path, help="the folder holding another ci_eval")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (medians)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.against and not (args.against / "ci_eval" / "main.py").is_file():
        parser.error(f"--against: expected a folder holding ci_eval/, got {args.against}")
    tasks = load_tasks(REPO, args.tasks)
    ids = [task.id for task in tasks]
    sides = {"verify": REPO, **({"verify_against": args.against.resolve()} if args.against
                                else {})}
    times: dict[str, list[float]] = {name: [] for name in (*sides, "bare")}
    load_start = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="ci-eval-bench-verify-"))
    try:
        for round_no in range(args.rounds):
            order = list(sides.items()) if round_no % 2 == 0 else list(sides.items())[::-1]
            for name, parent in order:
                times[name].append(verify_seconds(parent, ids, args.jobs))
            times["bare"].append(bare_seconds(work, tasks, args.jobs))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = {name: round(statistics.median(values), 2) for name, values in times.items()}
    figures = {"load_average_start": [round(x, 2) for x in load_start],
               "tasks": len(ids), "states": sum(2 + len(t.negatives()) for t in tasks),
               "jobs": args.jobs, "rounds": args.rounds, "seconds": seconds,
               "verify_over_bare": round(seconds["verify"] / seconds["bare"], 3)}
    if args.against:
        figures["verify_over_against"] = round(seconds["verify"] / seconds["verify_against"], 3)
    figures["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    for name, value in seconds.items():
        print(f"{name:16} {value:8.2f} s")
    print(f"verify / bare {figures['verify_over_bare']:.2f}"
          + (f"; verify / against {figures['verify_over_against']:.2f}" if args.against else "")
          + f"  ({figures['tasks']} tasks, {figures['states']} states, -j {args.jobs})")
    print(f"load average: {figures['load_average_start']} -> {figures['load_average_end']} "
          f"({os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
