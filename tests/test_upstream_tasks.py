"""Tasks pinned to an upstream commit (issue #25, item 2): metadata.json `repo: {url, commit}`
against a local bare repository (file://), the workspace from that commit's tree alone."""

from __future__ import annotations

import json
import subprocess

import pytest

from ci_eval.importers.base import file_patch
from ci_eval.run.workspace.build import WorkspaceFactory
from ci_eval.tasks.upstream import tree

CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
         "def test_zero():\n    assert add(0, 0) == 0\n")
ADD, ZERO = "tests/test_calc.py::test_add", "tests/test_calc.py::test_zero"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


def _git(*args, cwd):
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def upstream(tmp_path) -> tuple[str, str, str]:
    """A bare repository whose history holds the bug (base) and, later, its fix (the future):
    (file:// url, base commit, fix commit)."""
    work = tmp_path / "upstream-work"
    (work / "tests").mkdir(parents=True)
    _git("init", "-q", "-b", "main", cwd=work)
    (work / "calc.py").write_text(CALC)
    (work / "tests" / "test_calc.py").write_text(TESTS)
    (work / "setup.sh").write_text("echo the project's own script, never run by ci-eval > ran\n")
    (work / ".gitattributes").write_text("tests/ export-ignore\n")
    _git("add", "-A", cwd=work)
    _git("commit", "-qm", "base", cwd=work)
    base = _git("rev-parse", "HEAD", cwd=work)
    (work / "calc.py").write_text(FIXED)
    _git("commit", "-qam", "the fix", cwd=work)
    fix = _git("rev-parse", "HEAD", cwd=work)
    bare = tmp_path / "upstream.git"
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    return f"file://{bare}", base, fix


# a negative that takes the answer from the repository's history, as an agent could
FUTURE = ("git log --all --format=%H > history.txt\n"
          "git show {fix}:calc.py > future.py 2>/dev/null && mv future.py calc.py\nexit 0\n")


def pinned_task(make_task, root, url, commit, fix):
    return make_task(
        root, "task-001-pinned-calc", prompt="add() subtracts.\n",
        checks="from ci_eval.checks import main, run_declared_tests\n\n"
               "main(lambda: run_declared_tests())\n",
        metadata={"repo": {"url": url, "commit": commit}, "fail_to_pass": [ADD],
                  "pass_to_pass": [ZERO]},
        repo_state=None,
        solution={"fix.patch": file_patch({"calc.py": CALC.encode()}, {"calc.py": FIXED.encode()})},
        negatives={"read-the-future.sh": FUTURE.format(fix=fix)})


@pytest.fixture
def cache_env(tmp_path):
    return {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}


def test_verify_builds_the_workspace_from_the_commit_alone(cli, repo_root, make_task, tmp_path,
                                                            cache_env):
    url, base, fix = upstream(tmp_path)
    pinned_task(make_task, repo_root, url, base, fix)
    assert cli("validate", cwd=repo_root, env=cache_env).returncode == 0
    result = cli("verify", cwd=repo_root, env=cache_env, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [line.split() for line in result.stdout.splitlines()[2:4]] == [
        ["FAIL", "PASS", ADD], ["PASS", "PASS", ZERO]]
    trees = list((tmp_path / "cache" / "trees").iterdir())
    assert [t.name for t in trees] == [base]
    files = trees[0] / "files"
    # the commit's files, every one of them (export-ignore does not drop tests/), no .git, and
    # the project's setup.sh copied, never run
    assert sorted(p.relative_to(files).as_posix() for p in files.rglob("*") if p.is_file()) == [
        ".gitattributes", "calc.py", "setup.sh", "tests/test_calc.py"]
    # the cache holds the pinned commit only: the fix is not in it, so no workspace can have it
    bare = next((tmp_path / "cache" / "repos").iterdir())
    assert subprocess.run(["git", "cat-file", "-e", f"{fix}^{{commit}}"], cwd=bare,
                          capture_output=True, check=False).returncode != 0


def test_the_workspace_has_no_history(tmp_path, cache_env, monkeypatch):
    monkeypatch.setenv("CI_EVAL_UPSTREAM_CACHE", cache_env["CI_EVAL_UPSTREAM_CACHE"])
    url, base, fix = upstream(tmp_path)
    workspace = WorkspaceFactory(tmp_path / "templates").create(
        tree("task-001-pinned-calc", url, base), tmp_path / "ws")
    log = _git("log", "--all", "--format=%H %s", cwd=workspace).splitlines()
    assert len(log) == 1 and base not in log[0] and fix not in log[0]
    assert (workspace / "calc.py").read_text() == CALC and not (workspace / "ran").exists()
    done = subprocess.run(["git", "cat-file", "-e", fix], cwd=workspace, capture_output=True,
                          check=False)
    assert done.returncode != 0


def test_a_missing_commit_is_refused_naming_the_task(cli, repo_root, make_task, tmp_path,
                                                     cache_env):
    url, _, fix = upstream(tmp_path)
    pinned_task(make_task, repo_root, url, "0" * 40, fix)
    for command in ("verify", "run"):
        result = cli(command, "--json", cwd=repo_root, env=cache_env, timeout=120) \
            if command == "verify" else cli("run", "--agent", "noop", cwd=repo_root,
                                            env=cache_env, timeout=120)
        assert result.returncode == 2, result.stdout + result.stderr
        assert f"task-001-pinned-calc: cannot fetch commit {'0' * 40} from {url}" in result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize("repo, said", [
    ({"url": "ftp://example.com/x.git", "commit": "a" * 40}, "file://, https:// or git@"),
    ({"url": "file:///tmp/x.git", "commit": "abc123"}, "40-character lower-case hex"),
    ({"url": "file:///tmp/x.git"}, "commit"),
    ({"url": "file:///tmp/x.git", "commit": "a" * 40, "branch": "main"}, "branch"),
])
def test_validate_checks_the_fields(cli, repo_root, make_task, repo, said):
    make_task(repo_root, "task-001-pinned", metadata={"repo": repo}, repo_state=None)
    result = cli("validate", "--json", cwd=repo_root)
    assert result.returncode == 1 or result.returncode == 2
    problems = json.dumps(json.loads(result.stdout))
    assert said in problems and "repo" in problems


def test_a_pinned_task_with_repo_state_too_is_refused(cli, repo_root, make_task):
    make_task(repo_root, "task-001-pinned", metadata={
        "repo": {"url": "file:///tmp/x.git", "commit": "a" * 40}})
    result = cli("validate", cwd=repo_root)
    assert result.returncode != 0
    assert "has no repo-state/: remove one of the two" in result.stdout + result.stderr
