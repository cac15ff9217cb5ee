"""The docker runner's bad input, each a one-line error naming the file and the field (exit 2,
nothing run): ci-eval.yaml's runner and placement, metadata.json's docker settings, Harbor
sources, an engine that does not answer. None of these needs an engine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness_helpers import assert_bad_input, write_task

from ci_eval.agents.config_file import parse_config
from ci_eval.errors import UserError
from ci_eval.run.docker.harbor import parse_reward, passed

HARBOR_TASK = Path(__file__).parent / "fixtures" / "harbor" / "broken-inventory"


@pytest.mark.parametrize(("data", "field", "needle"), [
    ({"runner": "podman"}, "runner", "expected one of local, docker"),
    ({"agents": {"a": {"command": "x", "placement": "vm"}}}, "agents.a.placement",
     "expected one of host, container"),
    ({"agents": {"a": {"preset": "codex", "placement": "container"}}}, "agents.a.placement",
     "runs an agent `command`"),
])
def test_config_refuses(data, field, needle):
    with pytest.raises(UserError) as caught:
        parse_config(data, "ci-eval.yaml")
    assert caught.value.field == field and needle in str(caught.value)


def test_config_accepts_runner_and_placement():
    config = parse_config({"runner": "docker",
                           "agents": {"a": {"command": "x", "placement": "container"}}})
    assert config.runner == "docker" and config.agents["a"].placement == "container"


@pytest.mark.parametrize(("docker", "needle"), [
    ({"cpus": 0}, "cpus"),
    ({"memory_mb": "lots"}, "memory_mb"),
    ({"verifier": "pytest"}, "verifier"),
    ({"dockerfile": "../elsewhere/Dockerfile"}, "dockerfile"),
    ({"mount": "relative"}, "mount"),
    ({"build_timeout": 10}, "build_timeout"),
])
def test_metadata_docker_settings_are_checked(tmp_path, cli, docker, needle):
    write_task(tmp_path, metadata={"runner": "docker", "docker": docker})
    assert_bad_input(cli("verify", "--root", tmp_path), "metadata.json", needle)


def test_metadata_runner_is_checked(tmp_path, cli):
    write_task(tmp_path, metadata={"runner": "vm"})
    assert_bad_input(cli("run", "--root", tmp_path, "--agent", "noop", "-k", "1"),
                     "metadata.json", "runner")


def test_a_harbor_task_without_test_sh_does_not_load(tmp_path, cli):
    task = write_task(tmp_path, metadata={"runner": "docker", "docker": {"verifier": "harbor"}})
    (task / "checks.py").unlink()
    assert_bad_input(cli("verify", "--root", tmp_path), "tests/test.sh", "missing")


def source(tmp_path: Path) -> Path:
    copy = tmp_path / "source" / "broken-inventory"
    shutil.copytree(HARBOR_TASK, copy)
    (tmp_path / "root" / "tasks").mkdir(parents=True)
    return copy


@pytest.mark.parametrize(("change", "needles"), [
    (lambda s: (s / "task.toml").write_text("[metadata\n"), ("task.toml", "invalid TOML")),
    (lambda s: (s / "task.toml").write_text("[agent]\ntimeout_sec = -1\n"),
     ("task.toml", "[agent].timeout_sec", "expected a number > 0")),
    (lambda s: (s / "task.toml").write_text("[environment]\nmemory_mb = 1.5\n"),
     ("[environment].memory_mb", "whole number")),
    (lambda s: (s / "task.toml").write_text("[metadata]\ndifficulty = 'brutal'\n"),
     ("[metadata].difficulty", "expected one of")),
    (lambda s: (s / "task.toml").write_text("[metadata]\ntags = 'one'\n"),
     ("[metadata].tags", "a list of strings")),
    (lambda s: (s / "instruction.md").unlink(), ("instruction.md", "missing")),
    (lambda s: (s / "tests" / "test.sh").unlink(), ("tests/test.sh", "missing")),
    (lambda s: (s / "environment" / "Dockerfile").unlink(), ("environment/Dockerfile", "missing")),
])
def test_harbor_import_refuses_and_writes_nothing(tmp_path, cli, change, needles):
    src = source(tmp_path)
    change(src)
    assert_bad_input(cli("import", "harbor", src, "--into", tmp_path / "root"), *needles)
    assert list((tmp_path / "root" / "tasks").iterdir()) == []


def test_harbor_import_skips_what_it_imported_already(tmp_path, cli):
    src = source(tmp_path)
    first = cli("import", "harbor", src, "--into", tmp_path / "root")
    assert first.returncode == 0, first.stderr
    again = cli("import", "harbor", src.parent, "--into", tmp_path / "root", "--json")
    assert again.returncode == 0
    assert json.loads(again.stdout)["skipped"][0]["reason"].startswith("already imported as")


def test_no_engine_is_an_error_naming_the_task(tmp_path, cli):
    shutil.copytree(HARBOR_TASK.parent, tmp_path / "src")
    (tmp_path / "root" / "tasks").mkdir(parents=True)
    assert cli("import", "harbor", tmp_path / "src", "--into", tmp_path / "root").returncode == 0
    env = {"DOCKER_HOST": f"unix://{tmp_path}/nothing-listens-here.sock"}
    for command in (["verify"], ["run", "--agent", "reference", "-k", "1"]):
        assert_bad_input(cli(*command, "--root", tmp_path / "root", env=env),
                         "task-001-broken-inventory", "--runner docker")


@pytest.mark.parametrize(("txt", "js", "value", "ok"), [
    (b"1\n", None, 1.0, True),
    (b" 0 ", None, 0.0, False),
    (b"0.5", None, 0.5, False),
    (b"1", b'{"reward": 0}', 0.0, False),  # reward.json first, as Harbor's verifier reads it
    (b"1", b'{"correctness": 0.5}', 1.0, True),  # no "reward" key: reward.txt is the scalar
    (None, b'{"reward": 1.0, "tests": 3}', 1.0, True),
    (None, b'{"reward": true}', None, False),  # not a number: ignored, as Harbor ignores it
    (None, b'{"reward": 1, "log": "ok"}', 1.0, True),
    # Harbor's multi-key rewards (its cookbook's multi-reward recipe): every one must be full
    (None, b'{"correctness": 1, "performance": 0}', 0.0, False),
    (None, b'{"correctness": 1, "performance": 1.0}', 1.0, True),
    (None, b'{"correctness": 1, "performance": "fast"}', 1.0, True),
    (None, b'{}', None, False),
    (b"nan", None, None, False),
    (b"yes", None, None, False),
    (None, b"[1]", None, False),
    (None, None, None, False),
])
def test_reward_parsing(txt, js, value, ok):
    reward, note = parse_reward(txt, js)
    assert reward == value and passed(reward) is ok and note


def test_docker_runner_on_a_task_without_a_dockerfile(tmp_path, cli, monkeypatch):
    """Refused before the engine is even asked: the task names no image to build."""
    write_task(tmp_path)
    line = assert_bad_input(cli("verify", "--root", tmp_path, "--runner", "docker",
                                env={"DOCKER_HOST": f"unix://{tmp_path}/none.sock"}),
                            "task-001-greet", "needs a Dockerfile")
    assert "environment/Dockerfile" in line
