"""A task's tree laid from its template (run/workspace/template.py) is what
shutil.copytree(symlinks=True) made of it before: the same entries, bytes, link targets, modes
and modification times, every file a copy of its own."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from ci_eval.run.workspace.build import GIT_ENV, WorkspaceFactory
from ci_eval.run.workspace.template import TreeTemplate


def _tricky(root: Path) -> Path:
    (root / "src" / "deep" / "er").mkdir(parents=True)
    (root / "src" / "deep" / "er" / "x.py").write_text("x = 1\n")
    (root / "src" / "empty-folder").mkdir()
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "frozen.txt").write_text("read only\n")
    (root / "frozen.txt").chmod(0o444)
    (root / "odd mode").write_text("")
    (root / "odd mode").chmod(0o640)
    (root / "locked").mkdir()
    (root / "locked" / "inside.txt").write_text("in a read-only folder\n")
    (root / "locked").chmod(0o555)
    (root / "bin.dat").write_bytes(bytes(range(256)) * 40)
    (root / "link").symlink_to("run.sh")
    (root / "dangling").symlink_to("../../outside/nowhere")
    (root / "folder-link").symlink_to("src")
    (root / os.fsdecode(b"name \xff with spaces")).write_text("non-UTF-8 name\n")
    (root / "vendor" / ".git").mkdir(parents=True)  # a nested .git is part of the tree
    (root / "vendor" / ".git" / "HEAD").write_text("ref: refs/heads/x\n")
    (root / ".git").mkdir()  # the top-level one is not
    (root / ".git" / "config").write_text("[core]\n")
    old = 1_000_000_000_123_456_789
    for path in sorted(root.rglob("*"), reverse=True):
        os.utime(path, ns=(old, old + len(path.name)), follow_symlinks=False)
    os.utime(root, ns=(old, old - 7))
    return root


def _listing(root: Path) -> dict:
    """Every entry under root: kind, permission bits, mtime, bytes or link target."""
    found = {}
    for path in [root, *root.rglob("*")]:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            what = ("link", os.readlink(path))
        elif stat.S_ISDIR(info.st_mode):
            what = ("dir", stat.S_IMODE(info.st_mode))
        else:
            what = ("file", stat.S_IMODE(info.st_mode), path.read_bytes(), info.st_nlink)
        found[str(path.relative_to(root))] = (*what, info.st_mtime_ns)
    return found


def _copied(tree: Path, target: Path) -> Path:
    shutil.copytree(tree, target, symlinks=True,
                    ignore=lambda d, names: [".git"] if d == str(tree) else [])
    return target


def test_a_laid_tree_is_what_copytree_made(tmp_path):
    tree = _tricky(tmp_path / "repo-state")
    expected = _listing(_copied(tree, tmp_path / "copied"))
    template = TreeTemplate.of(tree)
    assert template is not None
    laid = template.lay(tmp_path / "laid")
    assert _listing(laid) == expected
    assert ".git" not in expected and "vendor/.git/HEAD" in expected
    assert _listing(template.lay(tmp_path / "again")) == expected


def test_every_laid_file_is_its_own_copy(tmp_path):
    tree = _tricky(tmp_path / "repo-state")
    template = TreeTemplate.of(tree)
    first, second = template.lay(tmp_path / "one"), template.lay(tmp_path / "two")
    (first / "frozen.txt").chmod(0o644)
    (first / "frozen.txt").write_text("changed by the agent\n")
    (first / "src" / "deep" / "er" / "x.py").write_text("x = 2\n")
    for root in (second, tree):
        assert (root / "frozen.txt").read_text() == "read only\n"
        assert (root / "src" / "deep" / "er" / "x.py").read_text() == "x = 1\n"
    assert os.stat(first / "run.sh").st_ino != os.stat(tree / "run.sh").st_ino
    assert os.stat(first / "run.sh").st_nlink == 1
    assert _listing(template.lay(tmp_path / "three")) == _listing(second)


def test_a_laid_target_must_not_exist(tmp_path):
    tree = _tricky(tmp_path / "repo-state")
    (tmp_path / "there").mkdir()
    with pytest.raises(FileExistsError):
        TreeTemplate.of(tree).lay(tmp_path / "there")


def test_a_tree_with_a_fifo_has_no_template_and_fails_as_the_copy_did(tmp_path):
    tree = tmp_path / "task" / "repo-state"
    tree.mkdir(parents=True)
    (tree / "a.txt").write_text("a\n")
    os.mkfifo(tree / "pipe")
    assert TreeTemplate.of(tree) is None
    with pytest.raises(OSError):  # shutil.Error names the named pipe, as before templates
        WorkspaceFactory(tmp_path / "cache").create(tree, tmp_path / "ws")


def test_a_file_with_extended_attributes_is_copied_not_laid(tmp_path):
    tree = tmp_path / "task" / "repo-state"
    tree.mkdir(parents=True)
    (tree / "a.txt").write_text("a\n")
    try:
        os.setxattr(tree / "a.txt", "user.origin", b"task")
    except OSError:
        pytest.skip("this file system keeps no user extended attributes")
    assert TreeTemplate.of(tree) is None
    workspace = WorkspaceFactory(tmp_path / "cache").create(tree, tmp_path / "ws")
    assert os.getxattr(workspace / "a.txt", "user.origin") == b"task"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_factory_lays_its_workspaces_from_the_template(tmp_path):
    tree = _tricky(tmp_path / "task" / "repo-state")
    shutil.rmtree(tree / "vendor" / ".git")  # real git would take it for a repository of its own
    factory = WorkspaceFactory(tmp_path / "cache")
    workspace = factory.create(tree, tmp_path / "ws")
    assert factory._prepare(tree.resolve()).template is not None
    expected = _listing(_copied(tree, tmp_path / "copied"))
    listing = _listing(workspace)
    assert listing.pop(".git")[0] == "dir"
    listing["."] = expected["."]  # the top folder's mtime moved when .git was written in it
    assert {k: v for k, v in listing.items() if not k.startswith(".git/")} == expected
    status = subprocess.run(["git", "-C", str(workspace), "status", "--porcelain"],
                            capture_output=True, check=True, env={**os.environ, **GIT_ENV})
    assert status.stdout == b""  # real git finds the laid tree as the index committed it


def test_a_file_larger_than_one_send_is_copied_whole(tmp_path):
    tree = tmp_path / "repo-state"
    tree.mkdir()
    data = os.urandom(64 * 1024) * 130 + b"tail"  # over the 8 MiB of one sendfile
    (tree / "big.bin").write_bytes(data)
    laid = TreeTemplate.of(tree).lay(tmp_path / "laid")
    assert (laid / "big.bin").read_bytes() == data
