"""The report against the plan and the shards' setup problems, through the real CLI against the
loopback GitHub API: a planned shard with no results folder names itself and fails the gate; a
shard whose agent could not start leaves one "agent setup broken" comment; a failed plan fails;
bad --plan input is refused; hostile setup-problem files are read capped, as text."""

from __future__ import annotations

import json

import pytest
from conftest import copy_of
from fake_github import fake_github, with_pull_request_7  # noqa: F401 - the fixture
from test_github_gate import REPO, actions_env, read_outputs

from ci_eval.results import setup_problem


@pytest.fixture(scope="module")
def planned_once(tmp_path_factory, make_task, cli):
    """Two tasks, no baseline; the plan for two shards, and only shard 1 ran."""
    tmp_path = tmp_path_factory.mktemp("planned")
    repo_root = tmp_path / "repo"
    (repo_root / "tasks").mkdir(parents=True)
    make_task(repo_root, "task-001-alpha")
    make_task(repo_root, "task-002-beta")
    output = tmp_path / "plan-output"
    done = cli("plan", "--shards", "2", "--github-output", cwd=repo_root,
               env={"GITHUB_OUTPUT": str(output)})
    assert done.returncode == 0, done.stderr
    plan = read_outputs(output)["plan"]
    ran = cli("run", "--agent", "reference", "--shard", "1/2", "-k", "2", "--out",
              "results/shard-1", cwd=repo_root)
    assert ran.returncode == 0, ran.stderr
    return repo_root, plan


@pytest.fixture
def planned(planned_once, tmp_path):
    """planned_once's repo (a copy of its own for each test) and its plan."""
    built, plan = planned_once
    return copy_of(built, tmp_path / "repo"), plan


def test_a_missing_shard_makes_its_tasks_inconclusive_and_fails(planned, cli, fake_github,
                                                                tmp_path):
    root, plan = planned
    with_pull_request_7(fake_github)
    env = {**actions_env(tmp_path, fake_github), "GITHUB_RUN_ID": "4242",
           "GITHUB_SERVER_URL": "https://github.com"}
    shard_2 = json.loads(plan)["shards"]["2"]
    without_plan = cli("gate", "--no-comment", cwd=root, env=env)
    assert without_plan.returncode == 0  # the hole: "new" tasks, green
    done = cli("gate", "--plan", plan, cwd=root, env=env)
    assert done.returncode == 1, done.stderr
    [posted] = fake_github.comments_on(REPO, 7)
    assert ("Shard 2/2 uploaded no results (its job failed or was cancelled before the upload): "
            f"its {len(shard_2)} task(s) are inconclusive: "
            "https://github.com/acme/widgets/actions/runs/4242") in posted["body"]
    for task in shard_2:
        assert f"| {task} | inconclusive |" in posted["body"]
    assert read_outputs(tmp_path / "output")["verdict"] == "fail"


def test_every_shard_missing_still_reports(planned, cli, tmp_path):
    root, plan = planned
    import shutil

    shutil.rmtree(root / "results")
    done = cli("gate", "--plan", plan, "--no-comment", cwd=root)
    assert done.returncode == 1, done.stderr
    assert "Shard 1/2 uploaded no results" in done.stdout
    assert "Shard 2/2 uploaded no results" in done.stdout


def test_a_failed_plan_fails_with_a_comment(repo_root, make_task, cli, fake_github, tmp_path):
    with_pull_request_7(fake_github)
    done = cli("gate", "--plan-result", "failure", cwd=repo_root,
               env=actions_env(tmp_path, fake_github))
    assert done.returncode == 1
    assert "::error title=ci-eval::ci-eval: the plan job ended `failure`" in done.stdout
    [posted] = fake_github.comments_on(REPO, 7)
    assert "the plan job ended `failure`: no task was evaluated" in posted["body"]
    assert read_outputs(tmp_path / "output")["verdict"] == "fail"


def test_a_shard_whose_agent_cannot_start_leaves_one_setup_broken_comment(
        repo_root, make_task, cli, fake_github, tmp_path):
    make_task(repo_root, "task-001-alpha")
    make_task(repo_root, "task-002-beta")
    env = {"HOME": str(tmp_path)}  # no key variable, no login file
    for shard in (1, 2):
        ran = cli("run", "--agent", "claude-code", "--shard", f"{shard}/2", "--out",
                  f"results/shard-{shard}", "--setup-problem-file",
                  f"results/shard-{shard}/setup-problem.json", cwd=repo_root, env=env)
        assert ran.returncode == 2 and "ANTHROPIC_API_KEY is not set" in ran.stderr
    written = json.loads((repo_root / "results/shard-2/setup-problem.json").read_text())
    assert written["shard"] == "2/2" and written["field"] == "--agent"
    with_pull_request_7(fake_github)
    done = cli("gate", cwd=repo_root, env=actions_env(tmp_path, fake_github))
    assert done.returncode == 1, done.stderr
    [posted] = fake_github.comments_on(REPO, 7)
    body = posted["body"]
    assert "### ❌ ci-eval: agent setup broken: ANTHROPIC_API_KEY is not set\n" in body
    assert body.count("> shard ") == 2


def test_bad_plan_input_is_refused(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, "task-001-alpha")
    (repo_root / "results").mkdir()
    for bad, needle in (("not json", "expected JSON"),
                        ('{"of": 2, "shards": {"3": []}}', "shard numbers 1-2"),
                        ('{"of": 1, "shards": {"1": [1]}}', "list of task ids"),
                        ('[]', '"of"')):
        assert_bad_input(cli("gate", "--plan", bad, "--no-comment", cwd=repo_root), "--plan",
                         needle)


def test_hostile_setup_problem_files_are_read_as_capped_text(tmp_path):
    folder = tmp_path / "results" / "shard-1"
    folder.mkdir(parents=True)
    (folder / setup_problem.FILE_NAME).write_bytes(b"\xff" * 100_000)
    [unreadable] = setup_problem.find(tmp_path / "results", "shard-*")
    assert unreadable.problem == "unreadable setup-problem.json in shard-1"
    huge = {"problem": "x\n" * 50_000 + "tail", "shard": ["not", "text"]}
    (folder / setup_problem.FILE_NAME).write_text(json.dumps(huge))
    [cut] = setup_problem.find(tmp_path / "results", "shard-*")
    assert cut.problem == "unreadable setup-problem.json in shard-1"  # over the read cap
    (folder / setup_problem.FILE_NAME).write_text(json.dumps(
        {"problem": "a\n| b " * 400, "shard": ["x"]}))
    [one_line] = setup_problem.find(tmp_path / "results", "shard-*")
    assert "\n" not in one_line.problem and len(one_line.problem) <= 1_000
    assert one_line.shard is None
    (folder / setup_problem.FILE_NAME).unlink()
    (folder / setup_problem.FILE_NAME).symlink_to("/etc/passwd")
    assert setup_problem.find(tmp_path / "results", "shard-*") == []


def test_a_setup_problem_from_an_artifact_is_inert_in_the_comment():
    from ci_eval.render.no_verdict import render_setup_broken

    hostile = setup_problem.SetupProblem("@acme/maintainers merge ![x](https://evil.example/b)",
                                         "--agent", "1/1")
    honest = setup_problem.SetupProblem("agent a (claude-code): ANTHROPIC_API_KEY is not set",
                                        "--agent", "1/1")
    text = render_setup_broken([hostile])
    assert "`@acme/maintainers merge ![x](https://evil.example/b)`" in text
    assert text.count("@acme") == text.count("`@acme")  # never outside a code span
    assert "### ❌ ci-eval: agent setup broken: ANTHROPIC_API_KEY is not set\n" in \
        render_setup_broken([honest])
