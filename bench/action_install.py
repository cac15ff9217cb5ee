"""How long the action's install takes in a job, cold and warm, under act on this host.

A repository written by `ci-eval init` runs a one-job workflow that uses the action (from a local
copy, as `ci-eval/ci-eval@v1`) in mode plan with setup-python "false" and a python3 that cannot
import ci-eval (/usr/bin/python3), so the action builds its virtualenv: pip installs ci-eval and
its dependencies from the package index. The first job starts with an empty cache (cold); the
second restores the virtualenv saved by the first (warm: the actions/cache stand-in of
tests/act_stubs copies the folder, as actions/cache restores a tarball). Printed: the wall
seconds act reports for the steps "Install ci-eval" and "Restore the cached install", and the
whole job, for each run, and the warm/cold ratio.

Needs act (the test extra) and the package index (the cold install downloads). The issue's
target: a warm install under 15 s; the cold one took 62 s per job without a cache.

Run: python bench/action_install.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from act_helpers import act_binary, commit_repo, stand_in_flags

from ci_eval.scaffold import ACTION_REF
from ci_eval.main import main as ci_eval_main

WORKFLOW = f"""on: push
permissions: {{}}
jobs:
  install:
    runs-on: ubuntu-latest
    permissions: {{contents: read}}
    steps:
      - uses: actions/checkout@08c6903cd8c0fde910a37f88322edcfb5dd907a8 # v5.0.0
        with: {{persist-credentials: false}}
      - uses: {ACTION_REF}
        with: {{mode: plan, setup-python: "false"}}
"""
STEP_RE = re.compile(r"✅  Success - Main (Install ci-eval|Restore the cached install) "
                     r"\[([0-9.]+)(ms|s)\]")


def step_seconds(output: str) -> dict[str, float]:
    found = {}
    for name, amount, unit in STEP_RE.findall(output):
        found[name] = float(amount) / (1000 if unit == "ms" else 1)
    return found


def one_job(repo: Path, action: Path, work: Path, cache: Path) -> dict:
    argv = [act_binary(), "push", "-W", ".github/workflows/bench.yml",
            "-P", "ubuntu-latest=-self-hosted", "--no-cache-server",
            "--action-cache-path", str(work / "act-cache"),
            "--env", f"CI_EVAL_TEST_ARTIFACTS={cache}",
            "--local-repository", f"{ACTION_REF}={action}", *stand_in_flags(repo)]
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": f"/usr/bin:/bin:{Path(act_binary()).parent}", "HOME": str(home),
           "LANG": "C.UTF-8"}
    started = time.monotonic()
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=900,
                          check=False)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"act failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    steps = step_seconds(done.stdout)
    return {"job_seconds": round(wall, 1),
            "install_seconds": round(steps.get("Install ci-eval", float("nan")), 2),
            "restore_seconds": round(steps.get("Restore the cached install", float("nan")), 2),
            "reused": "using the cached install" in done.stdout}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        repo, action, cache = tmp / "repo", tmp / "action", tmp / "cache"
        repo.mkdir()
        commit_repo(repo)
        if ci_eval_main(["--root", str(repo), "init"]) != 0:
            return 1
        (repo / ".github" / "workflows" / "bench.yml").write_text(WORKFLOW)
        commit_repo(repo)
        action.mkdir()
        shutil.copy(ROOT / "action.yml", action / "action.yml")
        shutil.copy(ROOT / "pyproject.toml", action / "pyproject.toml")
        shutil.copy(ROOT / "README.md", action / "README.md")
        shutil.copytree(ROOT / "ci_eval", action / "ci_eval",
                        ignore=shutil.ignore_patterns("__pycache__"))
        cold = one_job(repo, action, tmp / "cold", cache)
        warm = one_job(repo, action, tmp / "warm", cache)
    result = {"cold": cold, "warm": warm,
              "warm_over_cold_install": round(
                  (warm["install_seconds"] + warm["restore_seconds"])
                  / (cold["install_seconds"] + cold["restore_seconds"]), 3)}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for name in ("cold", "warm"):
            r = result[name]
            print(f"{name}: install step {r['install_seconds']:.2f} s, restore step "
                  f"{r['restore_seconds']:.2f} s, whole job {r['job_seconds']:.1f} s"
                  + (" (cached virtualenv reused)" if r["reused"] else ""))
        print(f"warm/cold (restore + install): {result['warm_over_cold_install']}")
    return 0


if __name__ == "__main__":
    os.environ.pop("PYTHONPATH", None)
    raise SystemExit(main())
