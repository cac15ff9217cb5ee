"""`ci-eval generate` for real: real git repositories (a tiny one built here, and cachetools'
history vendored as a bundle in tests/data/), the tests run in the checks' sandbox, every kept
task proved by `ci-eval verify`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from generate_helpers import hostile_config, tiny_repo

from ci_eval.generate import decide
from ci_eval.generate.session import JOURNAL, STATE_DIR
from ci_eval.run.sandbox import isolation

DATA = Path(__file__).parent / "data"
CACHETOOLS = DATA / "cachetools.bundle"
# cachetools 57d2e48 "Fix #387: Handle obj=None case for inspection in _DescriptorBase."
CACHETOOLS_FIX = "57d2e48"

pytestmark = pytest.mark.skipif(not isolation.detect().agent_sandboxed,
                                reason="no mount namespace here")


def generate(cli, *args, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return cli("generate", *args, "--json", cwd=cwd, timeout=timeout)


def summary_of(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def added_lines(task: Path) -> list[str]:
    return decide.added_lines((task / "solution" / "fix.patch").read_text())


def test_history_keeps_the_fix_and_rejects_each_other_commit_with_its_reason(tmp_path, cli):
    shas = tiny_repo(tmp_path / "repo")
    marker = tmp_path / "config-obeyed"
    hostile_config(tmp_path / "repo", marker)
    summary = summary_of(generate(cli, "--from-history", "repo", "--into", "out", "-j", "2",
                                  cwd=tmp_path))
    reasons = {r["key"]: r["reason"] for r in summary["rejections"]}
    assert reasons == {shas["initial"]: decide.UNSUPPORTED,
                       shas["docstring"]: decide.NO_TEST_CHANGE,
                       shas["flaky"]: decide.FLAKY,
                       shas["broken-test"]: decide.NO_SOURCE_CHANGE,
                       shas["fix-clamp"]: decide.BASE_RED}
    assert (summary["scanned"], summary["candidates"], summary["valid_tasks"]) == (6, 3, 1)
    assert summary["rejected"][decide.FLAKY] == 1
    [kept] = summary["tasks"]
    assert kept["key"] == shas["fix-mean"]
    task = tmp_path / "out" / "tasks" / kept["task"]
    metadata = json.loads((task / "metadata.json").read_text())
    assert metadata["fail_to_pass"] == ["tests/test_mean.py::test_mean"]
    assert metadata["pass_to_pass"] == ["tests/test_calc.py::test_add",
                                        "tests/test_calc.py::test_clamp_inside",
                                        "tests/test_calc.py::test_clamp_low"]
    assert metadata["x-generated"]["commit"] == shas["fix-mean"]
    prompt = (task / "prompt.md").read_text()
    assert "assert 3.0 == 4" in prompt and "tests/test_mean.py::test_mean" in prompt
    assert added_lines(task) == ["return sum(values) / len(values)"]
    assert not any(line in prompt for line in added_lines(task))
    assert not (task / "repo-state" / ".git").exists()
    assert not marker.exists(), "the mined repository's git configuration or hooks ran"
    verified = cli("verify", "--root", "out", cwd=tmp_path, timeout=300)
    assert verified.returncode == 0 and "1/1 tasks valid" in verified.stdout, verified.stdout
    # run again: every commit was decided, nothing is mined or written twice
    again = summary_of(generate(cli, "--from-history", "repo", "--into", "out", cwd=tmp_path))
    assert (again["resumed"], again["valid_tasks"], again["tasks"]) == (6, 1, summary["tasks"])
    assert len(list((tmp_path / "out" / "tasks").iterdir())) == 1


def test_a_run_killed_mid_way_resumes_and_ends_as_an_uninterrupted_one(tmp_path):
    shas = tiny_repo(tmp_path / "repo")
    argv = [sys.executable, "-m", "ci_eval", "generate", "--from-history", "repo",
            "--into", "out", "--json"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    journal = tmp_path / "out" / STATE_DIR / JOURNAL
    started = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and started.poll() is None:
            if journal.is_file() and len(journal.read_text().splitlines()) >= 2:
                break
            time.sleep(0.2)
        assert started.poll() is None, "finished before it could be killed"
        os.killpg(started.pid, signal.SIGKILL)
    finally:
        started.wait()
    decided = len(journal.read_text().splitlines())
    assert 2 <= decided < 6
    resumed = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600, check=False)
    summary = summary_of(resumed)
    assert summary["resumed"] >= decided
    assert [t["key"] for t in summary["tasks"]] == [shas["fix-mean"]]
    assert len(summary["rejections"]) == 5
    assert len(list((tmp_path / "out" / "tasks").iterdir())) == 1
    assert not (tmp_path / "out" / STATE_DIR / "work").exists()


def test_mutations_write_tasks_whose_negatives_are_the_functions_other_breaking_mutants(
        tmp_path, cli):
    shas = tiny_repo(tmp_path / "repo")
    summary = summary_of(generate(cli, "--mutations", "repo", "--rev", shas["fix-mean"],
                                  "--into", "out", "-j", "2", cwd=tmp_path))
    assert summary["mode"] == "mutations" and summary["valid_tasks"] >= 3
    tasks = [tmp_path / "out" / "tasks" / t["task"] for t in summary["tasks"]]
    operators = {json.loads((t / "metadata.json").read_text())["x-generated"]["operator"]
                 for t in tasks}
    assert {"flip-operator", "drop-branch"} <= operators
    with_negatives = [t for t in tasks if (t / "negatives").is_dir()]
    assert with_negatives, "clamp has two breaking mutants: each is the other's negative"
    for task in tasks:
        prompt = (task / "prompt.md").read_text()
        assert not any(line in prompt for line in added_lines(task))
    verified = cli("verify", "--root", "out", "--json", cwd=tmp_path, timeout=600)
    report = json.loads(verified.stdout)
    assert verified.returncode == 0 and report["valid"], verified.stdout[-2000:]
    states = {t["task"]: t["states_checked"] for t in report["tasks"]}
    assert all(states[t.name] == 2 + len(list((t / "negatives").iterdir()))
               for t in with_negatives)


def test_a_real_fix_from_cachetools_history_becomes_a_verified_task(tmp_path, cli):
    assert (DATA / "cachetools.LICENSE").is_file()
    summary = summary_of(generate(cli, "--from-history", CACHETOOLS, "--rev",
                                  f"{CACHETOOLS_FIX}^!", "--into", "out", cwd=tmp_path))
    assert summary["valid_tasks"] == 1, summary["rejections"]
    task = tmp_path / "out" / "tasks" / summary["tasks"][0]["task"]
    prompt = (task / "prompt.md").read_text()
    assert not any(line in prompt for line in added_lines(task))
    assert json.loads((task / "tests.json").read_text())["pythonpath"] == [".", "src"]
    verified = cli("verify", "--root", "out", cwd=tmp_path, timeout=300)
    assert verified.returncode == 0, verified.stdout


@pytest.mark.parametrize("args, needles", [
    (["--from-history", "missing", "--into", "out"], ["missing", "REPO"]),
    (["--from-history", "empty", "--into", "out"], ["empty", "cannot read it as a git"]),
    (["--from-history", "repo", "--into", "tasks"], ["--into", "for review"]),
    (["--from-history", "repo", "--into", "out", "--rev", "no-such-branch"], ["--rev"]),
    (["--from-history", "repo", "--into", "out", "--rev=-x"], ["--rev"]),
    (["--mutations", "repo", "--into", "out", "--rev", "nope"], ["--rev"]),
])
def test_bad_input_is_one_line_naming_the_field(tmp_path, cli, assert_bad_input, args, needles):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "empty").mkdir()
    tiny_repo(tmp_path / "repo")
    done = cli("generate", *args, cwd=tmp_path)
    assert_bad_input(done, *needles)
    assert not (tmp_path / "out" / "tasks").exists()


def test_new_task_from_commit_makes_one_candidate_and_says_why_not(tmp_path, cli):
    shas = tiny_repo(tmp_path / "repo")
    (tmp_path / "tasks").mkdir()
    refused = cli("new-task", "--from-commit", shas["docstring"], "--repo", "repo",
                  cwd=tmp_path, timeout=300)
    assert refused.returncode == 1 and decide.NO_TEST_CHANGE in refused.stdout
    made = cli("new-task", "--from-commit", shas["fix-mean"][:10], "--repo", "repo", "--json",
               cwd=tmp_path, timeout=600)
    summary = summary_of(made)
    assert [t["key"] for t in summary["tasks"]] == [shas["fix-mean"]]
    assert (tmp_path / "generated" / "tasks" / summary["tasks"][0]["task"]).is_dir()
    assert list((tmp_path / "tasks").iterdir()) == []


def test_new_task_from_a_commit_that_does_not_exist_is_bad_input(tmp_path, cli, assert_bad_input):
    tiny_repo(tmp_path / "repo")
    (tmp_path / "tasks").mkdir()
    done = cli("new-task", "--from-commit", "0123abc", "--repo", "repo", cwd=tmp_path)
    assert_bad_input(done, "--from-commit")
    assert not (tmp_path / "generated").exists()
    both = cli("new-task", "x", "--from-commit", "0123abc", cwd=tmp_path)
    assert_bad_input(both, "--from-commit")
