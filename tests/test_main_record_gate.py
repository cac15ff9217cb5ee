"""`ci-eval gate` on a pull request with main's run history (the report job's fetched
ci-eval-history): main's record of its last pushes is the reference (verdict/main_record.py), so
a task main itself fails now is drift, not the PR's regression; one main still solves is."""

from __future__ import annotations

import datetime as dt

from fake_github import fake_github, with_pull_request_7  # noqa: F401 - the fixture
from test_github_gate import (  # noqa: F401 - the fixture
    BROKEN_SOLUTION, REPO, actions_env, sharded, sharded_once, write_baseline)

from ci_eval.results import history

BROKEN = "task-002-broken"


def write_main_history(root, passes_per_push: list[int], *, agent="reference", days_ago=1):
    """Main's pushes: BROKEN judged against the 40/40 baseline, `passes` of 5 runs each."""
    folder = root / "hist"
    for i, passes in enumerate(passes_per_push):
        day = (dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=days_ago)).isoformat()
        record = history.TaskRecord(BROKEN, 5, passes, 0, 5, gate="drifted" if passes < 3 else
                                    "unchanged", drifted=passes < 3, baseline_passes=40,
                                    baseline_runs=40)
        history.write_summary(folder, history.RunSummary(
            date=day, recorded_at=f"{day}T10:00:0{i}Z", commit=f"{i:040x}", agent=agent,
            ci_eval_version="0", tasks={BROKEN: record}))


def test_a_task_main_fails_too_is_drift_on_the_pull_request(sharded, cli,  # noqa: F811
                                                           fake_github, tmp_path):
    with_pull_request_7(fake_github)
    write_main_history(sharded, [0, 1, 0])
    env = actions_env(tmp_path, fake_github)
    gated = cli("gate", "--history", "hist", cwd=sharded, env=env)
    assert gated.returncode == 0, gated.stdout + gated.stderr
    [posted] = fake_github.comments_on(REPO, 7)
    body = posted["body"]
    assert "main's record 1/15 over 3 push(es)" in body
    assert "main's record (main moved since the baseline)" in body
    assert "Drift: 1 task(s) (task-002-broken) fail against the baseline on main too" in body


def test_a_task_main_still_solves_stays_the_pull_request_s_regression(
        sharded, cli, fake_github, tmp_path):  # noqa: F811
    with_pull_request_7(fake_github)
    write_main_history(sharded, [5, 5, 5])
    env = actions_env(tmp_path, fake_github)
    assert cli("gate", "--history", "hist", cwd=sharded, env=env).returncode == 1
    assert "Drift" not in fake_github.comments_on(REPO, 7)[0]["body"]


def test_a_stale_or_foreign_record_is_not_used(sharded, cli, fake_github, tmp_path):  # noqa: F811
    with_pull_request_7(fake_github)
    write_main_history(sharded, [0, 0, 0], days_ago=30)  # older than 14 days
    env = actions_env(tmp_path, fake_github)
    assert cli("gate", "--history", "hist", cwd=sharded, env=env).returncode == 1
    for summary in (sharded / "hist").iterdir():
        summary.unlink()
    write_main_history(sharded, [0, 0, 0], agent="another-agent")
    assert cli("gate", "--history", "hist", cwd=sharded, env=env).returncode == 1


def test_compare_reads_main_s_history_and_refuses_a_bad_one(repo_root, make_task, cli):
    make_task(repo_root, BROKEN)
    write_baseline(repo_root, [BROKEN])
    (repo_root / "tasks" / BROKEN / "solution" / "solve.sh").write_text(BROKEN_SOLUTION)
    assert cli("run", "--agent", "reference", "-k", "3", cwd=repo_root).returncode == 0
    assert cli("compare", cwd=repo_root).returncode == 1  # the baseline alone: regressed
    write_main_history(repo_root, [0, 0, 1])
    compared = cli("compare", "--main-history", "hist", "--format", "json", cwd=repo_root)
    assert compared.returncode == 0, compared.stderr
    assert '"status": "drifted"' in compared.stdout
    missing = cli("compare", "--main-history", "nowhere", cwd=repo_root)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "nowhere" in missing.stderr and "--main-history" in missing.stderr
    (repo_root / "hist" / "bad.json").write_text("{}")
    bad = cli("compare", "--main-history", "hist", cwd=repo_root)
    assert bad.returncode == 2 and "bad.json" in bad.stderr and "Traceback" not in bad.stderr


def _runs_of(root, task=BROKEN) -> int:
    return len((root / "results" / f"{task}.jsonl").read_text().splitlines())


def test_run_stages_against_main_s_record(repo_root, make_task, cli):
    make_task(repo_root, BROKEN)
    write_baseline(repo_root, [BROKEN])
    (repo_root / "tasks" / BROKEN / "solution" / "solve.sh").write_text(BROKEN_SOLUTION)
    args = ["run", "--agent", "reference", "-k", "5", "--confirm-against", "baseline.json",
            "--fresh"]
    assert cli(*args, cwd=repo_root).returncode == 0
    assert _runs_of(repo_root) == 10  # 0/5 against the 40/40 baseline: suspect, confirmed
    write_main_history(repo_root, [0, 0, 0])  # main fails it too: the reference is 0/15
    ran = cli(*args, "--main-history", "hist", cwd=repo_root)
    assert ran.returncode == 0, ran.stderr
    assert _runs_of(repo_root) == 5  # not suspect against main now: no confirmation runs
    alone = cli("run", "--agent", "reference", "--main-history", "hist", cwd=repo_root)
    assert alone.returncode == 2 and "--main-history" in alone.stderr
    assert "--confirm-against" in alone.stderr
    missing = cli(*args, "--main-history", "nowhere", cwd=repo_root)
    assert missing.returncode == 2 and "nowhere" in missing.stderr
    assert "Traceback" not in missing.stderr + alone.stderr
