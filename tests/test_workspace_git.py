"""The workspace's .git is written without git (run/workspace/gitdir.py): real git must read it as the
repository `git init` + `git add -A` + `git commit` would have made, clean and fsck-valid."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ci_eval.run.workspace.build import GIT_ENV, WorkspaceFactory, create_workspace
from ci_eval.run.workspace.gitdir import git_files, write_git

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(workspace: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(workspace), *args], capture_output=True, text=True,
                          check=True, env={**os.environ, **GIT_ENV}).stdout


def _tree(root: Path) -> Path:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a-b").mkdir()
    (root / "empty-folder").mkdir()
    (root / "greet.txt").write_text("bye\n")
    (root / "a" / "b" / "c.txt").write_text("no newline")
    (root / "a-b" / "z").write_text("z\n")
    (root / "a" / "bin.dat").write_bytes(b"\0\1\2binary")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "link").symlink_to("greet.txt")
    (root / "empty").write_text("")
    (root / ".gitignore").write_text("*.log\n")
    (root / "kept.log").write_text("committed although ignored\n")
    return root


@needs_git
def test_the_written_repository_is_what_git_itself_would_commit(tmp_path):
    ours = _tree(tmp_path / "ours")
    write_git(ours, git_files(ours))
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    _git(theirs, "init", "-q", "-b", "main")
    _git(theirs, "add", "-A", "--force")  # ours commits ignored files too (see gitdir.py)
    _git(theirs, "commit", "-q", "-m", "initial state")
    assert _git(ours, "rev-parse", "HEAD") == _git(theirs, "rev-parse", "HEAD")
    _git(ours, "fsck", "--strict", "--full")
    assert _git(ours, "status", "--porcelain") == ""
    assert _git(ours, "log", "--format=%an <%ae> %ad %s", "--date=iso") == (
        "ci-eval <ci-eval@localhost> 2000-01-01 00:00:00 +0000 initial state\n")


@needs_git
def test_copies_of_a_prepared_workspace_are_clean_and_show_the_agents_change(tmp_path):
    repo_state = _tree(tmp_path / "task" / "repo-state")
    factory = WorkspaceFactory(tmp_path / "cache")
    first = factory.create(repo_state, tmp_path / "run-1")
    second = factory.create(repo_state, tmp_path / "run-2")
    for workspace in (first, second):
        assert _git(workspace, "status", "--porcelain") == ""
    (second / "greet.txt").write_text("hello\n")
    (second / "new.txt").write_text("new\n")
    assert _git(second, "status", "--porcelain").splitlines() == [" M greet.txt", "?? new.txt"]
    assert "+hello" in _git(second, "diff")
    assert factory.pristine(repo_state, second, tmp_path / "unused") == repo_state.resolve()


@needs_git
def test_a_patched_task_is_prepared_once_and_committed_patched(tmp_path):
    repo_state = tmp_path / "task" / "repo-state"
    repo_state.mkdir(parents=True)
    (repo_state / "greet.txt").write_text("bye\n")
    (repo_state / "0001.patch").write_text(
        "--- a/greet.txt\n+++ b/greet.txt\n@@ -1 +1 @@\n-bye\n+hi\n")
    factory = WorkspaceFactory(tmp_path / "cache")
    workspace = factory.create(repo_state, tmp_path / "run-1")
    assert sorted(p.name for p in workspace.iterdir()) == [".git", "greet.txt"]
    assert (workspace / "greet.txt").read_text() == "hi\n"
    assert _git(workspace, "status", "--porcelain") == ""
    assert _git(workspace, "show", "HEAD:greet.txt") == "hi\n"
    pristine = factory.pristine(repo_state, workspace, tmp_path / "unused")
    assert pristine != repo_state and (pristine / "greet.txt").read_text() == "hi\n"


@needs_git
def test_a_task_with_setup_sh_is_committed_as_setup_left_it(tmp_path):
    repo_state = tmp_path / "task" / "repo-state"
    repo_state.mkdir(parents=True)
    (repo_state / "setup.sh").write_text("echo made > made.txt\n")
    workspace = create_workspace(repo_state, tmp_path / "ws")
    assert _git(workspace, "ls-files").split() == ["made.txt"]
    assert _git(workspace, "status", "--porcelain") == ""
