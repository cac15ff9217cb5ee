"""The bundled suite end to end: verify, reference vs noop, and the gate on the bundled baseline."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from harness_helpers import cli, read_lines

REPO = Path(__file__).resolve().parent.parent


def test_verify_passes_on_the_bundled_tasks():
    proc = cli("verify", "--json", cwd=REPO, timeout=900)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, [t for t in report["tasks"] if not t["valid"]]
    assert len(report["tasks"]) == 21


def readme_main_command() -> list[str]:
    """The `ci-eval run ...` of the README's first command, as words."""
    block = (REPO / "README.md").read_text().split("```sh", 1)[1].split("```", 1)[0]
    line = next(line for line in block.splitlines() if "ci-eval run" in line)
    return shlex.split(line[line.index("ci-eval run"):])[1:]


def test_readme_main_command_reference_passes_all_noop_none_and_the_gate_tells_them_apart(
        tmp_path):
    args = readme_main_command()
    assert args[:3] == ["run", "--agent", "reference"] and "-k" in args
    reference = cli(*args, "-j", "2", "--out", str(tmp_path / "reference"), "--json",
                    cwd=REPO, timeout=600)
    assert reference.returncode == 0, reference.stderr
    tasks = json.loads(reference.stdout)["tasks"]
    assert len(tasks) == 21
    assert all(t["passes"] == t["runs"] == 5 and t["errors"] == 0 for t in tasks)

    # the other end of the scale needs one run per task: noop changes nothing, so every run of
    # it is the same state (verify proves the checks fail on it, twice)
    noop_args = ["run", "--agent", "noop", *args[3:args.index("-k")], "-k", "1",
                 *args[args.index("-k") + 2:]]
    noop = cli(*noop_args, "-j", "2", "--out", str(tmp_path / "noop"), "--json", cwd=REPO,
               timeout=600)
    assert noop.returncode == 0, noop.stderr
    tasks = json.loads(noop.stdout)["tasks"]
    assert len(tasks) == 21 and all(t["passes"] == 0 and t["errors"] == 0 for t in tasks)
    assert all(t["runs"] == 1 for t in tasks)
    for task in tasks:  # the untouched repo-state fails, and a failing check says why
        (record,) = read_lines(tmp_path / "noop" / f"{task['task']}.jsonl")
        assert record["status"] == "fail" and "FAIL" in record["reason"], record["reason"]

    passing = cli("compare", "--results", str(tmp_path / "reference"), cwd=REPO)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    failing = cli("compare", "--results", str(tmp_path / "noop"), "--format", "json",
                  "--allow-agent-mismatch", cwd=REPO)
    assert failing.returncode == 1
    statuses = {t["status"] for t in json.loads(failing.stdout)["tasks"]}
    assert statuses == {"regressed"}
