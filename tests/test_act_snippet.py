"""The smallest workflow of docs/github.md (mode all: run + report in one job), run by act."""

from __future__ import annotations

import re

from act_helpers import REPO_ROOT, REPOSITORY, TOKEN, commit_repo, job_results, pr_event, run_act
from fake_github import FakeGitHub

from ci_eval.scaffold import ACTION_REF

BLOCK = re.compile(r"<!-- minimal-workflow -->\n```yaml\n(.*?)```", re.DOTALL)


def minimal_workflow() -> str:
    return BLOCK.search((REPO_ROOT / "docs" / "github.md").read_text()).group(1)


def test_the_snippet_is_eight_lines_beyond_trigger_and_secrets():
    lines = [line for line in minimal_workflow().splitlines() if line.strip()]
    rest = [line for line in lines if not line.startswith("on:") and "secrets." not in line]
    assert len(rest) <= 8, rest


def test_the_snippet_runs_and_comments(repo_root, make_task, tmp_path):
    """With a configured agent of the repo (named my-agent here: presets such as claude-code
    come with the agents work) that needs the secret the snippet passes."""
    make_task(repo_root, "task-001-example")
    (repo_root / "ci-eval.yaml").write_text("agents:\n  my-agent:\n    command: "
                                            "./agent.sh\n    env: [ANTHROPIC_API_KEY]\n")
    (repo_root / "agent.sh").write_text("#!/bin/sh\nprintf '42\\n' > answer.txt\n")
    (repo_root / "agent.sh").chmod(0o755)
    (repo_root / "baseline.json").write_text('{"schema_version": 1, "agent": null, "tasks": {}}')
    workflow = minimal_workflow().replace("{agent: claude-code}",
                                          '{agent: my-agent, setup-python: "false"}')
    (repo_root / ".github" / "workflows").mkdir(parents=True)
    (repo_root / ".github" / "workflows" / "eval.yml").write_text(workflow)
    commit_repo(repo_root)
    action_repo = tmp_path / "action"
    action_repo.mkdir()
    (action_repo / "action.yml").write_text((REPO_ROOT / "action.yml").read_text())
    with FakeGitHub() as fake:
        fake.add_token(TOKEN, "github-actions[bot]", installation=True)
        fake.add_pull(REPOSITORY, 5)
        done = run_act(repo_root, fake, tmp_path / "act", event=pr_event(5),
                       extra_flags=["--local-repository", f"{ACTION_REF}={action_repo}",
                                    "-s", "ANTHROPIC_API_KEY=sk-test"])
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        assert job_results(done.stdout) == {"eval": "succeeded"}
        [posted] = fake.comments_on(REPOSITORY, 5)
    assert "no regressions — 1 new" in posted["body"]
    assert "agent `my-agent`" in posted["body"]  # agent names are inert code spans (#18)
