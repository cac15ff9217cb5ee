"""The comment's wording: confirmation runs counted in the footer, a link to the workflow run,
the heading of the changed table, one task in the singular, a long Why cut at a word with an
ellipsis, and the commit asked of git when GITHUB_SHA is unset."""

from __future__ import annotations

from act_helpers import commit_repo, git

from ci_eval.github import context
from ci_eval.github.context import footer_commit
from ci_eval.render import compare as rc
from ci_eval.verdict.model import TaskVerdict, Verdict


def tv(task, status, **kw):
    return TaskVerdict(task=task, status=status, gated=True, **kw)


def test_confirmation_runs_are_counted_beside_k():
    plain = Verdict(tasks=(tv("task-001-a", "unchanged", requested=5),), k=5)
    assert "k=5 ·" in rc.render_markdown(plain)
    confirmed = Verdict(tasks=(tv("task-001-a", "regressed", passes=0, runs=10, requested=10),
                               tv("task-002-b", "unchanged", requested=5)), k=5)
    text = rc.render_markdown(confirmed)
    assert "k=5 + 5 confirmation runs on tasks near the gate" in text
    assert "0.00 (0/10)" in text


def test_the_footer_links_the_run_and_the_heading_says_what_is_listed():
    verdict = Verdict(tasks=(tv("task-001-a", "new"),), k=5)
    text = rc.render_markdown(verdict, run_url="https://github.com/acme/w/actions/runs/9")
    assert "[workflow run](https://github.com/acme/w/actions/runs/9)" in text
    assert "#### Changed, new or failing tasks" in text and "not unchanged" not in text
    assert "<summary>The 1 task</summary>" in text and "1 tasks" not in text
    two = Verdict(tasks=(tv("task-001-a", "new"), tv("task-002-b", "new")), k=5)
    assert "<summary>All 2 tasks</summary>" in rc.render_markdown(two)


def test_a_long_why_is_cut_at_a_word_with_an_ellipsis():
    words = "checks failed because the expected output differs " * 10
    verdict = Verdict(tasks=(tv("task-001-a", "regressed", why=words.strip()),), k=5)
    row = next(line for line in rc.render_markdown(verdict).splitlines()
               if line.startswith("| task-001-a | regressed"))  # the changed table's, with Why
    why = row.rsplit("|", 2)[-2].strip().strip("`").strip()
    assert why.endswith("…") and words.startswith(why[:-1]) and words[len(why) - 1] == " "


def test_compare_asks_git_for_the_commit_when_github_sha_is_unset(repo_root, make_task, cli,
                                                                 monkeypatch):
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    make_task(repo_root, "task-001-a")
    commit_repo(repo_root)
    head = git(repo_root, "rev-parse", "HEAD")
    assert cli("run", "--agent", "reference", "-k", "1", cwd=repo_root).returncode == 0
    done = cli("compare", "--format", "markdown", cwd=repo_root)
    assert f"commit {head[:12]}" in done.stdout and "commit unknown" not in done.stdout


def test_the_footer_commit_is_the_option_then_github_sha_then_git_head(tmp_path):
    """compare and gate share one order: --commit, $GITHUB_SHA, git's HEAD, else unknown."""
    (tmp_path / "f").write_text("x")
    commit_repo(tmp_path)
    head = git(tmp_path, "rev-parse", "HEAD")
    sha = "abc123def4567890"
    run_sha = context.parse({"GITHUB_SHA": sha}, {}).sha
    assert footer_commit("feedbeef", run_sha, tmp_path) == "feedbeef"
    assert footer_commit(None, run_sha, tmp_path) == sha
    assert footer_commit(None, context.parse({"GITHUB_SHA": ""}, {}).sha, tmp_path) == head
    assert footer_commit(None, None, tmp_path / "f") is None  # no repository there: unknown


def test_the_footer_has_the_run_total_of_tokens_and_cost():
    known = Verdict(tasks=(tv("task-001-a", "new"),), k=5, total_tokens=12_345,
                    total_cost_usd=0.04213)
    assert "in all 12,345 tokens, $0.0421" in rc.render_markdown(known)
    assert "in all tokens unknown, cost unknown" in rc.render_markdown(
        Verdict(tasks=(tv("task-001-a", "new"),), k=5))
