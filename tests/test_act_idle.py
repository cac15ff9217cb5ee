"""The init-written eval.yml under act against the loopback GitHub, for a repo whose agent is a
command agent with a declared harness (CLAUDE.md and its code): a pull request that changes only
README.md spends no agent run (no shard job runs) and the required check (report) is green with
a one-line comment; a pull request that changes CLAUDE.md runs the tasks and the comment names
the changed file against the baseline's harness.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import act_helpers
from act_helpers import REPO_ROOT, REPOSITORY, commit_repo, job_results, pr_event, run_act
from test_act_report import user_repo

from ci_eval.render.compare import COMMENT_MARKER

api = act_helpers.api  # the loopback GitHub fixture, shared by the act tests

SOLUTION = (REPO_ROOT / "ci_eval" / "templates" / "task" / "solution" / "solve.sh").read_text()
FIX = re.search(r"<<'PY'\n(.*?)^PY$", SOLUTION, re.DOTALL | re.MULTILINE).group(1)
# The team's agent: it makes the known-good change only when CLAUDE.md's rule reaches it.
BOT = f"""\
import os
if "RULE-SLUG" in open("CLAUDE.md").read():
    open("slug.py", "w").write({FIX!r})
"""
CONFIG = """\
default_agent: mine
agents:
  mine:
    command: [python3, bot.py]
    harness: [CLAUDE.md, bot.py]
"""


def team_repo(tmp_path) -> tuple[Path, list[str]]:
    repo = tmp_path / "user-repo"
    flags = user_repo(repo, None, tmp_path, "reference")
    (repo / "ci-eval.yaml").write_text(CONFIG)
    (repo / "CLAUDE.md").write_text("RULE-SLUG: punctuation becomes a hyphen.\n")
    (repo / "bot.py").write_text(BOT)
    (repo / "README.md").write_text("The team's repo.\n")
    workflow = repo / ".github" / "workflows" / "eval.yml"
    workflow.write_text(workflow.read_text().replace(
        "          mode: run\n", "          mode: run\n          runs: 2\n"))
    for argv in (["run", "-k", "2"], ["baseline", "update", "--all"]):
        done = subprocess.run([sys.executable, "-m", "ci_eval", *argv], cwd=repo,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
    assert json.loads((repo / "baseline.json").read_text())["harness"]["files"]
    (repo / "results").rename(tmp_path / "local-results")
    commit_repo(repo)
    return repo, flags


def test_a_readme_only_pr_spends_no_agent_run_and_a_claude_md_pr_is_named(tmp_path, api):
    repo, flags = team_repo(tmp_path)
    api.add_pull(REPOSITORY, 7, files=["README.md", "docs/notes.md"])
    done = run_act(repo, api, tmp_path / "act-7", event=pr_event(7), extra_flags=flags)
    results = job_results(done.stdout)
    assert results.get("plan") == "succeeded", done.stdout[-4000:]
    assert not any(job.startswith("shard") for job in results), results  # no agent run
    assert results.get("report") == "succeeded", done.stdout[-4000:]
    [posted] = api.comments_on(REPOSITORY, 7)
    assert posted["body"].startswith(f"{COMMENT_MARKER}\n### ✅ ci-eval: no agent run\n\n> ")
    assert "it changes README.md, docs/notes.md" in posted["body"]

    (repo / "CLAUDE.md").write_text("RULE-SLUG: punctuation becomes a hyphen.\nBe brief.\n")
    commit_repo(repo)
    api.add_pull(REPOSITORY, 8, files=["CLAUDE.md"])
    done = run_act(repo, api, tmp_path / "act-8", event=pr_event(8), extra_flags=flags)
    results = job_results(done.stdout)
    assert results.get("shard 1/1") == "succeeded", done.stdout[-6000:]
    assert results.get("report") == "succeeded", done.stdout[-4000:]
    [posted] = api.comments_on(REPOSITORY, 8)
    assert "harness changed since the baseline: CLAUDE.md modified" in posted["body"], \
        posted["body"]
    assert "| task-001-slugify-punctuation | unchanged |" in posted["body"], posted["body"]
