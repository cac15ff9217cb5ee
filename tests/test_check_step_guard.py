"""The seam between check steps (issue #31, item 1): ci_eval/run/checks/step_guard.py on real
folders. What one step changed is put back when the next starts (files, folders, modes, links,
a rewrite that kept size and mtime), checks.py's own writes between steps stay, hidden files are
in the workspace only during a step and fresh each time, and what cannot be put back is a
problem of the step. The attacks through `ci-eval run` on the bundled tasks are in
tests/adversarial/test_check_step_seams.py."""

from __future__ import annotations

import os
import stat

import pytest

from ci_eval.run.checks import step_guard
from ci_eval.run.checks.step_guard import guarded_step


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    monkeypatch.setattr(step_guard, "_pending", [])


def _tree(root) -> dict[str, object]:
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                with open(path, "rb") as handle:
                    found[rel] = ("file", stat.S_IMODE(info.st_mode), handle.read())
    return found


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "pkg" / "mod.py").write_text("X = 1\n")
    (root / "readonly").mkdir()
    (root / "readonly" / "data.txt").write_text("data\n")
    (root / "readonly").chmod(0o555)
    (root / "folder").mkdir()
    (root / "folder" / "f.txt").write_text("f\n")
    os.symlink("calc.py", root / "link.py")
    yield root
    for folder, dirs, _ in os.walk(root):
        for name in dirs:
            if not os.path.islink(os.path.join(folder, name)):
                os.chmod(os.path.join(folder, name), 0o755)


def test_what_a_step_changed_is_put_back_when_the_next_step_starts(workspace, tmp_path):
    before = _tree(workspace)
    calc = workspace / "calc.py"
    with guarded_step(root=workspace) as guard:
        info = calc.stat()
        calc.write_text("def add(a, b):\n    return a + b\n")  # same size
        os.utime(calc, ns=(info.st_atime_ns, info.st_mtime_ns))  # and the same mtime
        (workspace / "pkg" / "mod.py").unlink()
        (workspace / "pkg" / "mod").mkdir()  # a package that would shadow mod.py
        (workspace / "pkg" / "mod" / "__init__.py").write_text("X = 2\n")
        (workspace / "new.py").write_text("planted\n")
        (workspace / "readonly").chmod(0o755)
        (workspace / "readonly" / "data.txt").write_text("changed\n")
        (workspace / "readonly").chmod(0o500)
        (workspace / "link.py").unlink()
        os.symlink(tmp_path, workspace / "link.py")
        for child in (workspace / "folder").iterdir():
            child.unlink()
        (workspace / "folder").rmdir()
        os.symlink("/etc", workspace / "folder")
    assert guard.problem == ""
    # the last step's changes stay until another step starts (a kept run shows them)
    assert (workspace / "new.py").exists()
    with guarded_step(root=workspace):
        assert _tree(workspace) == before


def test_checks_py_own_writes_between_steps_stay(workspace):
    with guarded_step(root=workspace):
        (workspace / "calc.py").write_text("step 1\n")
        (workspace / "made-by-step.txt").write_text("x\n")
    (workspace / "calc.py").write_text("checks.py's own\n")  # e.g. restore= of a later step
    with guarded_step(root=workspace):
        assert (workspace / "calc.py").read_text() == "checks.py's own\n"
        assert not (workspace / "made-by-step.txt").exists()


def test_nested_steps_put_back_the_outer_state(workspace):
    """main's step around a check, and the helper's inside it: checks.py's writes inside the
    check (its restore=) are undone with the check, as the inner step's are."""
    original = (workspace / "calc.py").read_text()
    with guarded_step(root=workspace):
        (workspace / "calc.py").write_text("restored by the check\n")
        with guarded_step(root=workspace):
            (workspace / "calc.py").write_text("rewritten by the code under test\n")
    with guarded_step(root=workspace):
        assert (workspace / "calc.py").read_text() == original


def test_hidden_files_are_in_the_workspace_only_during_a_step_fresh_each_time(workspace,
                                                                              tmp_path):
    pristine = tmp_path / "hidden_tests" / "test_more.py"
    pristine.parent.mkdir()
    pristine.write_text("def test_more():\n    assert False\n")
    hidden = [(pristine, "tests/test_more.py")]
    target = workspace / "tests" / "test_more.py"
    assert not target.exists()
    with guarded_step(hidden, root=workspace):
        assert target.read_text() == pristine.read_text()
        target.write_text("def test_more():\n    pass\n")  # the forgery of issue #31
    assert not target.exists() and not (workspace / "tests").exists()
    with guarded_step(hidden, root=workspace):
        assert target.read_text() == pristine.read_text()
    # a file the agent left at that path is the agent's again once the step is over
    (workspace / "tests").mkdir()
    target.write_text("the agent's\n")
    with guarded_step(hidden, root=workspace):
        assert target.read_text() == pristine.read_text()
    assert target.read_text() == "the agent's\n"


def test_hidden_files_are_not_written_through_a_symlinked_folder(workspace, tmp_path):
    pristine = tmp_path / "hidden_tests" / "test_more.py"
    pristine.parent.mkdir()
    pristine.write_text("def test_more():\n    assert False\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, workspace / "tests")
    with guarded_step([(pristine, "tests/test_more.py")], root=workspace):
        assert (workspace / "tests").is_dir() and not (workspace / "tests").is_symlink()
    assert list(outside.iterdir()) == []
    assert os.readlink(workspace / "tests") == str(outside)


def test_a_changed_file_over_the_budget_is_the_steps_problem(workspace, monkeypatch):
    monkeypatch.setattr(step_guard, "FILE_BYTES_KEPT", 16)
    (workspace / "big.bin").write_bytes(b"x" * 64)
    with guarded_step(root=workspace) as guard:
        (workspace / "big.bin").write_bytes(b"y" * 64)
    assert guard.problem.startswith("a check step changed big.bin")
    with guarded_step(root=workspace) as unchanged:
        pass
    assert unchanged.problem == ""
