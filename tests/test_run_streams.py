"""Issue #31, item 12: `run` with stderr unwritable (2>/dev/full) exited 1 though every run was
valid (the notes and progress are best effort: the results and the exit code are the product),
and a relative --out that climbs out of the repo root wrote there without a word (now a warning;
the repo root itself or above it, and tasks/, stay refused with exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from harness_helpers import CHECKOUT, write_task


def _run(repo, *args, stderr=None, stdout=subprocess.PIPE):
    env = {**os.environ, "PYTHONPATH": CHECKOUT}
    return subprocess.run([sys.executable, "-m", "ci_eval", "run", "--agent", "reference",
                           "-k", "1", *args], cwd=repo, env=env, stdout=stdout,
                          stderr=stderr if stderr is not None else subprocess.PIPE, text=True,
                          timeout=120, check=False)


def test_an_unwritable_stderr_does_not_change_the_exit_code(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    with open("/dev/full", "w") as full:
        done = _run(repo, "--json", stderr=full)
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["tasks"][0]["passes"] == 1
    [record] = [json.loads(line) for line in
                (repo / "results" / "task-001-greet.jsonl").read_text().splitlines()]
    assert record["status"] == "pass"


def test_the_exit_code_is_the_same_with_stderr_unwritable(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo, solution="echo nope > greet.txt\n")
    plain = _run(repo, "--out", "plain")
    with open("/dev/full", "w") as full:
        done = _run(repo, "--out", "full", stderr=full)
    assert done.returncode == plain.returncode, (done.stdout, plain.stderr)


def test_a_relative_out_outside_the_repo_root_is_warned_about(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    done = _run(repo, "--out", "results/../../elsewhere")
    assert done.returncode == 0, done.stderr
    assert ("warning: --out results/../../elsewhere climbs out of the repo root" in done.stderr
            and str(tmp_path / "elsewhere") in done.stderr)
    assert (tmp_path / "elsewhere" / "task-001-greet.jsonl").is_file()
    inside = _run(repo, "--out", "results/../other")
    assert inside.returncode == 0 and "warning" not in inside.stderr
    above = _run(repo, "--out", "results/../../..")
    assert above.returncode == 2 and "--out: is the repo root or above it" in above.stderr
