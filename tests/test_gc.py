"""Entropy GC: calendar-month arithmetic, the eligibility edges (pure), `ci-eval gc` and
`ci-eval restore` through the real CLI, all-or-nothing archiving, and archived numbers."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from ci_eval.errors import UserError
from ci_eval.render.gc import archive_pr, render_text
from ci_eval.results import history
from ci_eval.results.history import RunSummary, TaskRecord
from ci_eval.verdict import archive, gc
from ci_eval.verdict import baseline as bl

D = dt.date.fromisoformat


# --- calendar months ----------------------------------------------------------------------------


@pytest.mark.parametrize(("start", "months", "end"), [
    ("2026-01-15", 6, "2026-07-15"),
    ("2026-01-31", 6, "2026-07-31"),
    ("2026-08-31", 6, "2027-02-28"),   # clamped to the shorter month's end
    ("2026-08-29", 6, "2027-02-28"),
    ("2027-08-31", 6, "2028-02-29"),   # leap year
    ("2026-03-31", 1, "2026-04-30"),
    ("2026-12-31", 2, "2027-02-28"),
    ("2026-05-10", 0, "2026-05-10"),
])
def test_add_months(start, months, end):
    assert gc.add_months(D(start), months) == D(end)


@pytest.mark.parametrize(("created", "today", "months", "enough"), [
    ("2026-01-31", "2026-07-30", 5, False),
    ("2026-01-31", "2026-07-31", 6, False),   # exactly 6 months: not enough
    ("2026-01-31", "2026-08-01", 6, True),
    ("2026-08-31", "2027-02-27", 5, False),
    ("2026-08-31", "2027-02-28", 6, False),   # 6 months on the clamped day
    ("2026-08-31", "2027-03-01", 6, True),
    ("2026-08-30", "2027-03-01", 6, True),
    ("2026-01-15", "2026-08-20", 7, True),
    ("2026-01-15", "2026-01-01", 0, False),   # created after today
])
def test_age(created, today, months, enough):
    assert gc.months_old(D(created), D(today)) == months
    assert gc.old_enough(D(created), D(today)) is enough


def test_eligible_from():
    assert gc.eligible_from(D("2026-01-31")) == D("2026-08-01")
    assert gc.eligible_from(D("2026-08-31")) == D("2027-03-01")


# --- eligibility (pure) -------------------------------------------------------------------------


def runs(count: int, task: str = "task-001-a", *, fail_at: int | None = None,
         absent_at: int | None = None, error_at: int | None = None,
         first: str = "2026-09-01") -> list[RunSummary]:
    """`count` summaries on consecutive days; the task passes 5/5 except where told."""
    out = []
    for i in range(count):
        date = (D(first) + dt.timedelta(days=i)).isoformat()
        tasks = {}
        if i != absent_at:
            passes, valid, errors = (4, 5, 0) if i == fail_at else (4, 4, 1) if i == error_at \
                else (5, 5, 0)
            tasks[task] = TaskRecord(task, valid, passes, errors, 5)
        out.append(RunSummary(date=date, recorded_at=f"{date}T10:00:00Z", commit="abcd",
                              agent="ref", ci_eval_version="0", tasks=tasks,
                              source=f"{date}-001-abcd.json"))
    return out


TODAY = D("2026-09-20")
SEVEN_MONTHS = "2026-02-10"


def plan_for(summaries, created=SEVEN_MONTHS, today=TODAY):
    return gc.plan_gc({"task-001-a": D(created)}, summaries, today)


def test_ten_of_ten_and_seven_months_is_archived():
    plan = plan_for(runs(10))
    (candidate,) = plan.candidates
    assert candidate.task == "task-001-a" and candidate.passing == 10 and candidate.months_old == 7
    assert gc.archive_log_line(TODAY, candidate) == \
        "2026-09-20 — Archived task-001-a (10/10 pass, 7 months 10 days old)"
    assert candidate.evidence == ("passed every run in 10/10 recorded runs (2026-09-01 … "
                                  "2026-09-10); created 2026-02-10, 7 months 10 days old")


def test_five_months_old_is_not():
    plan = plan_for(runs(10), created="2026-04-10")
    assert not plan.candidates
    (near,) = plan.near_misses
    assert near.lacks == (("age: created 2026-04-10, 5 months 10 days old; needs more than 6 months (old enough "
                           "from 2026-10-11)"),)


def test_exactly_six_months_is_not():
    plan = plan_for(runs(10), created="2026-03-20")
    assert not plan.candidates and plan.near_misses[0].months_old == 6
    assert "needs more than 6 months" in plan.near_misses[0].lacks[0]
    assert plan_for(runs(10), created="2026-03-19").candidates  # one day more is enough


@pytest.mark.parametrize(("created", "today", "text"), [
    ("2026-03-19", "2026-09-20", "6 months 1 day"),  # six months and a day is not "6 months"
    ("2026-03-20", "2026-09-20", "6 months"),
    ("2026-01-31", "2026-08-01", "6 months 1 day"),  # 6 months on Jul 31 (clamped), then 1 day
    ("2026-02-10", "2026-09-20", "7 months 10 days"),
    ("2026-08-31", "2027-03-01", "6 months 1 day"),  # 6 months on Feb 28
    ("2026-03-01", "2026-03-02", "1 day"),
    ("2026-05-01", "2026-04-01", "0 days"),  # created after today
])
def test_age_text_says_months_and_days(created, today, text):
    assert gc.age_text(D(created), D(today)) == text


def test_the_log_line_says_six_months_and_a_day():
    (candidate,) = plan_for(runs(10), created="2026-03-19").candidates
    assert gc.archive_log_line(TODAY, candidate) == \
        "2026-09-20 — Archived task-001-a (10/10 pass, 6 months 1 day old)"
    assert candidate.to_json()["age"] == "6 months 1 day" and candidate.to_json()["months_old"] == 6


def test_one_failed_run_among_the_last_ten_is_not():
    plan = plan_for(runs(10, fail_at=4))
    assert not plan.candidates
    assert plan.near_misses[0].lacks == ("history: failed a run on 2026-09-05 (4/5)",)
    assert plan.near_misses[0].passing == 9


def test_a_failure_before_the_last_ten_does_not_count():
    assert plan_for(runs(11, fail_at=0)).candidates


def test_not_run_or_inconclusive_in_one_of_them_is_not():
    absent = plan_for(runs(10, absent_at=9))
    assert not absent.candidates and "not run on 2026-09-10" in absent.near_misses[0].lacks[0]
    errored = plan_for(runs(10, error_at=2))
    assert not errored.candidates
    assert "inconclusive on 2026-09-03 (4/4, 1 error(s) of 5 asked)" in \
        errored.near_misses[0].lacks[0]


def test_only_nine_recorded_runs_is_not():
    plan = plan_for(runs(9))
    assert not plan.candidates and plan.missing == 1 and plan.recorded == 9
    assert plan.near_misses[0].lacks == ("history: only 9 of the 10 recorded runs needed (1 missing)",)
    text = render_text(plan, dry_run=True)
    assert "9 recorded run(s); the rule needs the last 10: 1 missing, nothing can be archived" \
        in text and "nothing to archive" in text


def test_tasks_far_from_eligible_are_not_near_misses():
    young_and_failing = plan_for(runs(10, fail_at=3), created="2026-08-01")
    assert not young_and_failing.candidates and not young_and_failing.near_misses
    summaries = runs(10)
    for i in (1, 4, 7):  # old, but failed 3 of the last 10: not near
        summaries[i].tasks["task-001-a"] = TaskRecord("task-001-a", 5, 3, 0, 5)
    flaky = plan_for(summaries)
    assert not flaky.candidates and not flaky.near_misses
    summaries[1].tasks["task-001-a"] = TaskRecord("task-001-a", 5, 5, 0, 5)
    assert plan_for(summaries).near_misses  # 2 lacking runs: near
    data = young_and_failing.to_json()
    assert data["others"][0]["task"] == "task-001-a" and data["candidates"] == []


def test_archive_pr_title_and_body_list_each_task_with_its_evidence():
    summaries = runs(10)
    for s in summaries:
        s.tasks["task-002-b"] = TaskRecord("task-002-b", 5, 5, 0, 5)
        s.tasks["task-003-c"] = TaskRecord("task-003-c", 5, 5, 0, 5)
    plan = gc.plan_gc({"task-001-a": D(SEVEN_MONTHS), "task-002-b": D("2025-12-01"),
                       "task-003-c": D("2026-06-01")}, summaries, TODAY)
    title, body = archive_pr(plan)
    assert title == "ci-eval: archive 2 tasks that passed every run (2026-09-20)"
    assert body.startswith("<!-- ci-eval-archive-pr -->")
    row = next(line for line in body.splitlines() if line.startswith("| `task-002-b`"))
    assert "5/5 5/5 5/5" in row and "(10/10 pass)" in row and "██████████" in row
    assert "2025-12-01 | 9 months 19 days |" in row
    assert "1 near miss(es)" in body and "`task-003-c`: age: created 2026-06-01" in body
    assert "ci-eval restore task-NNN" in body
    assert archive_pr(plan) == (title, body)  # deterministic: an update changes nothing


# --- the CLI, on a repo -------------------------------------------------------------------------


def write_task(root: Path, name: str, created: str) -> str:
    task = root / "tasks" / name
    (task / "solution").mkdir(parents=True)
    (task / "prompt.md").write_text(f"Do {name}.\n")
    (task / "checks.py").write_text("raise SystemExit(0)\n")
    (task / "solution" / "solve.sh").write_text("true\n")
    (task / "metadata.json").write_text(json.dumps(
        {"difficulty": 2, "area": "demo", "tags": [], "created": created}))
    return "sha256:" + hashlib.sha256((task / "prompt.md").read_bytes()).hexdigest()


@pytest.fixture
def repo(tmp_path):
    """Three tasks: 001 old and always passing (eligible), 002 young and always passing,
    003 old with a failure. Ten summaries in .ci-eval/history, and a baseline for all."""
    root = tmp_path / "repo"
    created = {"task-001-old-steady": "2026-01-05", "task-002-young": "2026-06-01",
               "task-003-old-flaky": "2026-01-05"}
    hashes = {name: write_task(root, name, day) for name, day in created.items()}
    for i in range(10):
        date = (D("2026-08-01") + dt.timedelta(days=i)).isoformat()
        tasks = {name: TaskRecord(name, 5, 4 if name == "task-003-old-flaky" and i == 8 else 5,
                                  0, 5) for name in created}
        history.write_summary(root / ".ci-eval" / "history", RunSummary(
            date=date, recorded_at=f"{date}T10:00:00Z", commit="abcd", agent="ref",
            ci_eval_version="0", tasks=tasks))
    entries = {name: bl.BaselineEntry(task=name, passes=5, runs=5, recorded="2026-07-01",
                                      prompt_hash=digest,
                                      observations=(bl.Snapshot("2026-07-01", 5, 5),))
               for name, digest in hashes.items()}
    bl.save_baseline(root / "baseline.json", bl.Baseline(agent="ref", entries=entries))
    return root


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()} if folder.exists() else {}


def test_dry_run_lists_candidates_and_near_misses_and_changes_nothing(repo, cli):
    before = (tree(repo / "tasks"), (repo / "baseline.json").read_bytes())
    result = cli("gc", "--dry-run", "--today", "2026-08-20", cwd=repo)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("gc 2026-08-20: 10 recorded run(s); the last 10 from "
                               "2026-08-01-001-abcd.json to 2026-08-10-001-abcd.json")
    assert ("would archive: task-001-old-steady: passed every run in 10/10 recorded runs "
            "(2026-08-01 … 2026-08-10); created 2026-01-05, 7 months 15 days old") in result.stdout
    assert ("near miss: task-002-young: age: created 2026-06-01, 2 months 19 days old; needs more than 6 months"
            " (old enough from 2026-12-02)") in result.stdout
    assert "near miss: task-003-old-flaky: history: failed a run on 2026-08-09 (4/5)" in \
        result.stdout
    assert "dry run: nothing changed" in result.stdout
    assert (tree(repo / "tasks"), (repo / "baseline.json").read_bytes()) == before
    assert not (repo / "archive").exists()


def test_gc_with_nine_summaries_archives_nothing_and_says_one_is_missing(repo, cli):
    min((repo / ".ci-eval" / "history").iterdir()).unlink()
    data = json.loads(cli("gc", "--json", "--today", "2026-08-20", cwd=repo).stdout)
    assert data["missing_runs"] == 1 and data["archived"] == [] and data["candidates"] == []
    assert not (repo / "archive").exists()


def test_archive_then_restore_leaves_everything_as_it_was(repo, cli):
    tasks_before = tree(repo / "tasks")
    baseline_before = json.loads((repo / "baseline.json").read_text())

    result = cli("gc", "--today", "2026-08-20", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "archived: task-001-old-steady" in result.stdout
    assert "dropped baseline entries: task-001-old-steady" in result.stdout
    assert not (repo / "tasks" / "task-001-old-steady").exists()
    moved = tree(repo / "archive" / "task-001-old-steady")
    assert moved == {k.split("/", 1)[1]: v for k, v in tasks_before.items()
                     if k.startswith("task-001-old-steady/")}
    after_gc = json.loads((repo / "baseline.json").read_text())
    assert set(after_gc["tasks"]) == {"task-002-young", "task-003-old-flaky"}
    log = (repo / "archive" / "ARCHIVE-LOG.md").read_text()
    assert log.splitlines()[-1] == \
        "2026-08-20 — Archived task-001-old-steady (10/10 pass, 7 months 15 days old)"

    # the loader and validate see the archive: the next gc has nothing more, list skips it
    listed = cli("list", "--json", cwd=repo)
    assert listed.returncode == 0 and "task-001-old-steady" not in listed.stdout

    restored = cli("restore", "001", "--today", "2026-09-01", cwd=repo)
    assert restored.returncode == 0, restored.stderr
    assert "restored task-001-old-steady" in restored.stdout
    agent = after_gc["agent"]
    assert agent  # the baseline's agent: the re-recording must use it (issue 37)
    assert (f"its baseline must be re-recorded: ci-eval run task-001-old-steady --agent {agent} "
            "-k 40 && ci-eval baseline update task-001-old-steady") in restored.stdout

    assert tree(repo / "tasks") == tasks_before
    assert [p.name for p in (repo / "archive").iterdir()] == ["ARCHIVE-LOG.md"]
    log_lines = (repo / "archive" / "ARCHIVE-LOG.md").read_text().splitlines()
    assert log_lines[-2:] == [
        "2026-08-20 — Archived task-001-old-steady (10/10 pass, 7 months 15 days old)",
        ("2026-09-01 — Restored task-001-old-steady (its baseline must be re-recorded: ci-eval "
         "baseline update task-001-old-steady)")]
    assert sum(1 for line in log_lines if line.startswith("2026-")) == 2
    after = json.loads((repo / "baseline.json").read_text())
    expected = dict(baseline_before)
    expected["tasks"] = {k: v for k, v in baseline_before["tasks"].items()
                         if k != "task-001-old-steady"}
    assert after == expected  # only the entry to re-record is gone


def test_gc_json_reports_what_it_did(repo, cli):
    data = json.loads(cli("gc", "--json", "--today", "2026-08-20", cwd=repo).stdout)
    assert data["archived"] == ["task-001-old-steady"] and data["dry_run"] is False
    assert data["log_lines"] == [
        "2026-08-20 — Archived task-001-old-steady (10/10 pass, 7 months 15 days old)"]
    assert [e["task"] for e in data["near_misses"]] == ["task-002-young", "task-003-old-flaky"]
    again = json.loads(cli("gc", "--json", "--today", "2026-08-20", cwd=repo).stdout)
    assert again["archived"] == []  # the archived task is no longer in tasks/


def test_a_failed_check_changes_nothing(repo, cli, assert_bad_input):
    (repo / "archive" / "ARCHIVE-LOG.md").mkdir(parents=True)
    before = (tree(repo / "tasks"), (repo / "baseline.json").read_bytes())
    assert_bad_input(cli("gc", "--today", "2026-08-20", cwd=repo), "ARCHIVE-LOG.md",
                     "is not a file")
    assert (tree(repo / "tasks"), (repo / "baseline.json").read_bytes()) == before


def test_a_failed_write_rolls_everything_back(repo, monkeypatch):
    # a second candidate, so that one rename is undone after another
    for path in (repo / ".ci-eval" / "history").iterdir():
        data = json.loads(path.read_text())
        data["tasks"]["task-003-old-flaky"].update(passes=5, status="pass")
        path.write_text(json.dumps(data))
    summaries = history.load_history(repo / ".ci-eval" / "history")
    created = {"task-001-old-steady": D("2026-01-05"), "task-002-young": D("2026-06-01"),
               "task-003-old-flaky": D("2026-01-05")}
    plan = gc.plan_gc(created, summaries, D("2026-08-20"))
    assert len(plan.candidates) == 2
    before = (tree(repo / "tasks"), (repo / "baseline.json").read_bytes())
    real_write = archive.write_atomic

    def failing(path, text, **kwargs):
        if Path(path).name == "ARCHIVE-LOG.md":
            raise UserError("cannot write (No space left on device)", path=path)
        return real_write(path, text, **kwargs)

    monkeypatch.setattr(archive, "write_atomic", failing)
    with pytest.raises(UserError, match="No space left"):
        archive.apply_archive(repo, plan)
    assert (tree(repo / "tasks"), (repo / "baseline.json").read_bytes()) == before
    assert not (repo / "archive").exists()


def test_an_existing_archived_folder_of_the_same_name_stops_everything(repo, cli,
                                                                       assert_bad_input):
    (repo / "archive" / "task-001-old-steady").mkdir(parents=True)
    before = tree(repo / "tasks")
    line = assert_bad_input(cli("gc", "--today", "2026-08-20", cwd=repo), "task-001-old-steady")
    assert "taken by the archived task" in line or "already exists" in line
    assert tree(repo / "tasks") == before


def test_archived_numbers_stay_taken(repo, cli, assert_bad_input):
    assert cli("gc", "--today", "2026-08-20", cwd=repo).returncode == 0
    write_task(repo, "task-001-reused", "2026-08-01")
    line = assert_bad_input(cli("list", cwd=repo), "tasks/task-001-reused",
                            "archive/task-001-old-steady", "never reused")
    assert "task number 001" in line
    validated = cli("validate", cwd=repo)
    assert validated.returncode == 2
    assert "task-001-reused: task number 001 is taken by the archived task" in validated.stderr
    assert "archive/task-001-old-steady" in validated.stderr
    # and restoring would collide: refused, nothing moved
    assert_bad_input(cli("restore", "task-001", cwd=repo), "already holds number 001")
    assert (repo / "archive" / "task-001-old-steady").is_dir()


@pytest.mark.parametrize(("args", "needles"), [
    (["gc", "--today", "2026-02-30"], ["--today", "expected a date YYYY-MM-DD"]),
    (["gc", "--history", "nowhere"], ["nowhere", "history folder not found"]),
    (["restore", "task-009"], ["archive", "no archived task 'task-009'"]),
    (["restore", "001", "--today", "soon"], ["--today"]),
])
def test_bad_input(repo, cli, assert_bad_input, args, needles):
    assert_bad_input(cli(*args, cwd=repo), *needles)


def test_no_history_yet_means_ten_missing(repo, cli):
    import shutil

    shutil.rmtree(repo / ".ci-eval" / "history")
    result = cli("gc", "--dry-run", "--today", "2026-08-20", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "0 recorded run(s); the rule needs the last 10: 10 missing" in result.stdout
    assert "near miss:" not in result.stdout  # no evidence at all is not "nearly"


def test_a_broken_summary_stops_gc(repo, cli, assert_bad_input):
    (repo / ".ci-eval" / "history" / "notes.txt").write_text("hello")
    assert_bad_input(cli("gc", "--dry-run", cwd=repo), "notes.txt", "not a run summary")


@pytest.mark.parametrize(("created", "today", "months"), [
    ("2026-01-31", "2026-02-27", 0),  # one calendar month is reached on Feb 28, not before
    ("2026-01-31", "2026-02-28", 1),
    ("2026-01-15", "2026-03-14", 1),
    ("2026-01-15", "2026-03-15", 2),
    ("2026-05-01", "2026-04-01", 0),  # created after today: never negative
])
def test_months_old_counts_whole_calendar_months(created, today, months):
    assert gc.months_old(dt.date.fromisoformat(created), dt.date.fromisoformat(today)) == months



def plan_of(repo: Path) -> gc.GcPlan:
    created = {"task-001-old-steady": D("2026-01-05"), "task-002-young": D("2026-06-01"),
               "task-003-old-flaky": D("2026-01-05")}
    return gc.plan_gc(created, history.load_history(repo / ".ci-eval" / "history"),
                      D("2026-08-20"))


def test_apply_archive_moves_the_task_drops_its_entry_and_logs_it(repo):
    done = archive.apply_archive(repo, plan_of(repo))
    assert done.archived == ("task-001-old-steady",)
    assert done.dropped_baseline_entries == ("task-001-old-steady",)
    assert done.log_path == repo / "archive" / "ARCHIVE-LOG.md"
    assert len(done.log_lines) == 1 and "task-001-old-steady" in done.log_lines[0]
    assert done.log_lines[0] in done.log_path.read_text()
    assert (repo / "archive" / "task-001-old-steady" / "prompt.md").is_file()
    assert not (repo / "tasks" / "task-001-old-steady").exists()
    left = bl.load_baseline(repo / "baseline.json")
    assert sorted(left.entries) == ["task-002-young", "task-003-old-flaky"]
    nothing = archive.apply_archive(repo, gc.plan_gc({}, (), D("2026-08-20")))
    assert (nothing.archived, nothing.dropped_baseline_entries, nothing.log_lines) == ((), (), ())
    assert nothing.log_path == done.log_path


@pytest.mark.parametrize(("make", "where", "message"), [
    (lambda repo: (repo / "archive").write_text("x"), "archive",
     "is not a folder (expected the archive of tasks)"),
    (lambda repo: (repo / "archive").symlink_to(repo / "tasks"), "archive",
     "is not a folder (expected the archive of tasks)"),
    (lambda repo: shutil.rmtree(repo / "tasks" / "task-001-old-steady"),
     "tasks/task-001-old-steady", "task folder not found (the plan is stale: rerun gc)"),
    (lambda repo: (repo / "archive" / "task-001-old-steady").mkdir(parents=True),
     "archive/task-001-old-steady", "already exists: an archived task of the same name"),
    (lambda repo: (repo / "archive" / "task-001-other").mkdir(parents=True),
     "tasks/task-001-old-steady", "number 001 is already taken by"),
])
def test_apply_archive_refuses_and_changes_nothing(repo, make, where, message):
    plan = plan_of(repo)
    make(repo)
    before = (tree(repo / "tasks"), (repo / "baseline.json").read_bytes())
    with pytest.raises(UserError) as info:
        archive.apply_archive(repo, plan)
    assert info.value.message.startswith(message) and Path(info.value.path) == repo / where
    assert (tree(repo / "tasks"), (repo / "baseline.json").read_bytes()) == before
    assert not (repo / "archive" / "ARCHIVE-LOG.md").exists()
