"""Starting an agent on a workspace: environment, sandbox, timeout, usage; built-ins in-process.

The outcome's kind is what the runner branches on (DONE, TIMEOUT, INFRA); the reason is for
people. A sandbox failure is known from the sandbox's own status pipe, never from the agent's exit
code or output, which are the agent's (an agent printing "ci-eval sandbox: ..." and exiting 125
is an agent that exited 125).
"""

from __future__ import annotations

import dataclasses
import enum
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.agents.config import AgentConfig, visible_env
from ci_eval.agents.harness import WORKSPACE, Harness
from ci_eval.agents.presets import PRESETS
from ci_eval.output import (
    MIN_SECRET_CHARS,
    add_secrets,
    looks_secret,
    mask,
    masked,
)
from ci_eval.run.agent.api_proxy import ApiProxy, allowed_hosts, proxy_env, relay_argv
from ci_eval.run.agent.retry import RETRYABLE_INFRA
from ci_eval.run.agent.usage import joined, read_preset, read_usage
from ci_eval.run.sandbox import launcher
from ci_eval.run.sandbox.environment import allowed_env
from ci_eval.run.sandbox.home import OWN_HOME, agent_home
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.run.sandbox.process import Pipe, run_process
from ci_eval.run.sandbox.requests import agent_request
from ci_eval.run.sandbox.sandbox_program import FailureKind, read_failure
from ci_eval.run.sandbox.views import inside, kept_under, release_scratch, socket_folders
from ci_eval.run.workspace.build import WorkspaceError, apply_output
from ci_eval.run.workspace.harness_files import HARNESS_DIR_ENV, lay_home
from ci_eval.tasks.model import Task, archive_dir, tasks_dir
from ci_eval.tasks.upstream import agent_hidden_paths, pin_of

OUTPUT_CAP_BYTES = 1024 * 1024  # of the agent's output kept for reading usage and the log


class AgentKind(enum.Enum):
    DONE = "done"  # the agent ran and exited (whatever its exit code): the checks decide
    TIMEOUT = "timeout"  # ran out of time: a valid, failing run
    INFRA = "infra"  # it could not be run: command missing, sandbox failed, reference broken


@dataclass(frozen=True)
class AgentOutcome:
    kind: AgentKind
    seconds: float
    reason: str = ""
    exit_code: int | None = None
    usage: dict | None = None
    retryable: bool = True  # INFRA: whether another attempt may help
    backoff: bool = False  # INFRA: the provider said "not now" (rate limit, overload, network)
    outcome: dict = field(default_factory=dict)  # the tool's own outcome (subtype, turns, ...)
    output: str = ""  # the tail of what it printed, secrets masked


@dataclass(frozen=True)
class RunPaths:
    """One run's folders. run_dir is the agent's (bound writable into its sandbox: workspace,
    prompt copy, usage file); everything the harness must be able to trust lies beside it, in
    the folder of all runs that the agent cannot see."""

    run_dir: Path
    workspace: Path

    @property
    def prompt_file(self) -> Path:
        return self.run_dir / "prompt.md"

    @property
    def usage_file(self) -> Path:
        return self.run_dir / "usage.json"

    @property
    def home(self) -> Path:
        """The agent's own HOME (home: run), made by run/home.agent_home."""
        return self.run_dir / OWN_HOME

    def _beside(self, suffix: str) -> Path:
        return self.run_dir.parent / f"{self.run_dir.name}.{suffix}"

    @property
    def log_file(self) -> Path:
        return self._beside("agent.log")

    @property
    def checks_dir(self) -> Path:
        return self._beside("checks")

    @property
    def harness_dir(self) -> Path:
        """A read-only copy of the agent's harness (CI_EVAL_HARNESS_DIR), hidden but for it."""
        return self._beside("harness")

    @property
    def pristine(self) -> Path:
        return self._beside("pristine")

    def all_paths(self) -> tuple[Path, ...]:
        return (self.run_dir, self.log_file, self.checks_dir, self.pristine, self.harness_dir)


def agent_env(agent: AgentConfig, task: Task, run_no: int, paths: RunPaths) -> dict:
    """The allow-listed variables (the base list, a preset's key and setting variables, the
    agent's `env:`), a preset's fixed values and its gateway variables for `base_url:`, then the
    CI_EVAL_* variables (fixed values win)."""
    env = allowed_env(visible_env(agent))
    if agent.preset:
        env.update(PRESETS[agent.preset].env(agent.model))
        env.update(PRESETS[agent.preset].run_env(str(paths.run_dir)))
        if agent.base_url:  # ci-eval.yaml's base_url: wins over a variable let through
            env.update(PRESETS[agent.preset].gateway_env(agent.base_url, agent.model))
    env.update(
        CI_EVAL_PROMPT_FILE=str(paths.prompt_file),
        CI_EVAL_TASK_ID=task.id,
        CI_EVAL_RUN=str(run_no),
        CI_EVAL_WORKSPACE=str(paths.workspace),
        CI_EVAL_USAGE_FILE=str(paths.usage_file),
    )
    return env


# An argument naming one of these, as a path relative to the repo root, is a script to copy.
SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl")


def resolve_command(command: tuple[str, ...], repo_root: Path, paths: RunPaths, env: dict, *,
                    copy_scripts: bool = False, harness: Harness | None = None) -> list[str]:
    """The repo root is hidden from the agent, so the repo's files a command names are run
    from elsewhere: a file of the agent's harness from the harness's read-only copy
    (paths.harness_dir, its siblings beside it: `python3 agent/main.py` imports agent/helpers.py);
    any other file is copied alone next to the run: its program when that is a path and, with
    copy_scripts (argv commands, not bash scripts), each argument naming a script of the repo
    (`python3 agents/my_agent.py`) outside tasks/ and archive/, where the answers are."""
    argv = list(command)
    laid = {f.key for f in harness.placed(WORKSPACE)} if harness else set()
    for index, argument in enumerate(argv if copy_scripts else argv[:1]):
        if not os.path.isabs(argument) and os.path.normpath(argument) in laid:
            argv[index] = str(paths.harness_dir / os.path.normpath(argument))
    program = argv[0]
    if "/" in program:
        candidate = (Path(repo_root) / program).resolve()
        if not candidate.is_file():
            raise FileNotFoundError(program)
        argv[0] = _copied(candidate, repo_root, paths.run_dir / "agent-bin")
    elif shutil.which(program, path=env.get("PATH")) is None:
        raise FileNotFoundError(program)
    for index, argument in enumerate(argv[1:] if copy_scripts else (), 1):
        script = _repo_script(argument, repo_root)
        if script is not None:
            argv[index] = _copied(script, repo_root, paths.run_dir / "agent-bin" / str(index))
    return argv


def _repo_script(argument: str, repo_root: Path) -> Path | None:
    if (argument.startswith("-") or os.path.isabs(argument)
            or not argument.endswith(SCRIPT_SUFFIXES)):
        return None
    root = Path(repo_root).resolve()
    candidate = (root / argument).resolve()
    answers = (tasks_dir(root), archive_dir(root))
    if (not candidate.is_file() or not candidate.is_relative_to(root)
            or any(candidate.is_relative_to(folder) for folder in answers)):
        return None
    return candidate


def _copied(path: Path, repo_root: Path, folder: Path) -> str:
    """The path to run: a copy in folder when path is a file of the (hidden) repo."""
    if not path.is_relative_to(Path(repo_root).resolve()):
        return str(path)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, folder / path.name)
    return str(folder / path.name)


def secret_values(agent: AgentConfig, environ=os.environ) -> list[str]:
    """Values of the secrets the agent is given (a preset's key variables, and the names in its
    `env:` that look like secrets: *KEY*, *TOKEN*, *SECRET*, *PASSWORD*, *CREDENTIAL*, *AUTH*),
    masked in everything ci-eval writes (ci_eval/output.py, mask): an agent that prints its
    environment, or writes a key into a file of its diff, must not put it into the results,
    the logs, the progress lines or the PR comment."""
    names = [n for n in agent.env if looks_secret(n)]
    names += list(PRESETS[agent.preset].key_env) if agent.preset else []
    return [environ[n] for n in dict.fromkeys(names)
            if len(environ.get(n, "")) >= MIN_SECRET_CHARS]


def run_agent(agent: AgentConfig, task: Task, run_no: int, paths: RunPaths, *,
              repo_root: Path, runs_base: Path, timeout: float,
              isolation: Isolation, hide: tuple[Path, ...] = (),
              pricing: dict | None = None, harness: Harness | None = None) -> AgentOutcome:
    """Run the agent on paths.workspace. `hide`: more folders the sandboxed agent must not see,
    such as the run's results folder when it lies outside the repo root (`--out /tmp/x`).
    `harness`: its workspace files are in the workspace already (attempt.py); here its home
    entries go into the run's own HOME and its read-only copy (paths.harness_dir, laid by the
    caller when the harness has files) is shown to the agent as CI_EVAL_HARNESS_DIR."""
    if agent.builtin:
        return run_builtin(agent, task, paths)
    env = agent_env(agent, task, run_no, paths)
    env.update(agent_home(agent, paths.home))
    shown_harness: tuple[str, ...] = ()
    if harness is not None and harness.files:
        if agent.home == "run":
            lay_home(harness, paths.home)
        env[HARNESS_DIR_ENV] = str(paths.harness_dir)
        shown_harness = (str(paths.harness_dir.resolve()),)
    add_secrets(secret_values(agent))  # masked in everything written from now on
    preset = PRESETS[agent.preset] if agent.preset else None
    try:
        command = agent_command(agent, task, paths, env, repo_root=repo_root, harness=harness)
    except FileNotFoundError as exc:
        return AgentOutcome(AgentKind.INFRA, 0.0, f"agent command not found: {exc.args[0]}",
                            retryable=False)
    ran = run_sandboxed(agent, task, command, env, paths, repo_root=repo_root,
                        runs_base=runs_base, timeout=timeout, isolation=isolation, hide=hide,
                        shown_harness=shown_harness)
    if isinstance(ran, AgentOutcome):
        return ran
    result, failure = ran
    output = mask(result.output_tail, cut_start=True)
    if failure is not None:
        return AgentOutcome(AgentKind.INFRA, result.seconds, f"agent sandbox: {failure.message}",
                            retryable=failure.kind is not FailureKind.COMMAND_NOT_FOUND,
                            output=output)
    return outcome_of(agent, preset, result, output, paths, pricing=pricing, timeout=timeout)


def run_builtin(agent: AgentConfig, task: Task, paths: RunPaths) -> AgentOutcome:
    """noop changes nothing; reference applies the task's solution/."""
    if agent.builtin == "reference":
        try:
            apply_output(task.solution_dir, paths.workspace)
        except WorkspaceError as exc:
            return AgentOutcome(AgentKind.INFRA, 0.0, f"reference agent: {exc}", retryable=False)
    return AgentOutcome(AgentKind.DONE, 0.0)


def agent_command(agent: AgentConfig, task: Task, paths: RunPaths, env: dict, *,
                  repo_root: Path, harness: Harness | None) -> list[str]:
    """The argv to run: a preset's (its program on PATH), or the entry's command with the
    repo's files it names run from elsewhere (resolve_command); FileNotFoundError otherwise."""
    if not agent.preset:
        return resolve_command(agent.command or (), repo_root, paths, env,
                               copy_scripts=not agent.shell, harness=harness)
    preset = PRESETS[agent.preset]
    gateway = tuple(preset.gateway_args(agent.base_url)) if agent.base_url else ()
    command = preset.argv(task.prompt_path.read_text(encoding="utf-8", errors="replace"),
                          str(paths.prompt_file), str(paths.workspace),
                          str(paths.run_dir), agent.model, gateway + agent.args)
    if shutil.which(command[0], path=env.get("PATH")) is None:
        raise FileNotFoundError(command[0])
    return command


def run_sandboxed(agent: AgentConfig, task: Task, command, env: dict, paths: RunPaths, *,
                  repo_root: Path, runs_base: Path, timeout: float, isolation: Isolation,
                  hide: tuple[Path, ...], shown_harness: tuple[str, ...]):
    """The command in the agent's sandbox (behind the api-only relay for `network: api-only`):
    (its process result, the sandbox's failure or None), or an AgentOutcome when it cannot be
    run."""
    # Without a PID namespace, processes that left the agent's group are found by environment.
    sweep = None if isolation.agent_sandboxed else f"CI_EVAL_WORKSPACE={env['CI_EVAL_WORKSPACE']}"
    with Pipe() as status:
        sockets = socket_folders()  # whoever reaches an engine socket is root here
        request = agent_request(isolation, command, repo_root=repo_root,
                                runs_base=runs_base, run_dir=paths.run_dir,
                                hide=(*hide, *sockets, *upstream_hidden(task, paths.run_dir)),
                                home=env.get("HOME") if agent.home == "host" else None,
                                keep=(*kept_under(sockets), *shown_harness))
        proxy = None
        if network_mode(agent, task) == "api-only":
            if request is None:
                return AgentOutcome(AgentKind.INFRA, 0.0, "network: api-only needs the agent "
                                    "sandbox (namespaces), which this machine has not",
                                    retryable=False)
            proxy = ApiProxy(paths.run_dir, allowed_hosts(agent.preset, agent.base_url,
                                                          agent.allow_hosts))
            command = relay_argv(paths.run_dir, list(command))
            env.update(proxy_env())
            request = dataclasses.replace(request, argv=tuple(command), net=True,
                                          loopback=True)
        try:
            result = run_process(command, cwd=paths.workspace, env=env, timeout=timeout,
                                 sweep_env=sweep, tail_cap=OUTPUT_CAP_BYTES,
                                 pipes=(status,) if request else (),
                                 launch=(launcher.AGENTS, request) if request else None)
        finally:
            if proxy is not None:
                proxy.close()
            release_scratch(paths.run_dir)
        return result, read_failure(status.read(), result.launch_error)


def outcome_of(agent: AgentConfig, preset, result, output: str, paths: RunPaths, *,
               pricing: dict | None, timeout: float) -> AgentOutcome:
    """What a run that the sandbox ran says: its usage and outcome (a preset's output, or the
    usage file), an infrastructure error the tool reported, a timeout, its exit code."""
    if preset:
        usage, outcome, note, infra = read_preset(preset, agent, result.output_tail, result,
                                                  paths, pricing)
        note = mask(note)
        outcome = masked(outcome)
    else:
        outcome, infra = {}, None
        usage, note = read_usage(paths.usage_file) if agent.usage == "file" else (None, "")
    done = {"seconds": result.seconds, "exit_code": result.exit_code, "usage": usage,
            "outcome": outcome, "output": output}
    if infra is not None:
        return AgentOutcome(AgentKind.INFRA, reason=f"agent infrastructure error ({infra.kind}): "
                            f"{mask(infra.reason)}", retryable=infra.kind in RETRYABLE_INFRA,
                            backoff=infra.kind in RETRYABLE_INFRA, **done)
    if result.timed_out:
        return AgentOutcome(AgentKind.TIMEOUT, reason=joined(
            f"agent ran out of time ({timeout:g}s)", note), **done)
    reason = note
    if result.exit_code != 0:
        last = output.strip().splitlines()[-1:] or [""]
        reason = joined(f"agent exited {result.exit_code}" + (f" ({last[0][:200]})" if last[0]
                                                               else ""), note)
    return AgentOutcome(AgentKind.DONE, reason=reason, **done)


def network_mode(agent: AgentConfig, task: Task) -> str:
    """The agent's network: its entry's `network`, else api-only on a task pinned to an
    upstream commit (it could fetch the later fix) and the host's elsewhere."""
    if agent.network:
        return agent.network
    return "api-only" if pin_of(task.metadata) else "host"


def upstream_hidden(task, run_dir: Path) -> list[Path]:
    """The upstream cache and a file:// upstream (tasks/upstream.agent_hidden_paths), hidden
    from the agent unless hiding one would hide its own run folder."""
    run = os.path.realpath(run_dir)
    return [path for path in agent_hidden_paths(task.metadata)
            if not inside(run, [os.path.realpath(path)])]
