"""The bundled suite end to end: verify, reference vs noop, and the gate on the bundled baseline."""

from __future__ import annotations

import json
from pathlib import Path

from harness_helpers import cli, read_lines

REPO = Path(__file__).resolve().parent.parent


def test_verify_passes_on_the_bundled_tasks():
    proc = cli("verify", "--json", cwd=REPO, timeout=300)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, [t for t in report["tasks"] if not t["valid"]]
    assert len(report["tasks"]) == 20


def test_reference_passes_every_task_noop_none_and_the_gate_tells_them_apart(tmp_path):
    reference = cli("run", "--agent", "reference", "-k", "1", "-j", "2", "--out",
                    str(tmp_path / "reference"), "--json", cwd=REPO, timeout=300)
    assert reference.returncode == 0, reference.stderr
    tasks = json.loads(reference.stdout)["tasks"]
    assert len(tasks) == 20 and all(t["passes"] == 1 and t["errors"] == 0 for t in tasks)

    noop = cli("run", "--agent", "noop", "-k", "1", "-j", "2", "--out", str(tmp_path / "noop"),
               "--json", cwd=REPO, timeout=300)
    assert noop.returncode == 0, noop.stderr
    tasks = json.loads(noop.stdout)["tasks"]
    assert len(tasks) == 20 and all(t["passes"] == 0 and t["errors"] == 0 for t in tasks)
    record = read_lines(tmp_path / "noop" / "task-004-pagination-drops-last-page.jsonl")[0]
    assert record["reason"]  # a failing run says why

    passing = cli("compare", "--results", str(tmp_path / "reference"), "-k", "1",
                  "--allow-agent-mismatch", cwd=REPO)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    failing = cli("compare", "--results", str(tmp_path / "noop"), "-k", "1", "--format", "json",
                  "--allow-agent-mismatch", cwd=REPO)
    assert failing.returncode == 1
    statuses = {t["status"] for t in json.loads(failing.stdout)["tasks"]}
    assert statuses == {"regressed"}
