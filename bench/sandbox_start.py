"""What one sandbox start costs: the agent's sandbox and the checks' sandbox, through the real
launchers, in CPU milliseconds (the launcher and everything it forked: what a run pays for the
namespaces, the view and the exec) and wall milliseconds (the harness's call, start to end).

Agent: `true` as the agent, in agent_request's view of a fresh run folder (runs in the temp
folder, as `ci-eval run` makes them). Checks: run_checks of overhead.py's trivial task (its
checks.py reads one file) on a fresh workspace: the checks' sandbox, the fresh
`python -I -S -B -c BOOT` of checks_program, the verdict. Each kind in rounds of --repeat starts,
interleaved with the same rounds from another checkout's ci_eval (`--against DIR`, a folder
holding `ci_eval/`: `git archive <commit> ci_eval | tar -x -C DIR`), medians over the rounds.

    python3 bench/sandbox_start.py [--repeat 40] [--rounds 3] [--against DIR] [--json]
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
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _launchers_cpu_ms() -> float:
    """CPU of both launchers and of the children they reaped (every sandboxed command)."""
    from overhead import launcher_cpu

    from ci_eval.run.sandbox import launcher

    return sum(sum(launcher_cpu(one)) for one in (launcher.AGENTS, launcher.CHECKS)) * 1000


def _agent_start(base: Path, number: int, isolation) -> None:
    from ci_eval.run.sandbox import launcher
    from ci_eval.run.sandbox.process import Pipe, run_process
    from ci_eval.run.sandbox.requests import agent_request
    from ci_eval.run.sandbox.views import release_scratch

    run = base / "runs" / f"agent-{number}"
    run.mkdir(parents=True)
    request = agent_request(isolation, ["true"], repo_root=base / "repo", runs_base=base / "runs",
                            run_dir=run)
    with Pipe() as status:
        result = run_process(["true"], cwd=run, env={"PATH": os.defpath}, timeout=60,
                             pipes=(status,), launch=(launcher.AGENTS, request))
    release_scratch(run)
    if result.exit_code != 0:
        raise SystemExit(f"agent sandbox failed: {status.read() or result.output_tail}")


def _checks_start(base: Path, number: int, isolation, task) -> None:
    from ci_eval.run.checks.scoring import run_checks

    workspace = base / "runs" / f"checks-{number}" / "workspace"
    shutil.copytree(task.path / "repo-state", workspace)
    (workspace / "greet.txt").write_text("hello\n")
    outcome = run_checks(task, workspace, isolation, checks_dir=workspace.parent / "checks",
                         runs_base=base / "runs")
    if outcome.status != "pass":
        raise SystemExit(f"checks sandbox failed: {outcome}")


def measure(repeat: int) -> dict:
    """One round: `repeat` starts of each kind in this process (ci_eval as imported)."""
    from overhead import make_task

    from ci_eval.run.sandbox import isolation
    from ci_eval.tasks.load import load_task

    found = isolation.detect()
    if not (found.agent_sandboxed and found.checks_sandboxed):
        raise SystemExit(f"no sandbox here: {found.notices}")
    base = Path(tempfile.mkdtemp(prefix="ci-eval-bench-sandbox-"))
    try:
        (base / "repo" / "tasks").mkdir(parents=True)
        task = load_task(make_task(base / "repo" / "tasks", 1))
        figures = {}
        for kind, start in (("agent", lambda n: _agent_start(base, n, found)),
                            ("checks", lambda n: _checks_start(base, n, found, task))):
            start(-1)  # the launcher's own start is per invocation, not per run
            cpu, wall = _launchers_cpu_ms(), time.perf_counter()
            for number in range(repeat):
                start(number)
            figures[f"{kind}_wall_ms"] = (time.perf_counter() - wall) * 1000 / repeat
            figures[f"{kind}_cpu_ms"] = (_launchers_cpu_ms() - cpu) / repeat
        return figures
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _round(root: Path, repeat: int) -> dict:
    """One round in a fresh interpreter importing ci_eval from `root`."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--inner",
                           "--repeat", str(repeat)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{HERE}"},
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"a round from {root} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=40, help="starts of each kind per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per side (medians)")
    parser.add_argument("--against", type=Path, help="another checkout's folder holding ci_eval/")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeat < 1 or args.rounds < 1:
        parser.error("--repeat and --rounds: expected a whole number >= 1")
    if args.against is not None and not (args.against / "ci_eval" / "__init__.py").is_file():
        parser.error(f"--against {args.against}: expected a folder holding ci_eval/")
    if args.inner:
        print(json.dumps(measure(args.repeat)))
        return 0
    sides = {"this": HERE.parent, **({"against": args.against.resolve()} if args.against else {})}
    rounds: dict[str, list[dict]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for side, root in sides.items():  # interleaved: the machine's load falls on both
            rounds[side].append(_round(root, args.repeat))
    figures = {side: {key: round(statistics.median(r[key] for r in done), 2)
                      for key in done[0]} for side, done in rounds.items()}
    figures["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for side, values in figures.items():
            print(f"{side}: {values}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
