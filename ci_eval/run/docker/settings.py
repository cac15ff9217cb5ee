"""A docker task's settings, read from metadata.json's `docker` object (validated by the
metadata schema; these are the defaults). Pure: no engine, no files read but the names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_eval.tasks.model import Task

DEFAULT_DOCKERFILE = "environment/Dockerfile"
DEFAULT_MOUNT = "/workspace"
DEFAULT_BUILD_TIMEOUT = 600.0
DEFAULT_CPUS = 1.0
DEFAULT_MEMORY_MB = 2048
DEFAULT_PIDS = 512
VERIFIERS = ("checks", "harbor")
WORKSPACES = ("repo-state", "image")


@dataclass(frozen=True)
class DockerSettings:
    dockerfile: str = DEFAULT_DOCKERFILE  # relative to the task folder; its folder is the context
    workspace: str = "repo-state"  # or "image": the image's WORKDIR contents, copied out
    mount: str | None = None  # where the workspace is mounted (default: /workspace, or WORKDIR)
    verifier: str = "checks"  # checks.py in the container, or "harbor": tests/test.sh + reward
    build_timeout: float = DEFAULT_BUILD_TIMEOUT
    cpus: float = DEFAULT_CPUS
    memory_mb: int = DEFAULT_MEMORY_MB
    pids: int = DEFAULT_PIDS
    user: str | None = None  # the user checks run as (default: the image's USER, else root)
    capabilities: tuple[str, ...] = ()  # given back after --cap-drop ALL (useradd, chown)
    agent_network: str = "default"  # or "none": an agent in the container (allow_internet)
    services: tuple[dict, ...] = ()  # sidecars (Harbor's compose services): sidecars.py
    context_folder: str | None = None  # the build context, when not the Dockerfile's folder

    def dockerfile_path(self, task: Task) -> Path:
        return task.path / self.dockerfile

    def context(self, task: Task) -> Path:
        if self.context_folder:
            return task.path / self.context_folder
        return self.dockerfile_path(task).parent

    def mount_point(self, image_workdir: str) -> str:
        if self.mount:
            return self.mount
        if self.workspace == "image" and image_workdir:
            return image_workdir
        return DEFAULT_MOUNT


def docker_settings(task: Task) -> DockerSettings:
    spec = task.metadata.get("docker") or {}
    return DockerSettings(
        dockerfile=spec.get("dockerfile", DEFAULT_DOCKERFILE),
        workspace=spec.get("workspace", "repo-state"),
        mount=spec.get("mount"),
        verifier=spec.get("verifier", "checks"),
        build_timeout=float(spec.get("build_timeout_seconds", DEFAULT_BUILD_TIMEOUT)),
        cpus=float(spec.get("cpus", DEFAULT_CPUS)),
        memory_mb=int(spec.get("memory_mb", DEFAULT_MEMORY_MB)),
        pids=int(spec.get("pids", DEFAULT_PIDS)),
        user=spec.get("user"),
        capabilities=tuple(spec.get("capabilities", ())),
        agent_network=spec.get("agent_network", "default"),
        services=tuple(spec.get("services", ())),
    )


def task_runner(task: Task) -> str | None:
    """The runner the task asks for in metadata.json (None: it does not say)."""
    return task.metadata.get("runner")
