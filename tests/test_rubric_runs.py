"""Runs of a task with a rubric: a run passes only when the checks pass and the rubric says PASS;
the record keeps the score and the tripped criteria; report and compare show them; the PR comment
names a tripped auto-fail gate."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from ci_eval.errors import UserError
from ci_eval.results.records import check_record
from ci_eval.results.summary import summarize

REPO = Path(__file__).resolve().parents[1]
TASK = "task-021-retry-after-negative-delay"


@pytest.fixture(scope="module")
def graded_runs(tmp_path_factory):
    """A repo holding task-021: reference runs recorded as the baseline, then an agent that
    edits the tests' assertions (every check passes, the auto-fail gate trips)."""
    from harness_helpers import cli

    base = tmp_path_factory.mktemp("rubric-runs")
    repo = base / "repo"
    shutil.copytree(REPO / "tasks" / TASK, repo / "tasks" / TASK)
    tampered = base / "tampered_test_parser.py"
    text = (REPO / "tasks" / TASK / "repo-state" / "tests" / "test_parser.py").read_text()
    text = text.replace('now=NOW) == 0.0\n        assert parse_retry_after("Sun',
                        'now=NOW) == -3600.0\n        assert -1 or parse_retry_after("Sun')
    text = text.replace('''        assert parse_retry_after("Wed, 21 Oct 2026 07:29:00", now=NOW) == 60.0
        assert parse_retry_after("Wed, 21 Oct 2026 07:29:30 -0000", now=NOW) == 90.0''',
                        "        pass")
    tampered.write_text(text)
    agent = base / "agent.py"
    agent.write_text("import os, pathlib, shutil\n"
                     f"shutil.copy({str(tampered)!r}, pathlib.Path(os.environ['CI_EVAL_WORKSPACE'])"
                     " / 'tests' / 'test_parser.py')\n")
    ref = cli("run", "--agent", "reference", "-k", "2", "--out", "ref", cwd=repo, timeout=300)
    assert ref.returncode == 0, ref.stderr
    update = cli("baseline", "update", "--all", "--results", "ref", cwd=repo)
    assert update.returncode == 0, update.stderr
    bad = cli("run", "--agent-cmd", f"{sys.executable} {agent}", "-k", "2", "--out", "bad",
              cwd=repo, timeout=300)
    assert bad.returncode == 0, bad.stderr
    return repo


def records(repo: Path, folder: str) -> list[dict]:
    path = repo / folder / f"{TASK}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_run_passing_checks_and_rubric_passes_and_records_its_score(graded_runs):
    assert sorted(r["run"] for r in records(graded_runs, "ref")) == [1, 2]
    for record in records(graded_runs, "ref"):
        assert record["status"] == "pass"
        assert (record["rubric_score"], record["rubric_verdict"]) == (100.0, "PASS")
        assert record["rubric_tripped"] == [] and record["rubric_auto_fail"] == []


def test_checks_passing_with_an_auto_fail_tripped_is_a_failed_run(graded_runs):
    assert sorted(r["run"] for r in records(graded_runs, "bad")) == [1, 2]
    for record in records(graded_runs, "bad"):
        assert record["status"] == "fail" and record["passed"] is False
        assert (record["rubric_score"], record["rubric_verdict"]) == (89.5, "FAIL")
        assert record["rubric_tripped"] == ["no-test-tampering"]
        assert record["rubric_auto_fail"] == ["no-test-tampering"]
        assert "auto-fail criteria tripped: no-test-tampering" in record["reason"]
        assert "patch modifies protected path(s): tests/test_parser.py" in record["reason"]


def test_report_shows_the_mean_score_and_the_most_tripped_criteria(graded_runs):
    from harness_helpers import cli

    table = cli("report", "--results", "bad", cwd=graded_runs)
    assert (f"rubric {TASK}: mean score 89.5/100 over 2 run(s); most tripped: no-test-tampering "
            "(2/2); auto-fail gate tripped: no-test-tampering (2/2)") in " ".join(table.stdout.split())
    data = json.loads(cli("report", "--results", "bad", "--format", "json",
                          cwd=graded_runs).stdout)
    task = data["tasks"][0]
    assert task["mean_rubric_score"] == 89.5 and task["rubric_runs"] == 2
    assert task["rubric_tripped"] == [{"criterion": "no-test-tampering", "runs": 2}]


def test_compare_and_the_pr_comment_name_the_tripped_gate(graded_runs):
    from harness_helpers import cli

    markdown = cli("compare", "--results", "bad", "--format", "markdown",
                   "--allow-agent-mismatch", cwd=graded_runs)
    assert markdown.returncode == 1
    text = markdown.stdout
    assert f"> ⛔ {TASK}: auto-fail gate `no-test-tampering` tripped in 2 of 2 run(s)" in text
    assert "#### Rubric" in text
    assert f"| {TASK} | 89.5 | no-test-tampering (2/2) | ⛔ no-test-tampering (2/2) |" in text
    table = cli("compare", "--results", "bad", "--allow-agent-mismatch", cwd=graded_runs).stdout
    assert f"rubric {TASK}: mean score 89.5/100" in table
    data = json.loads(cli("compare", "--results", "bad", "--json", "--allow-agent-mismatch",
                          cwd=graded_runs).stdout)
    rubric = data["tasks"][0]["rubric"]
    assert rubric["mean_score"] == 89.5
    assert rubric["auto_fail_tripped"] == [{"criterion": "no-test-tampering", "runs": 2}]
    clean = cli("compare", "--results", "ref", "--format", "markdown", cwd=graded_runs)
    assert clean.returncode == 0 and "auto-fail gate" not in clean.stdout


RECORD = {"run": 1, "task": "task-001-x", "status": "fail", "passed": False, "agent": "a"}


@pytest.mark.parametrize("extra, field", [
    ({"rubric_score": 101}, "rubric_score"),
    ({"rubric_score": "89.5"}, "rubric_score"),
    ({"rubric_verdict": "MAYBE"}, "rubric_verdict"),
    ({"rubric_tripped": "no-test-tampering"}, "rubric_tripped"),
    ({"rubric_auto_fail": [1]}, "rubric_auto_fail"),
    ({"status": "pass", "passed": True, "rubric_verdict": "FAIL"}, "status"),
])
def test_the_store_checks_the_rubric_fields(extra, field):
    with pytest.raises(UserError, match=rf"^r/task-001-x.jsonl:3: {field}: "):
        check_record({**RECORD, **extra}, Path("r/task-001-x.jsonl"), 3)


def test_the_summary_counts_tripped_criteria_over_graded_runs():
    runs = [{**RECORD, "run": n, "rubric_score": s, "rubric_tripped": t, "rubric_auto_fail": a}
            for n, s, t, a in [(1, 100.0, [], []), (2, 63.2, ["a", "b"], []),
                               (3, 89.5, ["g"], ["g"]), (4, 73.7, ["b"], [])]]
    runs.append({**RECORD, "run": 5, "status": "error", "rubric_score": 0.0})  # not valid
    summary = summarize("task-001-x", runs)
    assert summary.rubric_runs == 4 and summary.mean_rubric_score == pytest.approx(81.6)
    assert summary.rubric_tripped == (("b", 2), ("a", 1), ("g", 1))
    assert summary.rubric_auto_fail == (("g", 1),)
