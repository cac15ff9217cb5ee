"""The runner interface: where a task's workspace starts, how known outputs are applied, where
the checks and the agent run. Two backends behind it (seed 002's "local and docker backends
behind one interface"):

  local   today's path: repo-state/, the namespace sandboxes of run/sandbox/ (the default)
  docker  the task's image (ci_eval/run/docker/): checks in a fresh container, no network

Which one a task gets: `--runner` when given (every selected task), else the task's
metadata.json `runner`, else ci-eval.yaml `runner`, else local. A task whose verifier is
Harbor's (tests/test.sh) needs docker: asking for local is bad input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ci_eval.errors import UserError
from ci_eval.results.notices import ChecksIsolation, RecordedIsolation
from ci_eval.run.agent.start import AgentOutcome, run_agent
from ci_eval.run.checks.scoring import CheckOutcome, run_checks
from ci_eval.run.docker.backend import DockerRunner
from ci_eval.run.docker.images import default_log_dir, describe
from ci_eval.run.docker.settings import docker_settings, task_runner
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.run.workspace.build import WorkspaceError, apply_output
from ci_eval.tasks.model import Task
from ci_eval.tasks.upstream import UpstreamError, pin_of
from ci_eval.tasks.upstream import tree as upstream_tree

class Runner(Protocol):
    name: str

    def repo_state(self, task: Task) -> Path: ...

    def apply_output(self, task: Task, source: Path, workspace: Path) -> None: ...

    def checks(self, task: Task, workspace: Path, *, checks_dir: Path, runs_base: Path,
               extra_env: tuple[str, ...] = (), hide: tuple[Path, ...] = ()) -> CheckOutcome: ...

    def run_agent(self, agent, task: Task, run_no: int, paths, **kwargs) -> AgentOutcome: ...


@dataclass
class LocalRunner:
    isolation: Isolation
    name: str = "local"
    checks_host_home: bool = False  # checks.home: host in ci-eval.yaml (run/sandbox/home.py)

    def repo_state(self, task: Task) -> Path:
        pin = pin_of(task.metadata)
        if not pin:
            return task.repo_state
        try:
            return upstream_tree(task.id, *pin)
        except UpstreamError as exc:
            raise WorkspaceError(str(exc)) from None

    def apply_output(self, task: Task, source: Path, workspace: Path) -> None:
        apply_output(source, workspace)

    def checks(self, task: Task, workspace: Path, *, checks_dir: Path, runs_base: Path,
               extra_env: tuple[str, ...] = (), hide: tuple[Path, ...] = ()) -> CheckOutcome:
        return run_checks(task, workspace, self.isolation, extra_env, checks_dir=checks_dir,
                          runs_base=runs_base, hide=hide, host_home=self.checks_host_home)

    def run_agent(self, agent, task: Task, run_no: int, paths, *, placement: str = "host",
                  **kwargs) -> AgentOutcome:
        return run_agent(agent, task, run_no, paths, **kwargs)


def isolation_label(runner: Runner, isolation: Isolation, placement: str) -> str:
    """What a run's record says about its fences (results/notices.py reads it): the local
    sandboxes' label, or for the docker runner the agent's part (its sandbox on the host, or
    "agent-container") and "checks-docker" (a fresh container with no network)."""
    if runner.name != "docker":
        return isolation.label
    return RecordedIsolation(isolation.agent_sandboxed or placement == "container",
                             ChecksIsolation.DOCKER,
                             agent_in_container=placement == "container").label


@dataclass
class Runners:
    """The runner of each task of one invocation (the docker backend made when first needed)."""

    local: LocalRunner
    log_dir: Path  # where image build logs are kept
    chosen: str | None = None  # --runner
    default: str | None = None  # ci-eval.yaml runner
    _docker: DockerRunner | None = field(default=None, repr=False)

    def name_for(self, task: Task) -> str:
        name = self.chosen or task_runner(task) or self.default or "local"
        if name == "local" and docker_settings(task).verifier == "harbor":
            raise UserError(f"{task.id} is judged by Harbor's tests/test.sh in its container: "
                            "it needs the docker runner (got local)",
                            field="--runner" if self.chosen else "runner")
        return name

    def for_task(self, task: Task) -> Runner:
        return self.docker_runner() if self.name_for(task) == "docker" else self.local

    def docker_runner(self) -> DockerRunner:
        """The one docker runner of the invocation, made when first needed."""
        if self._docker is None:
            self._docker = DockerRunner(self.log_dir)
        return self._docker

    @classmethod
    def of(cls, isolation: Isolation, log_dir: Path | None, chosen: str | None,
           default: str | None, checks_host_home: bool = False) -> Runners:
        return cls(LocalRunner(isolation, checks_host_home=checks_host_home),
                   Path(log_dir or default_log_dir()), chosen, default)

    def prepare(self, tasks: list[Task], progress=None) -> None:
        """Every pinned commit fetched and every docker task's image built (once) before
        anything runs: a failure is bad input naming the task, exit 2, never a failed run."""
        for task in tasks:  # every pinned commit fetched up front: a failure is exit 2
            pin = pin_of(task.metadata)
            if pin:
                try:
                    upstream_tree(task.id, *pin)
                except UpstreamError as exc:
                    raise UserError(str(exc), path=task.metadata_path, field="repo") from None
        docker_tasks = [t for t in tasks if self.name_for(t) == "docker"]
        if docker_tasks:
            self.docker_runner().prepare(
                docker_tasks, lambda task, image: progress and progress(describe(task, image)))
