"""Run history: the summary format (build, write, strict read, order), `ci-eval history record`
and `history show` through the real CLI, the sparkline, and the PR comment's History column."""

from __future__ import annotations

import json
import os
from fractions import Fraction as F
from pathlib import Path

import pytest

from ci_eval.errors import UserError
from ci_eval.render import compare as rc
from ci_eval.render import trend
from ci_eval.results import history
from ci_eval.results.history import RunSummary, TaskRecord
from ci_eval.verdict.model import TaskVerdict, Verdict


def summary(date="2026-03-01", recorded_at=None, commit="abc123", **tasks) -> RunSummary:
    """tasks: task id with '_' for '-' -> (passes, runs) or (passes, runs, errors)."""
    records = {}
    for key, counts in tasks.items():
        name = key.replace("_", "-")
        passes, runs, errors = (*counts, 0)[:3]
        records[name] = TaskRecord(name, runs, passes, errors, runs)
    return RunSummary(date=date, recorded_at=recorded_at or f"{date}T12:00:00Z", commit=commit,
                      agent="ref", ci_eval_version="0.1.0", tasks=records)


# --- pure ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("runs", "passes", "requested", "status"), [
    (5, 5, 5, "pass"),
    (10, 10, 5, "pass"),      # confirmation added runs: more than asked is fine
    (5, 4, 5, "fail"),
    (4, 3, 5, "fail"),        # a failure beats missing runs
    (4, 4, 5, "inconclusive"),  # an errored run: fewer valid runs than asked
    (0, 0, 5, "inconclusive"),
])
def test_task_status(runs, passes, requested, status):
    assert history.task_status(runs, passes, requested) == status


def test_build_summary_from_task_summaries():
    from ci_eval.results.summary import summarize_results

    loaded = {"task-001-a": [{"run": n, "task": "task-001-a", "status": s, "passed": s == "pass",
                              "agent": "ref", "k": 3} for n, s in enumerate(
                                  ["pass", "error", "pass"], start=1)]}
    built = history.build_summary(summarize_results(loaded), date="2026-03-01",
                                  recorded_at="2026-03-01T10:00:00Z", commit=None, agent="ref",
                                  ci_eval_version="9", gate={"task-001-a": "inconclusive"})
    data = built.to_json()
    assert data["tasks"]["task-001-a"] == {"runs": 2, "passes": 2, "errors": 1, "requested": 3,
                                           "status": "inconclusive", "gate": "inconclusive"}
    assert history.parse_summary(data, "x.json") == built


def test_ci_run_from_env():
    assert history.ci_run_from_env({}) is None
    env = {"GITHUB_RUN_ID": "77", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_SERVER_URL":
           "https://github.com/", "GITHUB_REPOSITORY": "o/r", "GITHUB_REF_NAME": "main"}
    assert history.ci_run_from_env(env) == {"id": 77, "attempt": 2, "ref": "main",
                                            "url": "https://github.com/o/r/actions/runs/77"}


def test_file_names_count_per_date():
    s = summary(commit="0123456789abcdef")
    assert history.summary_filename(s, []) == "2026-03-01-001-0123456789ab.json"
    taken = ["2026-03-01-001-x.json", "2026-03-01-007-y.json", "2026-02-28-009-z.json", "notes"]
    assert history.summary_filename(s, taken) == "2026-03-01-008-0123456789ab.json"
    assert history.summary_filename(summary(commit=None), []) == "2026-03-01-001-no-commit.json"


def test_sparkline_levels_are_exact():
    assert trend.sparkline([F(0), F(1, 5), F(2, 5), F(1, 2), F(3, 5), F(4, 5), F(1), None]) \
        == "▁▂▄▅▅▇█·"
    points = [TaskRecord("t", 5, 5, 0, 5), None, TaskRecord("t", 0, 0, 5, 5),
              TaskRecord("t", 4, 3, 1, 5)]
    assert trend.trend_line(points) == "█·?▆"
    assert trend.counts(points) == "5/5 — 0/0+5e 3/4+1e"


def test_trends_cover_only_the_last_runs():
    runs = [summary(f"2026-03-{d:02d}", task_001_a=(5 if d > 1 else 0, 5)) for d in range(1, 13)]
    assert trend.trends(runs) == {"task-001-a": "█" * 10}
    assert trend.trends(runs, limit=12) == {"task-001-a": "▁" + "█" * 11}


# --- writing and reading ------------------------------------------------------------------------


def test_write_never_overwrites_and_reads_back_in_order(tmp_path):
    folder = tmp_path / "history"
    folder.mkdir()
    squatter = folder / "2026-03-01-005-ffff.json"
    later = summary("2026-03-01", "2026-03-01T18:00:00Z", "ffff", task_001_a=(4, 5))
    squatter.write_text(history.dumps_summary(later))
    before = squatter.read_bytes()
    first = history.write_summary(folder, summary("2026-03-01", "2026-03-01T09:00:00Z",
                                                  "aaaa", task_001_a=(5, 5)))
    older = history.write_summary(folder, summary("2026-02-27", "2026-03-02T09:00:00Z",
                                                  "bbbb", task_001_a=(3, 5)))
    assert first.name == "2026-03-01-006-aaaa.json" and older.name == "2026-02-27-001-bbbb.json"
    assert squatter.read_bytes() == before
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temp files left
    loaded = history.load_history(folder)
    # by date, then recorded_at: the squatter (18:00) comes after the 09:00 run of its date
    assert [s.source for s in loaded] == [older.name, first.name, squatter.name]
    assert loaded[1].tasks["task-001-a"].passes == 5


def test_write_creates_the_folder_and_refuses_a_file(tmp_path):
    written = history.write_summary(tmp_path / "a" / "b", summary())
    assert written.parent == tmp_path / "a" / "b"
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match=r"file: --history: is a file"):
        history.write_summary(tmp_path / "file", summary())


def write_json(folder: Path, name: str, data) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def good() -> dict:
    return summary(task_001_a=(5, 5)).to_json()


def mutated(change) -> dict:
    data = good()
    change(data)
    return data


@pytest.mark.parametrize(("content", "needles"), [
    ({"schema_version": 2, "agent": "ref", "tasks": {}}, ["$.format", "not a ci-eval run summary"]),
    ([1, 2], ["$.format", "not a ci-eval run summary"]),
    ("{not json", ["invalid JSON"]),
    ('{"format": "ci-eval-run-summary", "format": "x"}', ["duplicate key"]),
    (mutated(lambda d: d.update(schema_version=9)), ["$.schema_version", "newer"]),
    (mutated(lambda d: d.update(date="2026-02-30")), ["$.date", "date YYYY-MM-DD"]),
    (mutated(lambda d: d.update(recorded_at="yesterday")), ["$.recorded_at", "UTC timestamp"]),
    (mutated(lambda d: d.update(commit="HEAD")), ["$.commit", "commit SHA"]),
    (mutated(lambda d: d.pop("agent")), ["$.agent", "required field is missing"]),
    (mutated(lambda d: d["tasks"]["task-001-a"].update(passes=6)),
     ["$.tasks.task-001-a.passes", "6 passes is more than 5 runs"]),
    (mutated(lambda d: d["tasks"]["task-001-a"].update(status="fail")),
     ["$.tasks.task-001-a.status", "expected 'pass'"]),
    (mutated(lambda d: d["tasks"]["task-001-a"].update(runs="5")),
     ["$.tasks.task-001-a.runs", "expected integer"]),
    (mutated(lambda d: d["tasks"].update({"Task 1": d["tasks"]["task-001-a"]})), ["$.tasks"]),
    (mutated(lambda d: d.update(extra=1)), ["$.extra", "unknown field"]),
])
def test_bad_summaries_are_bad_input_naming_file_and_field(tmp_path, content, needles):
    path = write_json(tmp_path / "h", "2026-03-01-001-abc.json", content)
    write_json(tmp_path / "h", "2026-02-01-001-abc.json", good())  # a good one does not hide it
    with pytest.raises(UserError) as info:
        history.load_history(tmp_path / "h")
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message
    for needle in needles:
        assert needle in message


def test_anything_else_in_the_folder_is_bad_input(tmp_path):
    folder = tmp_path / "h"
    write_json(folder, "2026-03-01-001-abc.json", good())
    (folder / ".hidden-temp").write_text("ignored")
    (folder / "README.md").write_text("notes")
    with pytest.raises(UserError, match=r"README.md: not a run summary"):
        history.load_history(folder)
    (folder / "README.md").unlink()
    (folder / "sub").mkdir()
    with pytest.raises(UserError, match=r"sub: is a folder"):
        history.load_history(folder)
    (folder / "sub").rmdir()
    os.symlink(folder / "2026-03-01-001-abc.json", folder / "2026-03-02-001-abc.json")
    with pytest.raises(UserError, match=r"2026-03-02-001-abc.json: is a symbolic link"):
        history.load_history(folder)
    (folder / "2026-03-02-001-abc.json").unlink()
    big = folder / "2026-03-03-001-abc.json"
    big.write_text(" " * (history.MAX_SUMMARY_BYTES + 1))
    with pytest.raises(UserError, match=r"larger than 4 MiB"):
        history.load_history(folder)
    big.unlink()
    with pytest.raises(UserError, match=r"nowhere: --history: history folder not found"):
        history.load_history(tmp_path / "nowhere")


def test_the_same_run_twice_is_refused(tmp_path):
    folder = tmp_path / "h"
    write_json(folder, "2026-03-01-001-abc123.json", good())
    write_json(folder, "2026-03-01-002-abc123.json", good())
    with pytest.raises(UserError, match=r"002-abc123.json: the same CI run as "
                                        r"2026-03-01-001-abc123.json"):
        history.load_history(folder)
    other = good()
    other["recorded_at"] = "2026-03-01T13:00:00Z"
    write_json(folder, "2026-03-01-002-abc123.json", other)  # same commit, a later run: fine
    assert len(history.load_history(folder)) == 2
    first, second = good(), other  # different times, but the same CI run id and attempt
    first["ci_run"] = second["ci_run"] = {"id": 5, "attempt": 1}
    write_json(folder, "2026-03-01-001-abc123.json", first)
    write_json(folder, "2026-03-01-002-abc123.json", second)
    with pytest.raises(UserError, match=r"the same CI run"):
        history.load_history(folder)


# --- the CLI ------------------------------------------------------------------------------------


def write_results(results: Path, task: str, outcomes: str, agent: str = "ref") -> None:
    results.mkdir(parents=True, exist_ok=True)
    status = {"p": "pass", "f": "fail", "e": "error"}
    lines = [json.dumps({"run": n, "task": task, "status": status[c], "passed": c == "p",
                         "agent": agent, "k": 5}) for n, c in enumerate(outcomes, start=1)]
    (results / f"{task}.jsonl").write_text("\n".join(lines) + "\n")


def test_record_then_show(tmp_path, cli):
    root = tmp_path / "repo"
    days = ["2026-03-01", "2026-03-01", "2026-03-02"]
    outcomes = [("ppppp", "ppppf"), ("ppppp", "pppfe"), ("ppppp", "ppppe")]
    written = []
    for day, (a, b) in zip(days, outcomes):
        write_results(root / "results", "task-001-steady", a)
        write_results(root / "results", "task-002-wobbly", b)
        result = cli("history", "record", "--date", day, "--commit", "ABCDEF0123", "--json",
                     cwd=root)
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout)
        written.append(Path(out["path"]).name)
        assert out["summary"]["commit"] == "abcdef0123"
        assert out["summary"]["agent"] == "ref"
    assert written == ["2026-03-01-001-abcdef0123.json", "2026-03-01-002-abcdef0123.json",
                       "2026-03-02-001-abcdef0123.json"]
    data = json.loads((root / ".ci-eval/history" / written[2]).read_text())
    assert data["tasks"]["task-002-wobbly"] == {"runs": 4, "passes": 4, "errors": 1,
                                                "requested": 5, "status": "inconclusive"}
    assert data["format"] == "ci-eval-run-summary" and data["ci_eval_version"]

    shown = cli("history", "show", cwd=root)
    assert shown.returncode == 0, shown.stderr
    assert "3 run summaries; the last 3 shown (2026-03-01 … 2026-03-02)" in shown.stdout
    steady = next(line for line in shown.stdout.splitlines() if "task-001-steady" in line)
    assert "███" in steady and "5/5 5/5 5/5" in steady and steady.rstrip().endswith("pass")
    wobbly = next(line for line in shown.stdout.splitlines() if "task-002-wobbly" in line)
    assert "▇▆█" in wobbly and "4/5 3/4+1e 4/4+1e" in wobbly
    assert wobbly.rstrip().endswith("inconclusive")

    limited = json.loads(cli("history", "show", "--limit", "2", "--json", cwd=root).stdout)
    assert limited["recorded_runs"] == 3 and len(limited["shown"]) == 2
    row = next(r for r in limited["tasks"] if r["task"] == "task-002-wobbly")
    assert row["counts"] == "3/4+1e 4/4+1e" and row["points"][0]["status"] == "fail"


def test_record_plain_output_and_commit_from_the_environment(tmp_path, cli):
    root = tmp_path / "repo"
    write_results(root / "results", "task-001-a", "ppppp")
    write_results(root / "results", "task-002-b", "ppfpp")
    result = cli("history", "record", "--history", "h", "--date", "2026-04-01", cwd=root,
                 env={"GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567",
                      "GITHUB_RUN_ID": "991", "GITHUB_RUN_ATTEMPT": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("wrote " + str(Path(".") / "h" / "2026-04-01-001-0123456789ab.json")
                             + ": 2 task(s): 1 pass, 1 fail\n")
    data = json.loads(next((root / "h").iterdir()).read_text())
    assert data["ci_run"] == {"id": 991, "attempt": 1}


@pytest.mark.parametrize(("args", "needles"), [
    (["--date", "2026-13-01"], ["--date", "expected a date YYYY-MM-DD"]),
    (["--commit", "main"], ["--commit", "commit SHA"]),
    (["--results", "nothing"], ["nothing", "results folder not found"]),
    (["--history", "blocker"], ["blocker", "--history", "is a file"]),
])
def test_record_bad_input(tmp_path, cli, assert_bad_input, args, needles):
    root = tmp_path / "repo"
    write_results(root / "results", "task-001-a", "ppppp")
    (root / "blocker").write_text("x")
    assert_bad_input(cli("history", "record", *args, cwd=root), *needles)


def test_record_refuses_mixed_agents(tmp_path, cli, assert_bad_input):
    root = tmp_path / "repo"
    write_results(root / "results", "task-001-a", "ppppp", agent="one")
    write_results(root / "results", "task-002-b", "ppppp", agent="two")
    assert_bad_input(cli("history", "record", cwd=root), "results")


def test_show_bad_input(tmp_path, cli, assert_bad_input):
    root = tmp_path / "repo"
    assert_bad_input(cli("history", "show", "--history", "typo", cwd=tmp_path),
                     "typo", "history folder not found")
    fresh = cli("history", "show", cwd=tmp_path)  # the default folder, not there yet: empty
    assert fresh.returncode == 0 and "no run summaries" in fresh.stdout
    write_json(root / "h", "2026-01-01-001-abc.json", {"what": "ever"})
    assert_bad_input(cli("history", "show", "--history", "h", cwd=root),
                     "2026-01-01-001-abc.json", "$.format")
    assert_bad_input(cli("history", "show", "--limit", "0", cwd=root), "--limit")


def test_show_an_empty_folder(tmp_path, cli):
    (tmp_path / ".ci-eval" / "history").mkdir(parents=True)
    result = cli("history", "show", cwd=tmp_path)
    assert result.returncode == 0 and "no run summaries" in result.stdout


# --- the PR comment's History column -------------------------------------------------------------


def verdict() -> Verdict:
    def tv(task, status):
        return TaskVerdict(task=task, status=status, gated=True, baseline_passes=4,
                           baseline_runs=5, passes=4, runs=5, requested=5)
    return Verdict(tasks=(tv("task-001-a", "unchanged"), tv("task-002-b", "regressed")), k=5,
                   agent="ref")


def test_comment_without_trends_is_unchanged():
    assert rc.render_markdown(verdict()) == rc.render(verdict(), "markdown")
    assert "History" not in rc.render_markdown(verdict())


def test_comment_full_table_gets_a_history_column():
    text = rc.render(verdict(), "markdown", trends={"task-001-a": "██▇█"})
    changed, full = text.split("<details>")
    assert "History" not in changed  # only the full table
    assert "| Note | History |" in full
    assert "| task-001-a | unchanged |" in full and full.count("██▇█") == 1
    row_b = next(line for line in full.splitlines() if line.startswith("| task-002-b"))
    assert row_b.endswith("|  |")  # no history for it: an empty cell
    assert rc.render_markdown(verdict(), trends={}).count("| History |") == 1


def test_the_cli_default_history_folder_is_the_stores():
    from ci_eval.cli_options import DEFAULT_HISTORY
    from ci_eval.results.history import DEFAULT_HISTORY_DIR

    assert DEFAULT_HISTORY == DEFAULT_HISTORY_DIR
