"""The docker runner's overhead: runs through ci-eval against bare `docker run`s of the same test.

The task is the Harbor fixture (tests/fixtures/harbor/broken-inventory: a busybox image whose
answer lives only in the image), imported with `ci-eval import harbor`, its image built before
anything is timed. One group = k=5 runs, interleaved (bare group, then ci-eval group), medians
over the groups:

  bare:    per run: copy the image's WORKDIR contents (copied out once, as ci-eval does) into a
           fresh folder, `docker run --rm` solution/solve.sh on it, `docker run --rm`
           tests/test.sh with tests/ at /tests and a logs folder at /logs, read reward.txt,
           remove the folder. Its containers carry the fences ci-eval gives (no network, no
           capability, no-new-privileges, the task's pids / memory / cpus): the ratio is what
           ci-eval adds, not what the fences cost. A third, unfenced bare group (only
           --network none) is reported beside it.
  ci-eval: `ci-eval run --agent reference -k 5 -j 1 --fresh` through the CLI (start-up, the
           image lookup, the workspace's git bookkeeping, the diff, the fenced containers with
           their limits, the results lines and the report included).

Both do two containers per run. Target: ratio <= 1.2.

Needs a Docker engine: the one DOCKER_HOST names, else (as root, docker.io installed) a dockerd
of its own in a temp folder, started as the tests start theirs (tests/docker_helpers.py).

Run: python bench/docker_overhead.py [--groups 5] [--json]
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

CHECKOUT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CHECKOUT / "tests"))
sys.path.insert(0, str(CHECKOUT))
from docker_helpers import BUSYBOX, _answers, build_busybox, start_dockerd, stop_dockerd

from ci_eval.run.docker.containers import ContainerSpec, run_argv
from ci_eval.run.docker.settings import docker_settings
from ci_eval.tasks.model import Task

HARBOR = CHECKOUT / "tests" / "fixtures" / "harbor" / "broken-inventory"
K = 5


def docker(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(["docker", *args], capture_output=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"docker {' '.join(args)}: {proc.stderr.decode()[-300:]}")
    return proc


def ci_eval(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    proc = subprocess.run([sys.executable, "-m", "ci_eval", *args], capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"ci-eval {' '.join(args)}: exit {proc.returncode}: "
                         f"{proc.stderr.decode()[-600:]}")
    return proc


def image_of(task: Path) -> str:
    """The tag ci-eval built for the task (from the build line it printed)."""
    out = ci_eval("verify", "--root", str(task.parents[1])).stderr.decode()
    return out.split("image ", 1)[1].split()[0]


def fences(task: Path) -> list[str]:
    """The flags ci-eval gives every judged container of the task (its limits, no network, no
    capability, no-new-privileges): a bare run of the same test carries them too."""
    settings = docker_settings(Task("t", 1, task, json.loads((task / "metadata.json").read_text())))
    argv = run_argv(ContainerSpec("IMAGE", "NAME", ("sh",), "/app", settings=settings))
    return argv[argv.index("--cap-drop"):argv.index("--workdir")] + ["--network", "none"]


def bare_group(image: str, start: Path, task: Path, scratch: Path, flags: list[str]) -> int:
    passed = 0
    for run in range(K):
        workspace = scratch / f"bare-{run}"
        shutil.copytree(start, workspace, symlinks=True)
        logs = scratch / f"bare-{run}.logs"
        (logs / "verifier").mkdir(parents=True)
        docker("run", "--rm", *flags, "-v", f"{workspace}:/app",
               "-v", f"{task / 'solution'}:/solution:ro", image, "sh", "/solution/solve.sh")
        docker("run", "--rm", *flags, "-v", f"{workspace}:/app",
               "-v", f"{task / 'tests'}:/tests:ro", "-v", f"{logs}:/logs", image,
               "sh", "/tests/test.sh")
        passed += (logs / "verifier" / "reward.txt").read_text().strip() == "1"
        shutil.rmtree(workspace)
        shutil.rmtree(logs)
    return passed


def harness_group(root: Path) -> int:
    ci_eval("run", "--root", str(root), "--agent", "reference", "-k", str(K), "-j", "1",
            "--fresh")
    lines = (root / "results" / "task-001-broken-inventory.jsonl").read_text().splitlines()
    return sum(json.loads(line)["status"] == "pass" for line in lines)


def measure(groups: int) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix="docker-overhead-"))
    try:
        root = scratch / "root"
        (root / "tasks").mkdir(parents=True)
        ci_eval("import", "harbor", str(HARBOR), "--into", str(root))
        task = root / "tasks" / "task-001-broken-inventory"
        image = image_of(task)
        start = scratch / "start"
        container = docker("create", image, "true").stdout.decode().strip()
        tar = docker("cp", f"{container}:/app/.", "-").stdout
        docker("rm", container)
        start.mkdir()
        subprocess.run(["tar", "-x", "-C", str(start)], input=tar, check=True)
        flags = fences(task)
        bare, unfenced, harness = [], [], []
        for _ in range(groups):
            began = time.perf_counter()
            assert bare_group(image, start, task, scratch, flags) == K
            bare.append(time.perf_counter() - began)
            began = time.perf_counter()
            assert harness_group(root) == K
            harness.append(time.perf_counter() - began)
            began = time.perf_counter()
            assert bare_group(image, start, task, scratch, ["--network", "none"]) == K
            unfenced.append(time.perf_counter() - began)
        return {"groups": groups, "runs_per_group": K, "fences": flags,
                "bare_seconds_per_run": round(statistics.median(bare) / K, 3),
                "bare_unfenced_seconds_per_run": round(statistics.median(unfenced) / K, 3),
                "ci_eval_seconds_per_run": round(statistics.median(harness) / K, 3),
                "ratio": round(statistics.median(harness) / statistics.median(bare), 3),
                "ratio_to_unfenced": round(statistics.median(harness) / statistics.median(unfenced), 3),
                "target": 1.2}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    engine = None
    if not _answers(dict(os.environ)):
        if os.geteuid() != 0 or shutil.which("dockerd") is None:
            raise SystemExit("no Docker engine answers (set DOCKER_HOST, or run as root with "
                             "docker.io installed)")
        base = Path(tempfile.mkdtemp(prefix="dockerd-bench-"))
        engine = (start_dockerd(base, [str(base / "docker.sock")]), base)
    try:
        if subprocess.run(["docker", "image", "inspect", BUSYBOX],
                          capture_output=True, check=False).returncode != 0:
            build_busybox(docker)
        result = measure(args.groups)
    finally:
        if engine:
            stop_dockerd(*engine)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"docker runner, {result['groups']} interleaved groups of k={K}: bare "
              f"{result['bare_seconds_per_run']:.3f} s/run (the same fences), ci-eval "
              f"{result['ci_eval_seconds_per_run']:.3f} s/run, ratio {result['ratio']:.2f} "
              f"(target <= {result['target']}); bare without limits "
              f"{result['bare_unfenced_seconds_per_run']:.3f} s/run, ratio "
              f"{result['ratio_to_unfenced']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
