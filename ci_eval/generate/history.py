"""Candidates from a repository's history: a commit that changes source and tests together.
base = the parent's tree with the commit's test changes; solution = the commit's other changes
(a patch); fail_to_pass = tests red at base and green with the solution, pass_to_pass = green in
both, each state run twice (a test that changes its mind is flaky, never a gate)."""

from __future__ import annotations

import shutil

from ci_eval.generate import decide, gitsource
from ci_eval.generate.candidate import Candidate, MiningContext, finish
from ci_eval.generate.gitsource import Commit


def mine_commit(ctx: MiningContext, commit: Commit) -> Candidate:
    """One commit -> a staged, verified task folder, or the reason it is not one."""
    key = commit.sha
    if len(commit.parents) != 1:
        return Candidate(key, decide.UNSUPPORTED, "a root commit has no parent to start from")
    parent = commit.parents[0]
    changes = gitsource.changes(ctx.bare, parent, commit.sha)
    tests = [c for c in changes if decide.is_test_path(c.path)]
    others = [c.path for c in changes if not decide.is_test_path(c.path)]
    sources = [path for path in others if decide.is_source_path(path)]
    if not tests:
        return Candidate(key, decide.NO_TEST_CHANGE, f"{len(changes)} file(s), none a test")
    if not sources:
        return Candidate(key, decide.NO_SOURCE_CHANGE, "only tests, docs or configuration")
    source_patch = gitsource.diff(ctx.bare, parent, commit.sha, sources).decode(
        "utf-8", errors="replace")
    files, lines = decide.patch_size(source_patch)
    if files > ctx.limits.max_files or lines > ctx.limits.max_lines:
        return Candidate(key, decide.TOO_LARGE, f"{files} source file(s), {lines} line(s) "
                         f"(limits {ctx.limits.max_files}, {ctx.limits.max_lines})")
    work = ctx.scratch(key)
    try:
        base = work / "base"
        try:
            gitsource.write_tree(ctx.bare, parent, base)
            for change in tests:
                target = base / change.path
                data = None if change.status == "D" else gitsource.file_at(
                    ctx.bare, commit.sha, change.path)
                if data is None:
                    target.unlink(missing_ok=True)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
        except gitsource.GitSourceError as exc:
            return Candidate(key, decide.TOO_LARGE, str(exc))
        solution = gitsource.diff(ctx.bare, parent, commit.sha, others)
        origin = {"source": "history", "repo": ctx.repo_name, "commit": commit.sha,
                  "parent": parent, "date": commit.date, "subject": commit.subject[:200],
                  "solution_files": files, "solution_lines": lines}
        return finish(ctx, key, base, solution, origin, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def scan(ctx: MiningContext, rev: str | None, since: str | None, limit: int | None) -> list[Commit]:
    return gitsource.commits(ctx.bare, rev, since, limit)


def one(ctx: MiningContext, rev: str) -> Commit:
    sha = gitsource.resolve(ctx.bare, rev)
    return next(iter(gitsource.commits(ctx.bare, sha, None, 1)))

