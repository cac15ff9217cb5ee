"""What a checks run's start costs over a bare interpreter: the fresh `python -I -S -B -c BOOT`
of checks_program.py every checks run gets (ci_eval/run/checks/checks_program.py), running a checks.py
that imports ci_eval.checks, against `python -I -S -c pass`.

Each checks.py below runs through the real checks program (its verdict pipe, its process guard)
in a workspace where it passes, with the sys.path the harness gives it. Starts are interleaved
(bare, then each checks.py, round after round) and each figure is the median over --repeat
rounds of the wall and of the CPU (user + system, os.wait4) of one start:

  plain        import sys; sys.exit(0)                        (bench/overhead.py's, no ci_eval)
  verdict      from ci_eval.checks import main, passed        (the smallest that uses ci_eval)
  file_equals  from ci_eval.checks import file_equals, main   (tests/conftest.py's default)
  run_tests    from ci_eval.checks import main, run_tests     (imported, pytest not started)

--against DIR: also the same starts with the ci_eval package of another checkout (e.g. a
`git archive` of main), interleaved in the same rounds, keys suffixed "_against".

    python3 bench/checks_start.py [--repeat 31] [--against DIR] [--json]
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ci_eval.run.sandbox.launcher import checks_sys_path

REPO = Path(__file__).resolve().parents[1]
CHECKS = {
    "plain": "import sys\n\nsys.exit(0)\n",
    "verdict": "from ci_eval.checks import main, passed\n\nmain(passed())\n",
    "file_equals": 'from ci_eval.checks import file_equals, main\n\n'
                   'main(file_equals("answer.txt", "42\\n"))\n',
    "run_tests": "from ci_eval.checks import main, run_tests\n\nmain()\n",
}


def start(argv: list[str], cwd: Path, pass_fds: tuple[int, ...] = ()) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of argv; it must exit 0."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, pass_fds=pass_fds, stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} exited {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime


@functools.cache
def program_of(package_parent: Path) -> types.ModuleType:
    """That checkout's checks_program module (it imports the standard library alone): its own
    `command` says how that checkout starts a checks run."""
    path = package_parent / "ci_eval" / "run" / "checks" / "checks_program.py"
    spec = importlib.util.spec_from_file_location(f"checks_program_{len(str(path))}_{hash(path)}",
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def checks_start(package_parent: Path, checks: Path, workspace: Path) -> tuple[float, float]:
    """One checks run as the harness starts it, with ci_eval from package_parent."""
    sys_path = [p for p in checks_sys_path() if Path(p) != REPO] + [str(package_parent)]
    read, write = os.pipe()
    try:
        argv = program_of(package_parent).command(write, str(checks), sys_path)
        figures = start(argv, workspace, (write,))
        os.close(write)
        write = -1
        with os.fdopen(read, "rb") as verdict:
            read = -1
            word = verdict.read().split(b"\n", 1)[0]  # then the accepted reports, if any
    finally:
        for fd in (read, write):
            if fd != -1:
                os.close(fd)
    if word != b"pass":
        raise SystemExit(f"{checks} with {package_parent}: verdict {word!r}, expected pass")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=31, help="rounds (medians)")
    parser.add_argument("--against", type=Path, help="the folder holding another ci_eval")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat: expected a whole number >= 1, got {args.repeat}")
    if args.against and not (args.against / "ci_eval" / "checks" / "__init__.py").is_file():
        parser.error(f"--against: expected a folder holding ci_eval/, got {args.against}")
    sides = {"": REPO, **({"_against": args.against.resolve()} if args.against else {})}
    work = Path(tempfile.mkdtemp(prefix="ci-eval-bench-checks-start-"))
    samples: dict[str, list[tuple[float, float]]] = {"bare": []}
    load_start = os.getloadavg()
    try:
        (work / "answer.txt").write_text("42\n")
        scripts = {}
        for name, text in CHECKS.items():
            scripts[name] = work / f"checks_{name}.py"
            scripts[name].write_text(text)
        for _ in range(args.repeat):
            samples["bare"].append(start([sys.executable, "-I", "-S", "-c", "pass"], work))
            for suffix, parent in sides.items():
                for name, script in scripts.items():
                    samples.setdefault(name + suffix, []).append(
                        checks_start(parent, script, work))
    finally:
        for path in work.iterdir():
            path.unlink()
        work.rmdir()
    medians = {name: {"wall_ms": round(statistics.median(w for w, _ in runs) * 1000, 2),
                      "cpu_ms": round(statistics.median(c for _, c in runs) * 1000, 2)}
               for name, runs in samples.items()}
    over = {name: round(m["wall_ms"] - medians["bare"]["wall_ms"], 2)
            for name, m in medians.items() if name != "bare"}
    figures = {"load_average_start": [round(x, 2) for x in load_start],
               "start_ms": medians, "ms_over_bare": over,
               "load_average_end": [round(x, 2) for x in os.getloadavg()],
               "repeat": args.repeat}
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    for name, m in medians.items():
        extra = "" if name == "bare" else f"  (+{over[name]:.2f} ms over bare)"
        print(f"{name:22} wall {m['wall_ms']:7.2f} ms  CPU {m['cpu_ms']:7.2f} ms{extra}")
    print(f"load average: {figures['load_average_start']} -> {figures['load_average_end']} "
          f"({os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
