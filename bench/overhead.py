"""Harness overhead against a bare runner doing the same essential work, measured the same way.

Both sides run inside a throwaway virtualenv with ci-eval installed non-editable (as a user's CI
installs it; see _venv.py), and start the same interpreter.

1. Per sample (`per_sample_ratio`, target <= 1.3). In groups of k=5 runs of a FRESH task (so the
   harness's per-task set-up is spread over k=5, as in a suite run with -k 5), interleaved, one
   bare group then one harness group, medians over the groups:
     bare:    per run: copy repo-state, the agent (`bash -c "printf 'hello\\n' > greet.txt"`), the
              check (`python checks.py`, a subprocess), a results line, remove the workspace.
     harness: load the task, then `run_tasks` with the same inline agent, -j 1: workspace, agent
              sandbox, diff, checks sandbox, results line, cleanup (waited for: run_tasks
              returns once its cleaner is done), exactly what `ci-eval run` does per run.
2. -j 20 (`j20_ratio`, target <= 1.10): 20 tasks x k=5 of a `sleep 1` agent, end to end through
   the CLI (`ci-eval run -k 5 -j 20 --agent-cmd 'sleep 1'`, start-up and report included) vs a
   bare `xargs -P 20` doing copy + `sleep 1` + `python checks.py` + a results line + remove for
   the same 100 runs. Interleaved, median of 3.
3. `ci-eval --help` start (`help_seconds`, best of 5; target <= 0.3 s).

Run: python bench/overhead.py [--json] [--groups 12] [--venv DIR]
(--venv: reuse or make the venv there instead of a throwaway one; ci-eval is reinstalled.)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKS = "import sys\nsys.exit(0 if open('greet.txt').read() == 'hello\\n' else 1)\n"
AGENT = "printf 'hello\\n' > greet.txt"
K = 5


def make_task(tasks: Path, number: int) -> Path:
    task = tasks / f"task-{number:03d}-bench"
    (task / "repo-state" / "src").mkdir(parents=True)
    for index in range(10):  # a small but not empty project
        (task / "repo-state" / "src" / f"module_{index}.py").write_text("x = 1\n" * 50)
    (task / "repo-state" / "greet.txt").write_text("bye\n")
    (task / "prompt.md").write_text("Say hello.\n")
    (task / "checks.py").write_text(CHECKS)
    (task / "metadata.json").write_text(
        '{"difficulty": 1, "area": "bench", "tags": [], "created": "2026-11-29"}')
    (task / "solution").mkdir()
    (task / "solution" / "fix.patch").write_text(
        "--- a/greet.txt\n+++ b/greet.txt\n@@ -1 +1 @@\n-bye\n+hello\n")
    return task


def bare_group(task: Path, scratch: Path, out: Path, cpu: dict | None = None) -> None:
    """What a minimal runner must do per run, k times, no sandbox. `cpu`: the CPU seconds of
    its agents and its checks are added under "agent" and "checks"."""
    for run in range(1, K + 1):
        workspace = scratch / f"bare-{task.name}-{run}"
        shutil.copytree(task / "repo-state", workspace, symlinks=True)
        env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"),
               "CI_EVAL_WORKSPACE": str(workspace), "CI_EVAL_RUN": str(run)}
        agent = _child(["bash", "-c", AGENT], workspace, env, "agent", cpu)
        assert agent == 0
        status = "pass" if _child([sys.executable, str(task / "checks.py")], workspace, env,
                                  "checks", cpu) == 0 else "fail"
        assert status == "pass"
        with open(out / f"{task.name}.jsonl", "a") as handle:
            handle.write(json.dumps({"task": task.name, "run": run, "status": status}) + "\n")
        shutil.rmtree(workspace)


def _child(argv: list[str], cwd: Path, env: dict, step: str, cpu: dict | None) -> int:
    """Run argv to its end (what subprocess.run does); its exit code, its CPU added to cpu[step]."""
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait again
    if cpu is not None:
        cpu[step] = cpu.get(step, 0.0) + usage.ru_utime + usage.ru_stime
    return child.returncode


def harness_group(task: Path, repo: Path, out: Path) -> None:
    from ci_eval.agents.config import inline_agent
    from ci_eval.run.context import RunContext
    from ci_eval.run.runner import run_tasks
    from ci_eval.run.sandbox import isolation
    from ci_eval.run.workspace.build import make_runs_base
    from ci_eval.tasks.load import load_task

    loaded = load_task(task)
    runs_base = make_runs_base()
    ctx = RunContext(repo_root=repo, out_dir=out, agent=inline_agent(AGENT),
                     isolation=isolation.detect(), runs_base=runs_base)
    records = run_tasks([loaded], K, 1, ctx)[loaded.id]
    shutil.rmtree(runs_base)
    assert [r["status"] for r in records] == ["pass"] * K, records


def cpu_seconds() -> float:
    """CPU time of this process, its reaped children and the sandbox launchers (which reap
    the sandboxed commands): the work done, less sensitive to the machine's load than wall."""
    from ci_eval.run.sandbox import launcher

    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total + sum(sum(launcher_cpu(one)) for one in (launcher.AGENTS, launcher.CHECKS))


def launcher_cpu(one) -> tuple[float, float]:
    """(its own CPU seconds, its reaped children's: the sandboxed commands) of a sandbox
    launcher; zeros when it is not running."""
    if not one.pid:
        return 0.0, 0.0
    try:
        fields = Path(f"/proc/{one.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def per_sample(base: Path, groups: int) -> dict:
    from ci_eval.run.sandbox import isolation

    repo = base / "repo"
    tasks = repo / "tasks"
    tasks.mkdir(parents=True)
    out = base / "out"
    out.mkdir()
    isolation.detect()  # once per invocation: outside the timings
    # one warm-up group each (imports, the sandbox launcher's start: per invocation, not per run)
    harness_group(make_task(tasks, 999), repo, out)
    bare_group(make_task(tasks, 998), base, out)
    bare_times, harness_times, bare_cpu, harness_cpu = [], [], [], []
    numbers = itertools.count(1)
    for group in range(groups):
        for side, times, cpu in ((bare_group, bare_times, bare_cpu),
                                 (harness_group, harness_times, harness_cpu)):
            task = make_task(tasks, next(numbers))
            started, used = time.perf_counter(), cpu_seconds()
            side(task, base if side is bare_group else repo, out)
            times.append((time.perf_counter() - started) / K)
            cpu.append((cpu_seconds() - used) / K)
    bare, harness = statistics.median(bare_times), statistics.median(harness_times)
    return {"per_sample_ratio": round(harness / bare, 3),
            "per_sample_ms": {"harness": round(harness * 1000, 1), "bare": round(bare * 1000, 1)},
            "per_sample_cpu_ms": {"harness": round(statistics.mean(harness_cpu) * 1000, 1),
                                  "bare": round(statistics.mean(bare_cpu) * 1000, 1)},
            "groups": groups}


BARE_RUN = r"""
task="$1"; run="$2"; ws="$SCRATCH/ws-$(basename "$task")-$run"
cp -r "$task/repo-state" "$ws"
cd "$ws"
sleep 1
if "$PYTHON" "$task/checks.py"; then status=pass; else status=fail; fi
printf '{"task": "%s", "run": %s, "status": "%s"}\n' "$(basename "$task")" "$run" "$status" \
  >> "$OUT/$(basename "$task").jsonl"
cd / && rm -rf "$ws"
"""


def j20(base: Path, rounds: int = 3) -> dict:
    repo = base / "j20"
    for number in range(1, 21):
        make_task(repo / "tasks", number)
    items = "".join(f"{repo / 'tasks' / f'task-{n:03d}-bench'} {run}\n"
                    for n in range(1, 21) for run in range(1, K + 1))
    script = base / "bare-run.sh"
    script.write_text(BARE_RUN)
    ci_eval = Path(sys.executable).with_name("ci-eval")
    bare_times, harness_times = [], []
    for round_no in range(rounds):
        out = base / f"bare-out-{round_no}"
        scratch = base / f"bare-scratch-{round_no}"
        out.mkdir()
        scratch.mkdir()
        env = {**os.environ, "SCRATCH": str(scratch), "OUT": str(out), "PYTHON": sys.executable}
        started = time.perf_counter()
        subprocess.run(["xargs", "-P", "20", "-n", "2", "bash", str(script)], input=items,
                       text=True, env=env, check=True)
        bare_times.append(time.perf_counter() - started)
        assert sum(1 for p in out.iterdir() for _ in p.open()) == 100
        out = base / f"harness-out-{round_no}"
        started = time.perf_counter()
        done = subprocess.run([str(ci_eval), "run", "--root", str(repo), "--out", str(out),
                               "-k", str(K), "-j", "20", "--agent-cmd", "sleep 1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              check=False)
        harness_times.append(time.perf_counter() - started)
        assert done.returncode == 0, done.stderr[-2000:]
        lines = [json.loads(line) for p in out.glob("*.jsonl") for line in p.open()]
        assert len(lines) == 100 and {r["status"] for r in lines} == {"fail"}, done.stderr[-2000:]
    bare, harness = statistics.median(bare_times), statistics.median(harness_times)
    return {"j20_ratio": round(harness / bare, 3),
            "j20_seconds": {"harness": round(harness, 2), "bare_xargs": round(bare, 2),
                            "ideal": 5.0}}


def help_start() -> dict:
    ci_eval = Path(sys.executable).with_name("ci-eval")
    times = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([str(ci_eval), "--help"], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return {"help_seconds": round(min(times), 3),
            "help_seconds_median": round(statistics.median(times), 3)}


def inner(args) -> int:
    import _venv

    base = Path(tempfile.mkdtemp(prefix="ci-eval-bench-"))
    try:
        figures = {"load_average_start": _venv.load_average()}
        figures.update(per_sample(base, args.groups))
        figures.update(j20(base))
        figures.update(help_start())
        figures["load_average_end"] = _venv.load_average()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    ms = figures["per_sample_ms"]
    print(f"per sample (k={K}, median of {args.groups} groups): harness {ms['harness']} ms, "
          f"bare {ms['bare']} ms, ratio {figures['per_sample_ratio']:.2f} (target <= 1.3); "
          f"CPU per sample: harness {figures['per_sample_cpu_ms']['harness']} ms, "
          f"bare {figures['per_sample_cpu_ms']['bare']} ms")
    sec = figures["j20_seconds"]
    print(f"100 runs of a `sleep 1` agent at -j 20, end to end: ci-eval {sec['harness']} s, "
          f"bare xargs -P 20 {sec['bare_xargs']} s, ratio {figures['j20_ratio']:.2f} "
          "(target <= 1.10)")
    print(f"`ci-eval --help` start: {figures['help_seconds']:.3f} s best of 5, median "
          f"{figures['help_seconds_median']:.3f} s (target <= 0.3 s)")
    print(f"load average: {figures['load_average_start']} -> {figures['load_average_end']} "
          f"({os.cpu_count()} cores)")
    return 0


def groups_cli(doc: str, script: str, run_inner) -> int:
    """The command line of a bench measured in groups of k=5 runs a side (this one,
    run_cost.py): run_inner(args) inside the venv."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--groups", type=int, default=12, help="groups of k=5 runs per side")
    parser.add_argument("--venv", type=Path, help="reuse (or make) the venv here")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.groups < 1:
        parser.error("--groups: expected a whole number >= 1")
    if args.inner:
        return run_inner(args)
    import _venv

    return _venv.run_inside(script, args.venv,
                            ["--groups", str(args.groups)] + (["--json"] if args.json else []))


def main() -> int:
    return groups_cli(__doc__, __file__, inner)


if __name__ == "__main__":
    sys.exit(main())
