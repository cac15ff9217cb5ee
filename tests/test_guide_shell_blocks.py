"""Every shell block of the docs is run by a test, as written where it can be: a block whose
page has no runner here fails the suite, so a new block cannot go untested. What cannot run
offline is named per block (installing from GitHub, pushing to it) and replaced by its local
equivalent, nothing else."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
BLOCK = re.compile(r"^```(?:sh|bash|shell)\n(.*?)^```", re.S | re.M)
# each page with shell blocks -> what runs them: a test of this file, or another test file
RUNNERS = {"index.md": "test_index", "github.md": "test_github", "harness.md": "test_harness",
           "first-task.md": "tests/test_first_task_doc.py"}


def blocks(page: str) -> list[str]:
    return BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))


def env_with_ci_eval() -> dict:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        env.pop(name, None)
    return env


def run(script: str, cwd: Path, env: dict | None = None, timeout: float = 600):
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env or env_with_ci_eval(),
                          capture_output=True, text=True, timeout=timeout)


def test_every_page_with_shell_blocks_has_a_runner():
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
             if blocks(p.relative_to(DOCS).as_posix())}
    assert pages <= set(RUNNERS), sorted(pages - set(RUNNERS))
    for runner in RUNNERS.values():
        assert runner in globals() or (REPO / runner).is_file(), runner


def test_index(tmp_path):
    """docs/index.md: the quickstart, in a copy of the repo's tasks (the venv is this one)."""
    [block] = blocks("index.md")
    install, command = block.strip().splitlines()
    assert install.startswith("python3 -m venv .venv") and "pip install -e '.[tasks]'" in install
    shutil.copytree(REPO / "tasks", tmp_path / "tasks")
    shutil.copy(REPO / "baseline.json", tmp_path / "baseline.json")
    done = run(command, tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "21 tasks, 105/105 valid runs passed" in done.stdout + done.stderr


def test_github(tmp_path):
    """docs/github.md: init, validate, verify and a commit, as written; the install from GitHub
    is this venv's ci-eval, and the push goes to a local bare repo."""
    [block] = blocks("github.md")
    lines = block.strip().splitlines()
    assert lines[0].startswith('pip install "ci-eval @ git+https://github.com/ci-eval/ci-eval@')
    repo = tmp_path / "your-repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "origin.git")], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin",
                    str(tmp_path / "origin.git")], check=True)
    env = {**env_with_ci_eval(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_COUNT": "1",
           "GIT_CONFIG_KEY_0": "push.autoSetupRemote", "GIT_CONFIG_VALUE_0": "true"}
    done = run("\n".join(lines[1:]), tmp_path, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    pushed = subprocess.run(["git", "-C", str(tmp_path / "origin.git"), "ls-tree", "-r",
                             "--name-only", "main"], capture_output=True, text=True, check=True)
    assert "ci-eval.yaml" in pushed.stdout and ".github/workflows/eval.yml" in pushed.stdout


@pytest.mark.skipif(shutil.which("ruff", path=str(Path(sys.executable).parent)) is None
                    and shutil.which("ruff") is None, reason="ruff is not installed")
def test_harness(tmp_path):
    """docs/harness.md: the Stop hook blocks (exit 2, ruff's findings on stderr) while the
    project has a ruff error, and lets the agent stop once it has none."""
    [block] = blocks("harness.md")
    hook = tmp_path / "stop.sh"
    hook.write_text(block)
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("import os\n")  # F401: unused import
    env = {**env_with_ci_eval(), "CLAUDE_PROJECT_DIR": str(project)}
    blocked = subprocess.run(["sh", str(hook)], env=env, capture_output=True, text=True)
    assert blocked.returncode == 2 and "F401" in blocked.stderr, blocked.stderr
    (project / "app.py").write_text("import os\n\nprint(os.sep)\n")
    assert subprocess.run(["sh", str(hook)], env=env, capture_output=True).returncode == 0
