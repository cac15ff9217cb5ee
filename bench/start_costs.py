"""What a `ci-eval` start and a checks run's pytest session cost in CPU seconds, measured in one run.

The test suite (and a user's CI) pays these over and over: a `python -m ci_eval` per CLI call,
and for every checks run of a pytest task one pytest session in a fresh interpreter. Each figure
is the median over --repeat starts of the CPU the child used (user + system, os.wait4), so a
loaded machine changes it less than wall time:

  bare python            python -c pass
  ci-eval start          python -m ci_eval validate (a repo holding a copy of task-003), this
                         checkout, bytecode compiled (tests/conftest.py compiles it per session)
  ci-eval from source    the same from a copy without __pycache__ and PYTHONDONTWRITEBYTECODE=1
                         (a fresh clone: what every start of the suite paid before)
  import pytest          python -s -c "import pytest", as the checks' session starts
  checks session         ci_eval.run.checks.pytest_session on task-003's untouched state (its
                         repo-state plus hidden tests; 12 tests fail), the command the checks run

    python3 bench/start_costs.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TASK = REPO / "tasks" / "task-003-retry-after-http-dates"
SESSION = ("import sys\nsys.path.insert(0, sys.argv.pop(1))\n"
           "import ci_eval.run.checks.pytest_session as session\nsys.path.pop(0)\nsession.main()\n")


def cpu_of(argv: list[str], *, cwd: Path, env: dict) -> float:
    """CPU seconds (user + system) of one run of argv, its output discarded."""
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=sink, stderr=sink)
        _, _, usage = os.wait4(child.pid, 0)
    return usage.ru_utime + usage.ru_stime


def median_cpu(argv: list[str], repeat: int, **where) -> float:
    return statistics.median(cpu_of(argv, **where) for _ in range(repeat))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="starts per figure (median)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat: expected a whole number >= 1, got {args.repeat}")
    compileall.compile_dir(REPO / "ci_eval", quiet=2, rx=re.compile(r"[/\\]templates([/\\]|$)"))
    work = Path(tempfile.mkdtemp(prefix="ci-eval-bench-starts-"))
    try:
        shutil.copytree(TASK, work / "repo" / "tasks" / TASK.name)
        workspace = work / "workspace"
        shutil.copytree(TASK / "repo-state", workspace)
        for hidden in (TASK / "hidden_tests").iterdir():
            shutil.copy(hidden, workspace / "tests" / hidden.name)
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
               "TZ": "UTC0"}
        source_only = work / "source"  # a fresh clone's ci_eval: no __pycache__ to read
        shutil.copytree(REPO / "ci_eval", source_only / "ci_eval",
                        ignore=shutil.ignore_patterns("__pycache__"))
        no_bytecode = {**env, "PYTHONPATH": str(source_only), "PYTHONDONTWRITEBYTECODE": "1"}
        py = sys.executable
        cli = [py, "-m", "ci_eval", "validate"]
        figures = {
            "bare python": median_cpu([py, "-c", "pass"], args.repeat, cwd=work, env=env),
            "ci-eval start": median_cpu(cli, args.repeat, cwd=work / "repo", env=env),
            "ci-eval from source": median_cpu(cli, args.repeat, cwd=work / "repo",
                                              env=no_bytecode),
            "import pytest": median_cpu([py, "-s", "-c", "import pytest"], args.repeat,
                                        cwd=work, env=env),
            "checks session": median_cpu(
                [py, "-s", "-c", SESSION, str(REPO), "--ci-eval-report", str(work / "r.json"),
                 "-rA", "-p", "no:cacheprovider", "-q", "--noconftest", "-c", os.devnull,
                 "--rootdir", ".", "tests"], args.repeat, cwd=workspace, env=env),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ratios = {"ci-eval from source / start":
              figures["ci-eval from source"] / figures["ci-eval start"],
              "import pytest / checks session":
              figures["import pytest"] / figures["checks session"]}
    if args.json:
        print(json.dumps({"cpu_seconds": figures, "ratios": ratios}, indent=2))
        return 0
    for name, seconds in figures.items():
        print(f"{name:22} {seconds:6.3f} CPU s")
    for name, ratio in ratios.items():
        print(f"{name:32} {ratio:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
