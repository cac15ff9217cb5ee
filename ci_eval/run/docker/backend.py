"""DockerRunner: the runner interface (ci_eval/run/runners.py) on a Docker engine.

Per task: its image (images.py), the workspace's starting files (repo-state/, or the image's
WORKDIR copied out once per image), outputs (solution/, negatives/) applied with their *.sh
run in a container of the image, the checks in a fresh container (containers.py: no network,
no capability, the task's limits), and the agent on the host (the local sandbox, engine
sockets hidden) or in a container (`placement: container`, or the reference agent of a task
whose solution is written for its container).
"""

from __future__ import annotations

import os
import secrets
import shutil
import threading
from pathlib import Path

import ci_eval
from ci_eval.errors import UserError
from ci_eval.output import UntrustedFile, read_capped_beneath
from ci_eval.run.agent.start import AgentKind, AgentOutcome, run_agent
from ci_eval.run.checks.scoring import REPORTS, CheckKind, CheckOutcome, checks_outcome
from ci_eval.run.docker import engine, harbor, sidecars
from ci_eval.run.docker.containers import ContainerSpec, Mount, run_argv, started_argvs
from ci_eval.run.docker.images import Image, ImageCache, ImageError, default_log_dir
from ci_eval.run.docker.settings import docker_settings
from ci_eval.run.docker.verifier_tools import TOOLS_MOUNT, tools_env, tools_folder
from ci_eval.run.sandbox.process import ProcessResult
from ci_eval.run.sandbox.requests import CHECKS_HIDDEN_PARTS
from ci_eval.run.workspace.build import WorkspaceError, apply_patch
from ci_eval.tasks.model import PATCH_SUFFIXES, Task
from ci_eval.tasks.upstream import UpstreamError, pin_of
from ci_eval.tasks.upstream import tree as upstream_tree

LIB_MOUNT = "/ci-eval/lib"  # ci-eval's own package, read-only
TASK_MOUNT = "/ci-eval/task"  # the task folder, read-only, solution/ and negatives/ masked
REPORTS_MOUNT = "/ci-eval/reports"
OUTPUT_MOUNT = "/ci-eval/output"  # a solve.sh being applied
AGENT_MOUNT = "/ci-eval/run"  # the agent's run folder (prompt copy, usage file)
ENTRY = "run/docker/container_checks_program.py"
OUTPUT_TIMEOUT = 600.0
SCRATCH = ("/tmp", "/var/tmp", "/run")  # writable (tmpfs) in a read-only checks container


class DockerRunner:
    name = "docker"

    def __init__(self, log_dir: Path, start_cache: Path | None = None):
        self.images = ImageCache(log_dir)
        self.start_cache = Path(start_cache or default_start_cache())
        self._starts: dict[str, Path] = {}
        self._lock = threading.Lock()
        self.tools: Path | None = None  # CI_EVAL_VERIFIER_TOOLS, read by prepare()
        self._sidecars: dict[str, sidecars.Sidecars] = {}  # by workspace, until its checks end

    # --- before anything runs -----------------------------------------------------------

    def prepare(self, tasks: list[Task], progress=None) -> None:
        """Build (or find) every task's image; UserError naming the task when one cannot be
        (no Dockerfile: before the engine is asked)."""
        for task in tasks:
            if not docker_settings(task).dockerfile_path(task).is_file():
                raise UserError(f"{task.id}: the docker runner needs a Dockerfile: "
                                f"{docker_settings(task).dockerfile_path(task)} is missing "
                                "(metadata.json docker.dockerfile, default environment/Dockerfile)",
                                path=task.path)
        if any(docker_settings(task).verifier == "harbor" for task in tasks):
            self.tools = tools_folder(os.environ)
        problem = engine.engine_problem()
        if problem:
            raise UserError(f"--runner docker: {problem}; {tasks[0].id} needs it", path=tasks[0].path)
        for task in tasks:
            try:
                image = self.image(task)
                self.repo_state(task)
                for service in docker_settings(task).services:
                    sidecars.service_image(task, docker_settings(task), service, self.images)
            except (ImageError, engine.EngineError) as exc:
                raise UserError(str(exc), path=task.path) from None
            if progress:
                progress(task, image)

    def image(self, task: Task) -> Image:
        return self.images.image(task, docker_settings(task))

    def repo_state(self, task: Task) -> Path:
        """The folder a workspace starts from: repo-state/, or the image's WORKDIR contents
        (copied out once per image id, kept in the cache folder for later invocations)."""
        settings = docker_settings(task)
        pin = pin_of(task.metadata)
        if pin and settings.workspace != "image":  # as the local runner: the commit's tree
            try:
                return upstream_tree(task.id, *pin)
            except UpstreamError as exc:
                raise WorkspaceError(str(exc)) from None
        if settings.workspace != "image":
            return task.repo_state
        image = self.image(task)
        with self._lock:
            found = self._starts.get(image.id)
            if found is None:
                found = self._copied_out(task, image)
                self._starts[image.id] = found
        return found

    def _copied_out(self, task: Task, image: Image) -> Path:
        folder = self.start_cache / image.id.split(":")[-1][:32]
        if folder.is_dir():
            os.utime(folder)
            return folder
        partial = self.start_cache / f".{folder.name}.{os.getpid()}.{secrets.token_hex(4)}"
        try:
            engine.copy_out(image.tag, image.workdir or "/", partial)
            os.rename(partial, folder)
        except engine.EngineError as exc:
            raise ImageError(f"{task.id}: cannot copy {image.workdir} out of "
                             f"{image.tag}: {exc}") from None
        except OSError:  # another invocation made it meanwhile
            if not folder.is_dir():
                raise
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        _prune(self.start_cache, keep=START_CACHE_ENTRIES)
        return folder

    # --- outputs, checks, agents --------------------------------------------------------

    def apply_output(self, task: Task, source: Path, workspace: Path) -> None:
        """A known output: patches applied on the host, solve scripts run in a container of the
        image (no network) with the workspace mounted; a folder of them in name order."""
        source = Path(source)
        if source.is_dir():
            entries = [p for p in sorted(source.iterdir()) if p.is_file()
                       and p.suffix in (*PATCH_SUFFIXES, ".sh")]
            if not entries:
                raise WorkspaceError(f"{source} holds no *.patch, *.diff or *.sh")
            for entry in entries:
                self.apply_output(task, entry, workspace)
        elif source.suffix in PATCH_SUFFIXES:
            apply_patch(source.resolve(), workspace)
        elif source.suffix == ".sh":
            finished = self._in_image(task, workspace, *self._script(task, source),
                                      timeout=OUTPUT_TIMEOUT, network="none",
                                      env=self._tools_env(task))
            if finished.engine_error or finished.timed_out or finished.exit_code != 0:
                self.stop_sidecars(workspace)  # no checks follow a failed output
            if finished.engine_error:
                raise WorkspaceError(f"{source.name}: {finished.engine_error}")
            if finished.timed_out or finished.exit_code != 0:
                how = "timed out" if finished.timed_out else f"exited {finished.exit_code}"
                raise WorkspaceError(f"{source.name} {how} in the container: "
                                     f"{finished.output_tail.strip()[-300:]}")
        else:
            raise WorkspaceError(f"{source}: expected a *.patch, *.diff or *.sh")

    def _script(self, task: Task, source: Path) -> tuple[tuple[str, ...], tuple[Mount, ...]]:
        """(argv, mounts) running an output script: a Harbor task's from /solution by its #!
        line, as Harbor runs solve.sh; any other task's with /bin/sh from OUTPUT_MOUNT."""
        folder = Mount(str(source.resolve().parent), OUTPUT_MOUNT, True)
        if docker_settings(task).verifier != "harbor":
            return ("/bin/sh", f"{OUTPUT_MOUNT}/{source.name}"), (folder,)
        argv = harbor.script_argv(_head(source), f"{harbor.SOLUTION_MOUNT}/{source.name}")
        return argv, (Mount(folder.source, harbor.SOLUTION_MOUNT, True), *self._tools_mount())

    def _tools_mount(self) -> tuple[Mount, ...]:
        """The verifier's tools (CI_EVAL_VERIFIER_TOOLS), for a Harbor task's scripts."""
        return (Mount(str(self.tools), TOOLS_MOUNT, True),) if self.tools else ()

    def _tools_env(self, task: Task) -> dict[str, str]:
        if not self.tools or docker_settings(task).verifier != "harbor":
            return {}
        return tools_env(self.tools, self.image(task).path)

    def checks(self, task: Task, workspace: Path, *, checks_dir: Path, runs_base: Path | None = None,
               extra_env: tuple[str, ...] = (), hide: tuple[Path, ...] = ()) -> CheckOutcome:
        """The task's checks in a fresh container: Harbor's test.sh and reward, or checks.py
        under the verdict rules of the local sandbox. The container sees none of the host's
        folders but the mounts, so runs_base and hide need no covering; `extra_env` names are
        not passed: the container's environment is the image's."""
        settings = docker_settings(task)
        checks_dir = Path(checks_dir)
        checks_dir.mkdir()
        try:
            if settings.verifier == "harbor":
                return self._harbor(task, Path(workspace), checks_dir)
            return self._checks_py(task, Path(workspace), checks_dir)
        finally:  # the checks are a run's last step: its sidecars go
            self.stop_sidecars(workspace)

    def _sidecar_network(self, task: Task, workspace: Path) -> str:
        """The private network of the workspace's sidecars, started on first use (one set per
        workspace: solve.sh or the agent, then test.sh see the same services)."""
        key = str(Path(workspace).resolve())
        with self._lock:
            found = self._sidecars.get(key)
        if found is None:
            found = sidecars.start(task, docker_settings(task), self.images)
            with self._lock:
                self._sidecars[key] = found
        return found.network

    def stop_sidecars(self, workspace: Path) -> None:
        with self._lock:
            found = self._sidecars.pop(str(Path(workspace).resolve()), None)
        if found is not None:
            sidecars.stop(found)

    def _harbor(self, task: Task, workspace: Path, checks_dir: Path) -> CheckOutcome:
        logs = checks_dir / "logs"
        (logs / "verifier").mkdir(parents=True)
        finished = self._in_image(task, workspace, harbor.test_argv(_head(task.path / "tests" /
                                                                        "test.sh")), (
            Mount(str((task.path / "tests").resolve()), harbor.TESTS_MOUNT, True),
            Mount(str(logs), harbor.LOGS_MOUNT), *self._tools_mount()),
            timeout=task.checks_timeout, network="none", env=self._tools_env(task), checks=True)
        early = _early(task, finished)
        if early is not None:
            return early
        files, notes = {}, []
        for name in (harbor.REWARD_TXT, harbor.REWARD_JSON):
            try:  # test.sh's code may have made verifier/ (or the file) a link to a host path
                files[name] = read_capped_beneath(logs, f"verifier/{name}",
                                                  harbor.REWARD_CAP_BYTES)
            except UntrustedFile as exc:
                notes.append(str(exc))
                files[name] = None
        reward, note = harbor.parse_reward(files[harbor.REWARD_TXT], files[harbor.REWARD_JSON])
        tail = " | ".join(finished.output_tail.strip().splitlines()[-3:])[-300:]
        reason = "; ".join([note, *notes] + ([f"test.sh: {tail}"] if tail else []))
        kind = CheckKind.PASS if harbor.passed(reward) else CheckKind.FAIL
        return CheckOutcome(kind, reason, finished.seconds)

    def _checks_py(self, task: Task, workspace: Path, checks_dir: Path) -> CheckOutcome:
        reports = checks_dir / REPORTS
        reports.mkdir()
        lib = Path(ci_eval.__file__).resolve().parent
        mount = self.mount_point(task)
        env = {"CI_EVAL_TASK_DIR": TASK_MOUNT, "CI_EVAL_WORKSPACE": mount,
               "CI_EVAL_REPORT_DIR": REPORTS_MOUNT, "PYTHONDONTWRITEBYTECODE": "1", "TZ": "UTC",
               "PYTHONPATH": LIB_MOUNT}  # for the pytest sessions the checks start
        finished = self._in_image(
            task, workspace, ("python3", "-I", f"{LIB_MOUNT}/ci_eval/{ENTRY}",
                              f"{TASK_MOUNT}/checks.py"),
            (Mount(str(lib), f"{LIB_MOUNT}/ci_eval", True),
             Mount(str(task.path.resolve()), TASK_MOUNT, True), Mount(str(reports), REPORTS_MOUNT)),
            timeout=task.checks_timeout, network="none", env=env, checks=True,
            tmpfs=tuple(f"{TASK_MOUNT}/{part}" for part in CHECKS_HIDDEN_PARTS
                        if (task.path / part).is_dir()), read_only=True)
        early = _early(task, finished)
        if early is not None:
            return early
        result = ProcessResult(finished.exit_code, finished.timed_out, finished.seconds,
                               finished.stderr.decode(errors="replace")[-4096:])
        verdict = finished.stdout.decode(errors="replace").strip()[:16]
        return checks_outcome(task, reports, result, verdict, "")

    def mount_point(self, task: Task) -> str:
        return docker_settings(task).mount_point(self.image(task).workdir)

    def _in_image(self, task: Task, workspace: Path, command, mounts, *, timeout: float,
                  network: str | None, env: dict | None = None, checks: bool = False,
                  tmpfs: tuple[str, ...] = (), read_only: bool = False) -> engine.Finished:
        settings = docker_settings(task)
        image = self.image(task)
        mount = settings.mount_point(image.workdir)
        name = f"ci-eval-{task.number:03d}-{secrets.token_hex(6)}"
        if settings.services:  # the sidecars' network: internal, no egress, for every step
            try:
                network = self._sidecar_network(task, workspace)
            except sidecars.SidecarError as exc:
                return engine.Finished(None, False, 0.0, b"", b"", str(exc))
        spec = ContainerSpec(image.tag, name, tuple(command), workdir=mount,
                             mounts=(Mount(str(Path(workspace).resolve()), mount), *mounts),
                             tmpfs=tmpfs, env=env or {}, network=network, settings=settings,
                             user=(settings.user or image.user or None) if checks else None,
                             labels={"ci-eval.task": task.id}, read_only=read_only,
                             scratch=SCRATCH if read_only else (),
                             keep_entrypoint=settings.verifier == "harbor" and image.entrypoint,
                             low_ports=settings.verifier == "harbor",
                             internal_network=bool(settings.services))
        if spec.keep_entrypoint:  # Harbor's order: the environment up, then the script in it
            return engine.run_in_started(*started_argvs(spec), name, timeout)
        return engine.run_container(run_argv(spec), name, timeout)

    def run_agent(self, agent, task: Task, run_no: int, paths, *, placement: str = "host",
                  **kwargs) -> AgentOutcome:
        """The reference agent applies solution/ as verify does (its solve.sh in the image);
        noop does nothing; other agents run on the host (the local sandbox, which hides the
        engine sockets from every agent) or in a container of the image (placement
        "container")."""
        if agent.builtin == "reference":
            try:
                self.apply_output(task, task.solution_dir, paths.workspace)
            except WorkspaceError as exc:
                return AgentOutcome(AgentKind.INFRA, 0.0, f"reference agent: {exc}",
                                    retryable=False)
            return AgentOutcome(AgentKind.DONE, 0.0)
        if agent.builtin or placement == "host":
            return run_agent(agent, task, run_no, paths, **kwargs)
        return self._agent_in_container(agent, task, run_no, paths, kwargs["timeout"])

    def _agent_in_container(self, agent, task, run_no, paths, timeout) -> AgentOutcome:
        from_env = agent_container_env(agent, task, run_no, self.mount_point(task))
        if agent.command is None:
            return AgentOutcome(AgentKind.INFRA, 0.0, "placement container needs an agent "
                                "`command` (a preset's CLI is started on the host)",
                                retryable=False)
        finished = self._in_image(task, paths.workspace, agent.command,
                                  (Mount(str(paths.run_dir.resolve()), AGENT_MOUNT),),
                                  timeout=timeout, network=agent_network(task), env=from_env)
        output = finished.output_tail
        if finished.engine_error:
            return AgentOutcome(AgentKind.INFRA, finished.seconds,
                                f"agent container: {finished.engine_error}", output=output)
        if finished.timed_out:
            return AgentOutcome(AgentKind.TIMEOUT, finished.seconds,
                                f"agent ran out of time ({timeout:g}s)", output=output)
        reason = "" if finished.exit_code == 0 else f"agent exited {finished.exit_code}"
        return AgentOutcome(AgentKind.DONE, finished.seconds, reason,
                            exit_code=finished.exit_code, output=output)


START_CACHE_ENTRIES = 20  # images whose WORKDIR contents are kept (the least recently used go)


def default_start_cache() -> Path:
    return default_log_dir().parent / "image-workspaces"


def _prune(folder: Path, *, keep: int) -> None:
    entries = sorted((p for p in folder.iterdir() if not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def agent_network(task: Task) -> str | None:
    """The --network of an agent's container: None (the engine's default) or "none"."""
    return "none" if docker_settings(task).agent_network == "none" else None


def agent_container_env(agent, task: Task, run_no: int, mount: str) -> dict:
    """The CI_EVAL_* variables as the container sees its paths, and the agent's allow-listed
    variables (its `env:`) from the harness's environment; nothing else."""
    env = {name: os.environ[name] for name in agent.env if name in os.environ}
    env.update(CI_EVAL_PROMPT_FILE=f"{AGENT_MOUNT}/prompt.md", CI_EVAL_TASK_ID=task.id,
               CI_EVAL_RUN=str(run_no), CI_EVAL_WORKSPACE=mount,
               CI_EVAL_USAGE_FILE=f"{AGENT_MOUNT}/usage.json")
    return env


def _head(script: Path) -> bytes:
    """The first bytes of a task author's script (its #! line); b"" when it cannot be read."""
    try:
        with open(script, "rb") as handle:
            return handle.read(harbor.SHEBANG_BYTES)
    except OSError:
        return b""


def _early(task: Task, finished: engine.Finished) -> CheckOutcome | None:
    """The outcomes that need no reading of what the checks said: the engine could not start
    the container (infrastructure), the timeout, the memory limit."""
    if finished.engine_error:
        return CheckOutcome(CheckKind.INFRA, f"checks container: {finished.engine_error}",
                            finished.seconds, retryable=True)
    if finished.timed_out:
        return CheckOutcome(CheckKind.TIMEOUT, f"checks timed out after {task.checks_timeout:g}s"
                            " (container removed)", finished.seconds)
    if finished.oom_killed:
        return CheckOutcome(CheckKind.NO_VERDICT, "checks killed by the memory limit "
                            f"({docker_settings(task).memory_mb} MB)", finished.seconds)
    return None
