"""`ci-eval init` in an empty git repository: what it writes is valid, verifiable and runs."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from act_helpers import REPO_ROOT, REPOSITORY, TOKEN, commit_repo, job_results, pr_event, run_act
from fake_github import FakeGitHub

from ci_eval.scaffold import ACTION_REF, EXAMPLE_TASK

WRITTEN = ["ci-eval.yaml", "baseline.json", ".github/workflows/eval.yml",
           ".github/workflows/baseline.yml", ".github/workflows/gc.yml",
           f"tasks/{EXAMPLE_TASK}/prompt.md",
           f"tasks/{EXAMPLE_TASK}/checks.py", f"tasks/{EXAMPLE_TASK}/metadata.json",
           f"tasks/{EXAMPLE_TASK}/solution/solve.sh"]


@pytest.fixture
def empty_repo(tmp_path):
    root = tmp_path / "user-repo"
    root.mkdir()
    commit_repo(root)  # an empty git repository with one empty commit
    return root


def test_init_then_validate_verify_and_the_written_eval_workflow_under_act(empty_repo, cli,
                                                                          tmp_path):
    result = cli("init", cwd=empty_repo)
    assert result.returncode == 0, result.stderr
    for rel in WRITTEN:
        assert (empty_repo / rel).is_file(), rel
    assert "Allow GitHub Actions to create and approve pull requests" in result.stdout
    assert "wrote .github/workflows/gc.yml" in result.stdout
    gc_jobs = yaml.safe_load((empty_repo / ".github/workflows/gc.yml").read_text())["jobs"]
    assert gc_jobs["gc"]["permissions"] == {"actions": "read", "contents": "write",
                                            "pull-requests": "write"}
    [gc_step] = [s for s in gc_jobs["gc"]["steps"] if s.get("uses") == ACTION_REF]
    assert gc_step["with"]["mode"] == "gc"
    assert f"uses: {ACTION_REF}" in (empty_repo / ".github/workflows/eval.yml").read_text()
    assert cli("validate", cwd=empty_repo).returncode == 0
    verified = cli("verify", "--json", cwd=empty_repo, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr

    # the written eval.yml, as the user's repository would run it: the action from "GitHub"
    action_repo = tmp_path / "ci-eval-action"
    action_repo.mkdir()
    (action_repo / "action.yml").write_text((REPO_ROOT / "action.yml").read_text())
    commit_repo(empty_repo)
    with FakeGitHub() as fake:
        fake.add_token(TOKEN, "github-actions[bot]", installation=True)
        fake.add_pull(REPOSITORY, 3)
        done = run_act(empty_repo, fake, tmp_path / "act", event=pr_event(3),
                       extra_flags=["--local-repository", f"{ACTION_REF}={action_repo}"])
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        results = job_results(done.stdout)
        assert results == {"progress": "succeeded", "plan": "succeeded",
                           "shard 1/1": "succeeded", "report": "succeeded"}, results
        [posted] = fake.comments_on(REPOSITORY, 3)
        # no comment yet: the progress job (comment: always) created a short one, which the
        # report then replaced
        [note, _report] = fake.bodies[posted["id"]]
        assert re.search(r"### ⏳ ci-eval: a run for `[0-9a-f]{12}` is under way: "
                         r"\[workflow run\]\(https://github\.com/acme/widgets/actions/runs/",
                         note), note
    assert "✅ ci-eval: no regressions — 1 new" in posted["body"]
    assert f"| {EXAMPLE_TASK} | new |" in posted["body"]


def test_init_refuses_to_overwrite_and_writes_nothing(empty_repo, cli, assert_bad_input):
    (empty_repo / "ci-eval.yaml").write_text("default_agent: noop\n")
    assert_bad_input(cli("init", cwd=empty_repo), "would overwrite ci-eval.yaml", "--force",
                     "nothing was written")
    assert not (empty_repo / "baseline.json").exists()
    assert not (empty_repo / ".github").exists() and not (empty_repo / "tasks").exists()
    assert (empty_repo / "ci-eval.yaml").read_text() == "default_agent: noop\n"
    forced = cli("init", "--force", "--agent", "noop", cwd=empty_repo)
    assert forced.returncode == 0, forced.stderr
    assert "default_agent: noop" in (empty_repo / "ci-eval.yaml").read_text()


def test_init_bad_input(empty_repo, cli, assert_bad_input):
    assert_bad_input(cli("init", "--agent", "no-such-agent", cwd=empty_repo),
                     "unknown agent 'no-such-agent'")
    assert_bad_input(cli("init", "--action", "not a ref", cwd=empty_repo), "--action",
                     "OWNER/REPO@REF")
    (empty_repo / ".github").write_text("a file")
    assert_bad_input(cli("init", cwd=empty_repo), ".github", "is a file")
    assert sorted(p.name for p in empty_repo.iterdir()) == [".git", ".github"]


def test_init_keeps_existing_tasks_and_pins_a_sha(empty_repo, cli, make_task):
    make_task(empty_repo, "task-007-mine")
    sha = "a" * 40
    result = cli("init", "--action", f"acme/ci-eval@{sha}", cwd=empty_repo)
    assert result.returncode == 0, result.stderr
    assert "no example task added" in result.stdout
    assert sorted(p.name for p in (empty_repo / "tasks").iterdir()) == ["task-007-mine"]
    workflow = (empty_repo / ".github/workflows/eval.yml").read_text()
    assert f"uses: acme/ci-eval@{sha}\n" in workflow and "zizmor: ignore" not in workflow
    assert json.loads((empty_repo / "baseline.json").read_text())["tasks"] == {}


def test_agent_secrets_are_handed_to_the_shard_steps():
    import yaml

    from ci_eval.scaffold.files import template_text as _template
    from ci_eval.scaffold.workflows import agent_env_block, render_workflow

    block = agent_env_block(("ANTHROPIC_API_KEY", "OTHER_KEY"))
    for name in ("eval.yml", "baseline.yml"):
        text = render_workflow(_template(f"workflows/{name}"), action=ACTION_REF,
                               default_branch="trunk", env_block=block)
        jobs = yaml.safe_load(text)["jobs"]
        [step] = [s for s in jobs["shard"]["steps"] if s.get("uses") == ACTION_REF]
        assert step["env"] == {"ANTHROPIC_API_KEY": "${{ secrets.ANTHROPIC_API_KEY }}",
                               "OTHER_KEY": "${{ secrets.OTHER_KEY }}"}
        others = [s for job in jobs.values() for s in job["steps"] if s is not step]
        # only the agent's step sees the keys (the plan step's env holds the job's own token)
        assert all("secrets." not in str(s.get("env", "")) for s in others)
    assert "branches: [trunk]" in render_workflow(_template("workflows/eval.yml"),
                                                  action=ACTION_REF, default_branch="trunk",
                                                  env_block="")
