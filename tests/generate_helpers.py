"""A tiny real git repository for `ci-eval generate` tests, one commit per case:

  1 initial        calc/ with a bug in mean(), tests for add and clamp   (root: no parent)
  2 fix-mean       mean() fixed, test_mean added                         -> a valid task
  3 docstring      calc/ touched, no test changed                        -> no test change
  4 flaky          a test that fails in one of two runs of a state, and
                   a cosmetic source change                              -> flaky
  5 broken-test    a test that always fails (tests only)                 -> no source change
  6 fix-clamp      clamp() fixed with its test, but the base suite holds
                   the broken test                                       -> base tests red

The flaky test fails in the second workspace of each state: generate's probes run a state in
workspaces named ws-0 and ws-1 (ci_eval/generate/probe.py), so its outcome differs between the
two runs of one state, deterministically."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@localhost", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull}

CALC = '''"""A small calculator."""


def add(a, b):
    return a + b


def mean(values):
    return sum(values) / (len(values) + 1)


def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return low
    return x
'''
TESTS = '''from calc import add, clamp


def test_add():
    assert add(2, 3) == 5


def test_clamp_low():
    assert clamp(-1, 0, 10) == 0


def test_clamp_inside():
    assert clamp(4, 0, 10) == 4
'''
TEST_MEAN = '''from calc import mean


def test_mean():
    assert mean([2, 4, 6]) == 4
'''
TEST_FLAKY = '''import os


def test_sometimes():
    assert not os.getcwd().endswith("ws-1")
'''
TEST_BROKEN = '''def test_always_broken():
    assert 1 == 2
'''
TEST_CLAMP_HIGH = TESTS + '''

def test_clamp_high():
    assert clamp(11, 0, 10) == 10
'''


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env={**os.environ, **GIT_ENV}).stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def tiny_repo(path: Path) -> dict[str, str]:
    """The repository above at `path`; returns the commit of each case by name."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    shas = {"initial": commit(path, "initial", {"calc/__init__.py": CALC,
                                                "tests/test_calc.py": TESTS,
                                                "LICENSE": "MIT, for the tests\n"})}
    fixed_mean = CALC.replace("(len(values) + 1)", "len(values)")
    shas["fix-mean"] = commit(path, "mean of an empty tail", {"calc/__init__.py": fixed_mean,
                                                               "tests/test_mean.py": TEST_MEAN})
    documented = fixed_mean.replace('"""A small calculator."""', '"""A small calculator (v2)."""')
    shas["docstring"] = commit(path, "docstring", {"calc/__init__.py": documented})
    shas["flaky"] = commit(path, "a flaky test", {
        "calc/__init__.py": documented.replace("(v2)", "(v3)"),
        "tests/test_flaky.py": TEST_FLAKY})
    shas["broken-test"] = commit(path, "a broken test", {"tests/test_broken.py": TEST_BROKEN})
    shas["fix-clamp"] = commit(path, "clamp high", {
        "calc/__init__.py": documented.replace("(v2)", "(v3)").replace(
            "        return low\n    return x", "        return high\n    return x"),
        "tests/test_calc.py": TEST_CLAMP_HIGH})
    return shas


def hostile_config(repo: Path, marker: Path) -> None:
    """Configuration and hooks that run a program when git obeys them: none may."""
    run = f"touch {marker}"
    for key, value in (("core.fsmonitor", run), ("diff.external", run),
                       ("log.showSignature", "true"), ("gpg.program", run),
                       ("core.pager", run), ("filter.evil.clean", run),
                       ("filter.evil.smudge", run), ("uploadpack.packObjectsHook", run)):
        git(repo, "config", key, value)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil diff=evil\n")
    git(repo, "config", "diff.evil.textconv", run)
    for hook in ("post-checkout", "pre-auto-gc", "reference-transaction", "post-merge"):
        script = repo / ".git" / "hooks" / hook
        script.parent.mkdir(exist_ok=True)
        script.write_text(f"#!/bin/sh\n{run}\n")
        script.chmod(0o755)
