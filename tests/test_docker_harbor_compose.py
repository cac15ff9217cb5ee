"""Harbor compose sidecars on a real engine (issue 36 item 4): a task whose
environment/docker-compose.yaml has a `web` service (tests/fixtures/harbor-compose/web-sidecar,
written for these tests in the shape of Harbor's compose overlays) imported and verified with
`--runner docker`: solve.sh and test.sh reach the sidecar by its name on a private network, the
reference scores 1 and noop 0, and afterwards no container or network of the task is left.

The sidecar's compose keys that would reach the host (volumes: /:/host, ports, privileged,
cap_add: SYS_ADMIN) are warned at import and not applied: checked on a live sidecar. A
sidecar that never becomes healthy, or exits, is an infrastructure outcome naming it."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import harbor_tools
import pytest
from harness_helpers import popen_interruptible
from docker_helpers import (  # noqa: F401 - fixtures
    busybox_image,
    docker_engine,
    python_slim_stand_in,
    ubuntu_stand_in,
)

from ci_eval.run.docker import sidecars
from ci_eval.run.docker.images import ImageCache
from ci_eval.run.docker.settings import docker_settings
from ci_eval.tasks.load import load_task

TASK = Path(__file__).parent / "fixtures" / "harbor-compose" / "web-sidecar"
TASK_ID = "task-001-web-sidecar"
MULTI_CONTAINER = Path(__file__).parent / "fixtures" / "harbor-cookbook" / "multi-container"


def imported(tmp_path, cli, source: Path = TASK) -> Path:
    root = tmp_path / "root"
    (root / "tasks").mkdir(parents=True)
    result = cli("import", "harbor", source, "--into", root, "--json", "--today", "2026-12-03")
    assert result.returncode == 0, result.stderr
    return root


def leftovers(docker_engine, task_id: str) -> tuple[str, str]:  # noqa: F811
    containers = docker_engine.docker("ps", "--all", "--quiet", "--filter",
                                      f"label=ci-eval.task={task_id}").stdout.decode().strip()
    networks = docker_engine.docker("network", "ls", "--quiet", "--filter",
                                    f"label=ci-eval.task={task_id}").stdout.decode().strip()
    return containers, networks


def test_import_records_the_sidecar_and_names_what_is_not_applied(tmp_path, cli):
    root = tmp_path / "root"
    (root / "tasks").mkdir(parents=True)
    result = cli("import", "harbor", TASK, "--into", root, "--today", "2026-12-03")
    assert result.returncode == 0, result.stderr
    for key in ("volumes", "ports", "privileged", "cap_add"):
        assert f"services.web.{key} not applied" in result.stdout, (key, result.stdout)
    assert "compose sidecars are not started" not in result.stdout
    metadata = json.loads((root / "tasks" / TASK_ID / "metadata.json").read_text())
    web = metadata["docker"]["services"][0]
    assert web["name"] == "web" and web["build"] == {"context": "environment/web",
                                                     "dockerfile": "Dockerfile"}
    assert web["environment"] == {"SECRET": "sidecar-secret-7"}
    assert "$SECRET" in web["command"][2] and "$$" not in web["command"][2]
    assert web["healthcheck"]["retries"] == 20 and web["healthcheck"]["interval_seconds"] == 1.0
    assert cli("validate", "--root", root).returncode == 0


def test_verify_reaches_the_sidecar_by_name_and_removes_everything(tmp_path, cli, busybox_image,
                                                                   docker_engine):  # noqa: F811
    root = imported(tmp_path, cli)
    result = cli("verify", "--root", root, "--runner", "docker", "--json", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    verdict = json.loads(result.stdout)["tasks"][0]
    assert verdict["valid"] and verdict["states_checked"] == 2, verdict
    assert leftovers(docker_engine, TASK_ID) == ("", "")


def test_a_live_sidecar_has_no_host_mount_port_privilege_or_egress(tmp_path, cli, busybox_image,
                                                                   docker_engine):  # noqa: F811
    root = imported(tmp_path, cli)
    task = load_task(root / "tasks" / TASK_ID)
    settings = docker_settings(task)
    started = sidecars.start(task, settings, ImageCache(tmp_path / "logs"))
    try:
        name = started.containers[0]
        inspected = json.loads(docker_engine.docker("inspect", name).stdout)[0]
        host = inspected["HostConfig"]
        assert inspected["Mounts"] == [] and not host["Binds"], inspected["Mounts"]
        assert host["Privileged"] is False and not host["PortBindings"]
        added = {name.removeprefix("CAP_") for name in host["CapAdd"] or []}
        assert host["CapDrop"] == ["ALL"] and added == set(settings.capabilities) == {
            "CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID"}  # the task's, no SYS_ADMIN
        assert "no-new-privileges" in host["SecurityOpt"]
        assert host["DnsOptions"] == ["timeout:1", "attempts:2"]  # outside names fail fast
        assert list(inspected["NetworkSettings"]["Networks"]) == [started.network]
        network = json.loads(docker_engine.docker("network", "inspect", started.network).stdout)[0]
        assert network["Internal"] is True
        assert docker_engine.docker("exec", name, "ls", "/host", check=False).returncode != 0
    finally:
        sidecars.stop(started)
    assert leftovers(docker_engine, TASK_ID) == ("", "")


def broken_copy(tmp_path: Path, compose: str) -> Path:
    source = tmp_path / "source" / "web-sidecar"
    shutil.copytree(TASK, source)
    (source / "environment" / "docker-compose.yaml").write_text(compose)
    return source


@pytest.mark.parametrize("service, expected", [
    ("    command: [\"sh\", \"-c\", \"exec httpd -f -p 9999 -h /tmp\"]\n"
     "    healthcheck:\n      test: [\"CMD\", \"wget\", \"-q\", \"http://127.0.0.1:8080/\"]\n"
     "      interval: 100ms\n      retries: 3\n", "sidecar web is unhealthy"),
    ("    command: [\"sh\", \"-c\", \"echo going away; exit 3\"]\n", "sidecar web exited"),
])
def test_a_sidecar_that_is_not_up_is_an_infrastructure_outcome(tmp_path, cli, busybox_image,
                                                               docker_engine, service,
                                                               expected):  # noqa: F811
    source = broken_copy(tmp_path, "services:\n  web:\n    build: ./web\n" + service)
    root = imported(tmp_path, cli, source)
    result = cli("verify", "--root", root, "--runner", "docker", "--json", timeout=300)
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr, result.stdout + result.stderr[-2000:]
    assert leftovers(docker_engine, TASK_ID) == ("", "")


IMAGE_ONLY = (TASK / "environment" / "docker-compose.yaml").read_text().replace(
    "    build:\n      context: ./web\n", "    image: IMAGE\n")


def test_an_image_only_sidecar_runs_from_the_engine_s_image(tmp_path, cli, busybox_image,
                                                          docker_engine):  # noqa: F811
    source = broken_copy(tmp_path, IMAGE_ONLY.replace("IMAGE", busybox_image))
    root = imported(tmp_path, cli, source)
    [web] = json.loads((root / "tasks" / TASK_ID / "metadata.json").read_text())[
        "docker"]["services"]
    assert web["image"] == busybox_image and "build" not in web
    result = cli("verify", "--root", root, "--runner", "docker", "--json", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert json.loads(result.stdout)["tasks"][0]["states_checked"] == 2
    assert leftovers(docker_engine, TASK_ID) == ("", "")


def test_an_image_only_sidecar_that_cannot_be_pulled_is_named(tmp_path, cli, busybox_image,
                                                              docker_engine):  # noqa: F811
    # No registry is reachable here (as behind a firewall): the pull fails, the run says which
    # sidecar and which image, and what to do; nothing is left behind.
    source = broken_copy(tmp_path, IMAGE_ONLY.replace("IMAGE", "ci-eval-absent.invalid/web:1"))
    root = imported(tmp_path, cli, source)
    result = cli("verify", "--root", root, "--runner", "docker", "--json", timeout=300)
    assert result.returncode != 0
    said = result.stdout + result.stderr
    assert "sidecar web: image ci-eval-absent.invalid/web:1 is not in the engine and cannot " \
           "be pulled" in said, said[-2000:]
    assert "build or load it under that name first" in said
    assert leftovers(docker_engine, TASK_ID) == ("", "")


def test_the_cookbook_multi_container_recipe_verifies_as_imported(
        tmp_path, cli, docker_engine, ubuntu_stand_in, python_slim_stand_in):  # noqa: F811
    tools = harbor_tools.prepared()
    if tools is None:
        pytest.skip(f"the verifier's tools are not prepared at {harbor_tools.TOOLS} "
                    "(python3 tests/harbor_tools.py prepare; .ci/run does)")
    env = {"CI_EVAL_VERIFIER_TOOLS": str(tools)}
    root = imported(tmp_path, cli, MULTI_CONTAINER)
    task_id = "task-001-multi-container"
    [sidecar] = json.loads((root / "tasks" / task_id / "metadata.json").read_text())[
        "docker"]["services"]
    assert sidecar["name"] == "api-server"
    result = cli("verify", "--root", root, "--runner", "docker", "--json", env=env, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    verdict = json.loads(result.stdout)["tasks"][0]
    assert verdict["valid"] and verdict["states_checked"] == 2, verdict
    for agent, status in (("reference", "pass"), ("noop", "fail")):
        ran = cli("run", "--root", root, "--agent", agent, "-k", "1", "--fresh", task_id,
                  env=env, timeout=900)
        assert ran.returncode == 0, ran.stderr[-3000:]
        [record] = [json.loads(line) for line in
                    (root / "results" / f"{task_id}.jsonl").read_text().splitlines()]
        assert record["status"] == status, record["reason"]
        assert f"reward {1 if status == 'pass' else 0}" in record["reason"], record["reason"]
    assert leftovers(docker_engine, task_id) == ("", "")


def test_a_checks_timeout_removes_the_sidecars(tmp_path, cli, busybox_image,
                                               docker_engine):  # noqa: F811
    source = broken_copy(tmp_path, (TASK / "environment" / "docker-compose.yaml").read_text())
    toml = source / "task.toml"
    toml.write_text(toml.read_text().replace("[verifier]\ntimeout_sec = 120.0",
                                             "[verifier]\ntimeout_sec = 3.0"))
    (source / "tests" / "test.sh").write_text("#!/bin/sh\nsleep 60\n")
    root = imported(tmp_path, cli, source)
    result = cli("verify", "--root", root, "--runner", "docker", "--json", timeout=300)
    assert result.returncode != 0
    assert "timed out" in result.stdout + result.stderr, result.stdout + result.stderr[-2000:]
    assert leftovers(docker_engine, TASK_ID) == ("", "")


def test_a_run_stopped_by_sigint_leaves_no_sidecar(tmp_path, cli, busybox_image,
                                                   docker_engine):  # noqa: F811
    source = broken_copy(tmp_path, (TASK / "environment" / "docker-compose.yaml").read_text())
    (source / "tests" / "test.sh").write_text("#!/bin/sh\nsleep 120\n")
    root = imported(tmp_path, cli, source)
    proc = popen_interruptible([sys.executable, "-m", "ci_eval", "verify", "--root", str(root),
                                "--runner", "docker"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while leftovers(docker_engine, TASK_ID)[1] == "":  # the sidecars' network is up
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.5)
        time.sleep(3)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)  # the container is killed, not waited out (test.sh sleeps 120 s)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    assert leftovers(docker_engine, TASK_ID) == ("", "")
