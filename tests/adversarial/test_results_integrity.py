"""Class 6: results integrity, and the smaller class 8 items about recording.

Defences: ci_eval/results/store.py (one invocation holds a results folder: flock, holder's pid;
every line read back is checked: duplicate runs, runs beyond what was asked, foreign agents are
exit 2 naming file:line; a failed append is undone) and run/preflight.py (--out resolved, never
the repo root, above it or inside tasks/; -k at most 1000).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from harness_helpers import assert_bad_input

from .conftest import IS_ROOT, needs_sandbox


def _results(arena, name: str = "results", task: str = "task-001-greet") -> Path:
    return arena.repo / name / f"{task}.jsonl"


@needs_sandbox
def test_a_second_invocation_on_a_held_results_folder_is_refused_at_once(arena):
    arena.task()
    slow = arena.agent(f"sleep 20.{arena.marker}\n")
    first = arena.start("run", "-k", "1", "--agent-cmd", slow)
    try:
        lock = arena.repo / "results" / ".ci-eval.lock"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (lock.exists() and lock.read_text().strip()):
            time.sleep(0.05)
        for extra in ([], ["--resume"], ["--fresh"]):
            started = time.monotonic()
            second = arena.run("run", "-k", "1", *extra, "--agent", "noop", check_canaries=False)
            assert time.monotonic() - started < 15
            assert_bad_input(second.proc, "in use by another ci-eval run", f"pid {first.pid}")
    finally:
        first.kill()
        first.communicate()
    arena.kill_survivors()
    assert not _results(arena).exists() or _results(arena).read_text() == ""


@needs_sandbox
@pytest.mark.parametrize("line, needle", [
    ({"run": 1}, "run 1 recorded twice"),
    ({"run": 999}, "run 999 is beyond the runs asked"),
    ({"run": 3, "agent": "reference"}, "a results file holds one agent's runs"),
])
def test_a_forged_line_is_bad_input_naming_file_and_line(arena, line, needle):
    arena.task()
    first = arena.run("run", "-k", "2", "-j", "2", "--agent", "noop")
    assert first.returncode == 0, first.detail()
    path = _results(arena)
    records = [json.loads(text) for text in path.read_text().splitlines()]
    with open(path, "a") as handle:
        handle.write(json.dumps({**records[0], **line}) + "\n")
    for args in (["report"], ["compare", "--results", "results"],
                 ["run", "-k", "2", "--resume", "--agent", "noop"]):
        refused = arena.run(*args)
        assert_bad_input(refused.proc, "task-001-greet.jsonl:3", needle)


@needs_sandbox
def test_out_spelled_through_a_missing_folder_is_the_folder_it_resolves_to(arena):
    """`results/../../x` (results/ need not exist) is ../x: its recorded runs are checked."""
    arena.task()
    outside = arena.base / "x"
    first = arena.run("run", "-k", "1", "--agent", "reference", "--out", "../x",
                      out=str(outside))
    assert first.returncode == 0, first.detail()
    pooled = arena.run("run", "-k", "1", "--agent", "noop", "--out", "results/../../x",
                       out=str(outside))
    _warned_then_refused(pooled.proc, "results already recorded")
    resumed = arena.run("run", "-k", "2", "--resume", "--agent", "noop",
                        "--out", "results/../../x", out=str(outside))
    _warned_then_refused(resumed.proc, "recorded with agent 'reference'")
    assert [r["agent"] for r in first.records()] == ["reference"]


def _warned_then_refused(proc, needle: str) -> None:
    """An --out that climbs out of the repo root is said once (a warning naming where the
    results go), then the refusal is the one error line."""
    warning, error = proc.stderr.strip().splitlines()
    assert "climbs out of the repo root" in warning and str(Path("x")) in warning
    proc.stderr = error + "\n"
    assert_bad_input(proc, needle)


@needs_sandbox
@pytest.mark.parametrize("out, needle", [
    ("", "empty string"), (" ", "empty string"), (".", "repo root"), ("..", "repo root"),
    ("tasks", "inside tasks/"), ("tasks/task-001-greet/repo-state", "inside tasks/"),
])
def test_out_that_would_write_into_the_repo_or_the_tasks_is_refused(arena, out, needle):
    arena.task()
    refused = arena.run("run", "-k", "1", "--agent", "noop", "--out", out)
    assert_bad_input(refused.proc, "--out", needle)
    assert sorted(p.name for p in arena.repo.iterdir()) == ["tasks"]


@needs_sandbox
def test_a_huge_k_is_refused_before_any_work(arena):
    arena.task()
    refused = arena.run("run", "-k", "1000000000", "--agent", "noop")
    assert refused.returncode == 2, refused.detail()
    assert "expected a whole number 1-1000" in refused.stderr
    assert refused.seconds < 10 and refused.max_rss_kib < 200 * 1024, (refused.seconds,
                                                                        refused.max_rss_kib)


@needs_sandbox
def test_a_corrupt_middle_line_gets_advice_that_works(arena):
    arena.task()
    first = arena.run("run", "-k", "3", "-j", "2", "--agent", "noop")
    assert first.returncode == 0, first.detail()
    path = _results(arena)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1][:40], lines[2]]) + "\n")
    refused = arena.run("run", "-k", "3", "--resume", "--agent", "noop")
    message = assert_bad_input(refused.proc, f"{path}:2", "not valid JSON")
    assert "fix or delete this line" in message and "--fresh" in message, message
    # the advice: delete the line, then --resume reruns that run
    path.write_text("\n".join([lines[0], lines[2]]) + "\n")
    resumed = arena.run("run", "-k", "3", "--resume", "--agent", "noop")
    assert resumed.returncode == 0, resumed.detail()
    assert sorted(r["run"] for r in resumed.records()) == [1, 2, 3]
    # or start over
    path.write_text("\n".join([lines[0], lines[1][:40], lines[2]]) + "\n")
    fresh = arena.run("run", "-k", "3", "--fresh", "--agent", "noop")
    assert fresh.returncode == 0, fresh.detail()
    assert sorted(r["run"] for r in fresh.records()) == [1, 2, 3]


@needs_sandbox
def test_the_agent_cannot_write_its_own_results_line(arena):
    """Into the results folder in the repo or outside it (both hidden), now or later (a daemon
    left behind dies with the agent's PID namespace)."""
    arena.task()
    outside = arena.base / "out"
    line = json.dumps({"run": 1, "task": "task-001-greet", "status": "pass", "passed": True,
                       "agent": "forged", "k": 1, "requested": 1})
    targets = [_results(arena), outside / "task-001-greet.jsonl"]
    writes = "\n".join(f"echo '{line}' >> {t} 2>/dev/null" for t in targets)
    agent = arena.agent(f"""{writes}
setsid sh -c 'sleep 1.{arena.marker}; {writes.replace(chr(10), '; ')}' </dev/null >/dev/null 2>&1 &
true
""")
    for out in (str(outside), "results"):
        result = arena.run("run", "-k", "1", "--out", out, "--agent-cmd", agent, out=out)
        assert result.returncode == 0, result.detail()
        time.sleep(1.5)
        assert [r["status"] for r in result.records()] == ["fail"], result.records()


# --- a full disk ---------------------------------------------------------------------------------

# In a mount namespace of the test's own: a 64 KiB tmpfs at $0, filled with what $1 holds and
# then with zeros to the last page; then the command; then whether the results file is still
# exactly what $1 holds (the namespace, and the tmpfs, end with this shell).
FILL_AND_RUN = ('mount -t tmpfs -o size=64k ci-eval-test "$0" && cp -a "$1"/. "$0"/ && '
                '{ dd if=/dev/zero of="$0/filler" bs=4096 >/dev/null 2>&1; true; } && '
                'staged="$1" && shift && "$@"; code=$?; '
                'cmp -s "$0/task-001-greet.jsonl" "$staged/task-001-greet.jsonl" && '
                'echo RESULTS-FILE-UNCHANGED; exit $code')


@needs_sandbox
@pytest.mark.skipif(not IS_ROOT or not shutil.which("unshare"), reason="needs root to mount")
def test_a_full_disk_while_recording_names_the_file_and_leaves_no_partial_line(arena):
    """--out on a full 64 KiB tmpfs: the append of run 2 (a 15 KiB line: the agent's diff)
    fails part way; the file is cut back to run 1 and the one-line error names it."""
    arena.task()
    big = arena.file("big.txt", "".join(f"line {i} of a large change\n" for i in range(600)))
    agent = arena.agent(f"cp {big} big.txt\n")
    first = arena.run("run", "-k", "1", "--agent-cmd", agent, "--out", "staging", out="staging")
    assert first.returncode == 0, first.detail()
    staging = arena.repo / "staging"
    (staging / ".ci-eval.lock").write_text("12345\n")
    full = arena.repo / "full"
    full.mkdir()
    prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c", FILL_AND_RUN,
              str(full), str(staging)]
    result = arena.run("run", "-k", "2", "--resume", "--out", "full",
                       "--agent-cmd", agent, prefix=prefix, out="full")
    assert result.returncode == 2, result.detail()
    assert "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert "task-001-greet.jsonl" in line and "No space left on device" in line, line
    assert "cannot record run 2" in line and "the file is as it was before this run" in line
    assert "RESULTS-FILE-UNCHANGED" in result.stdout, result.detail()
