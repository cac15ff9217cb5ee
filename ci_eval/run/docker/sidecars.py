"""A task's sidecars (metadata.json docker.services, Harbor's docker-compose services) with plain
docker commands: a private `--internal` network (no egress, no host port), each service a
detached container on it reachable by its name, waited for (its healthcheck passing, else
running), and everything removed afterwards. The task's own containers join the network
(backend.py), so solve.sh, the agent's container and test.sh reach the same sidecars for one
workspace, as one Harbor trial does.

A sidecar gets what the task's container gets and nothing more: every capability dropped but
the task's own (docker.capabilities), no-new-privileges, the task's pids / memory / cpus, no
mount, no published port, no device. Its image is built from its context (the task author's,
as the task's Dockerfile) or must be in the engine (pulled if the engine can).
"""

from __future__ import annotations

import atexit
import secrets
import threading
import time
from dataclasses import dataclass, field, replace

from ci_eval.run.docker import engine
from ci_eval.run.docker.containers import dns_option_argv
from ci_eval.run.docker.images import ImageCache, ImageError
from ci_eval.run.docker.settings import DockerSettings
from ci_eval.run.sandbox import cancellation
from ci_eval.tasks.model import Task

EXEC_SLACK = 10.0  # seconds a `docker exec` of a healthcheck may take beyond its own timeout
LOG_TAIL_BYTES = 600
STARTED_SETTLE = 1.0  # seconds before a sidecar without a healthcheck must still be running


class SidecarError(Exception):
    """A sidecar could not be built, started or made healthy; the message names the service."""


@dataclass
class Sidecars:
    network: str
    containers: list[str] = field(default_factory=list)


def service_argv(service: dict, image: str, name: str, network: str,
                 settings: DockerSettings, labels: dict[str, str]) -> list[str]:
    """The `docker run --detach` argv of one sidecar (after `docker`); pure."""
    argv = ["run", "--detach", "--name", name, "--network", network,
            "--network-alias", service["name"], *dns_option_argv(), "--cap-drop", "ALL",
            "--security-opt", "no-new-privileges", "--pids-limit", str(settings.pids),
            "--memory", f"{settings.memory_mb}m", "--memory-swap", f"{settings.memory_mb}m",
            "--cpus", f"{settings.cpus:g}"]
    for capability in settings.capabilities:
        argv += ["--cap-add", capability]
    for key, value in sorted(labels.items()):
        argv += ["--label", f"{key}={value}"]
    for key, value in sorted(service.get("environment", {}).items()):
        argv += ["--env", f"{key}={value}"]
    command = list(service.get("command", []))
    entrypoint = service.get("entrypoint")
    if entrypoint:
        return [*argv, "--entrypoint", entrypoint[0], image, *entrypoint[1:], *command]
    return [*argv, image, *command]


def health_argv(name: str, service: dict) -> list[str]:
    return ["exec", name, *service["healthcheck"]["test"]]


def service_image(task: Task, settings: DockerSettings, service: dict,
                  images: ImageCache) -> str:
    """The tag of a sidecar's image: built from its context (cached as the task's image is),
    or the named image, pulled when the engine does not hold it."""
    build = service.get("build")
    if build:
        own = replace(settings, dockerfile=f"{build['context']}/{build['dockerfile']}",
                      context_folder=build["context"], services=())
        return images.image(task, own, part=service["name"]).tag
    tag = service["image"]
    if engine.image_config(tag) is None:
        pulled = engine.docker("pull", tag, check=False, timeout=settings.build_timeout)
        if pulled.returncode != 0:
            raise ImageError(f"{task.id}: sidecar {service['name']}: image {tag} is not in the "
                             f"engine and cannot be pulled ({engine.last_line(pulled.stderr)}); "
                             "build or load it under that name first")
    return tag


def start(task: Task, settings: DockerSettings, images: ImageCache) -> Sidecars:
    """The network and every sidecar, up (healthy where a healthcheck says); SidecarError (all
    removed) when one is not."""
    try:
        tags = [service_image(task, settings, service, images) for service in settings.services]
    except (ImageError, engine.EngineError) as exc:
        raise SidecarError(str(exc)) from None
    token = secrets.token_hex(6)
    labels = {"ci-eval.task": task.id, "ci-eval.sidecars": token}
    sidecars = Sidecars(f"ci-eval-net-{task.number:03d}-{token}")
    _live.add(sidecars)
    try:
        engine.docker("network", "create", "--internal", "--label", f"ci-eval.task={task.id}",
                      sidecars.network, timeout=60)
        for service, tag in zip(settings.services, tags):
            name = f"ci-eval-{task.number:03d}-{service['name']}-{token}"[:120]
            sidecars.containers.append(name)
            started = engine.docker(*service_argv(service, tag, name, sidecars.network, settings,
                                                  labels), check=False, timeout=120)
            if started.returncode != 0:
                raise SidecarError(f"sidecar {service['name']} did not start: "
                                   f"{engine.last_line(started.stderr)}")
        for service, name in zip(settings.services, sidecars.containers):
            _wait(service, name)
    except (SidecarError, engine.EngineError) as exc:
        stop(sidecars)
        raise SidecarError(str(exc)) from None
    except BaseException:
        stop(sidecars)
        raise
    return sidecars


def _wait(service: dict, name: str) -> None:
    """Compose's wait: the healthcheck run every interval until it passes; failures in the
    start period do not count, `retries` counted failures make the service unhealthy. Without
    a healthcheck the container must be running."""
    check = service.get("healthcheck")
    if not check:
        time.sleep(STARTED_SETTLE)  # one that exits at once is named here, not by test.sh
        _running(service, name)
        return
    began = time.monotonic()
    failures = 0
    while True:
        cancellation.raise_if_cancelled()
        _running(service, name)
        try:
            attempt = engine.docker(*health_argv(name, service), check=False,
                                    timeout=check["timeout_seconds"] + EXEC_SLACK)
            if attempt.returncode == 0:
                return
            said = engine.last_line(attempt.stdout + attempt.stderr)
        except engine.EngineError as exc:  # the check hung: a failed attempt, as compose counts it
            said = str(exc)
        if time.monotonic() - began >= check["start_period_seconds"]:
            failures += 1
        if failures >= check["retries"]:
            raise SidecarError(f"sidecar {service['name']} is unhealthy: its healthcheck failed "
                               f"{failures} times ({said or 'no output'}){_logs(name)}")
        time.sleep(max(0.1, check["interval_seconds"]))


def _running(service: dict, name: str) -> None:
    state = engine.docker("inspect", "--type", "container", "--format",
                          "{{.State.Running}} {{.State.ExitCode}}", name, check=False)
    words = state.stdout.decode(errors="replace").split()
    if not words or words[0] != "true":
        code = words[1] if len(words) > 1 else "?"
        raise SidecarError(f"sidecar {service['name']} exited (code {code}){_logs(name)}")


def _logs(name: str) -> str:
    said = engine.docker("logs", "--tail", "5", name, check=False)
    text = " | ".join(line.strip() for line in (said.stdout + said.stderr).decode(
        errors="replace").splitlines() if line.strip())[-LOG_TAIL_BYTES:]
    return f": {text}" if text else ""


def stop(sidecars: Sidecars) -> None:
    """Every sidecar container and the network removed (errors ignored: best effort)."""
    for name in sidecars.containers:
        engine.remove_container(name)
    try:
        engine.docker("network", "rm", sidecars.network, check=False, timeout=60)
    except engine.EngineError:
        pass
    _live.discard(sidecars)


class _Live:
    """The sidecars not yet removed: removed at exit (a run stopped by Ctrl-C or SIGTERM)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._items: dict[int, Sidecars] = {}

    def add(self, sidecars: Sidecars) -> None:
        with self._lock:
            self._items[id(sidecars)] = sidecars

    def discard(self, sidecars: Sidecars) -> None:
        with self._lock:
            self._items.pop(id(sidecars), None)

    def remove_all(self) -> None:
        with self._lock:
            left = list(self._items.values())
        for sidecars in left:
            stop(sidecars)


_live = _Live()
atexit.register(_live.remove_all)
