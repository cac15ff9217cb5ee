"""Starting an agent on a workspace: environment, sandbox, timeout, usage; built-ins in-process.

The outcome's kind is what the runner branches on (DONE, TIMEOUT, INFRA); the reason is for
people. A sandbox failure is known from the sandbox's own status pipe, never from the agent's exit
code or output, which are the agent's (an agent printing "ci-eval sandbox: ..." and exiting 125
is an agent that exited 125).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval import strict_json
from ci_eval.agents.config import AgentConfig, env_problem, visible_env
from ci_eval.agents.harness import WORKSPACE, Harness
from ci_eval.agents.presets import PRESETS
from ci_eval.agents.pricing import cost_from_pricing
from ci_eval.output import (
    MIN_SECRET_CHARS,
    UntrustedFile,
    add_secrets,
    looks_secret,
    mask,
    masked,
    read_capped,
)
from ci_eval.results.records import USAGE_FIELDS, number_problem
from ci_eval.run.agent.api_proxy import ApiProxy, allowed_hosts, proxy_env, relay_argv
from ci_eval.run.agent.retry import RETRYABLE_INFRA
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

USAGE_CAP_BYTES = 64 * 1024
OUTPUT_CAP_BYTES = 1024 * 1024  # of the agent's output kept for reading usage and the log
OUTPUT_FILE_CAP_BYTES = 16 * 1024 * 1024  # a preset's output file (a trajectory)


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


def read_usage(path: Path) -> tuple[dict | None, str]:
    """Usage the agent reported, or None when it reported none (never a made-up 0). The file is
    the agent's: read without following links or blocking, capped, parsed with limits; anything
    wrong with it is a note, never a crash."""
    try:
        data = read_capped(path, USAGE_CAP_BYTES)
    except UntrustedFile as exc:
        return None, f"usage file ignored: {exc}"
    if data is None:
        return None, ""
    try:
        parsed = strict_json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"usage file is not valid JSON (ignored: {' '.join(str(exc).split())[:100]})"
    if not isinstance(parsed, dict):
        return None, "usage file is not a JSON object (ignored)"
    usage, ignored = {}, []
    for name in USAGE_FIELDS:
        value = parsed.get(name)
        if name != "cost_usd" and isinstance(value, float) and value.is_integer():
            value = int(value)  # 1200.0 tokens is 1200
        if number_problem(name, value):  # what results.check_record would refuse to read back
            ignored.append(f"{name} {json.dumps(value)[:40]}")
            value = None
        usage[name] = value
    if usage["tokens"] is None and usage["input_tokens"] is not None and usage["output_tokens"] is not None:
        usage["tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return usage, f"usage file: ignored {', '.join(ignored)}" if ignored else ""


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


def agent_problem(agent: AgentConfig, repo_root: Path,
                  environ: Mapping[str, str] = os.environ) -> str | None:
    """Before any run (preflight): why the agent cannot start here, or None. Built-ins always
    can: the program resolves and is executable (a preset's tool on PATH, a command's program on
    PATH or, for a path, in the repo), every variable its `env:` lists is set, and a preset has
    one of its key variables."""
    if agent.builtin:
        return None
    problem = env_problem(agent, environ)
    if problem:
        return problem
    program = agent.program
    if program is None:  # a command string that starts with shell syntax: bash decides
        return None
    path = allowed_env(()).get("PATH", os.defpath)
    if "/" in program:
        candidate = (Path(repo_root) / program)
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            return f"agent {agent.name}: {program} is not an executable file"
        return None
    if shutil.which(program, path=path) is None:
        what = f"the {agent.preset} preset's program" if agent.preset else "its command"
        return f"agent {agent.name}: {what} {program!r} is not on PATH"
    return None


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
    if agent.builtin == "noop":
        return AgentOutcome(AgentKind.DONE, 0.0)
    if agent.builtin == "reference":
        try:
            apply_output(task.solution_dir, paths.workspace)
        except WorkspaceError as exc:
            return AgentOutcome(AgentKind.INFRA, 0.0, f"reference agent: {exc}", retryable=False)
        return AgentOutcome(AgentKind.DONE, 0.0)

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
        if preset:
            gateway = tuple(preset.gateway_args(agent.base_url)) if agent.base_url else ()
            command = preset.argv(task.prompt_path.read_text(encoding="utf-8", errors="replace"),
                                  str(paths.prompt_file), str(paths.workspace),
                                  str(paths.run_dir), agent.model, gateway + agent.args)
            if shutil.which(command[0], path=env.get("PATH")) is None:
                raise FileNotFoundError(command[0])
        else:
            command = resolve_command(agent.command, repo_root, paths, env,
                                      copy_scripts=not agent.shell, harness=harness)
    except FileNotFoundError as exc:
        return AgentOutcome(AgentKind.INFRA, 0.0, f"agent command not found: {exc.args[0]}",
                            retryable=False)
    # Without a PID namespace, processes that left the agent's group are found by environment.
    sweep = None if isolation.agent_sandboxed else f"CI_EVAL_WORKSPACE={env['CI_EVAL_WORKSPACE']}"
    with Pipe() as status:
        sockets = socket_folders()  # whoever reaches an engine socket is root here
        request = agent_request(isolation, command, repo_root=repo_root,
                                              runs_base=runs_base, run_dir=paths.run_dir,
                                              hide=(*hide, *sockets,
                                                    *upstream_hidden(task, paths.run_dir)),
                                              home=env.get("HOME")
                                              if agent.home == "host" else None,
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
        failure = read_failure(status.read(), result.launch_error)
    output = mask(result.output_tail, cut_start=True)
    if failure is not None:
        return AgentOutcome(AgentKind.INFRA, result.seconds, f"agent sandbox: {failure.message}",
                            retryable=failure.kind is not FailureKind.COMMAND_NOT_FOUND,
                            output=output)
    if preset:
        usage, outcome, note, infra = _read_preset(preset, agent, result.output_tail, result,
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


def _read_preset(preset, agent, output, result, paths, pricing):
    """(usage, the tool's outcome fields, a note, an infra error) from a preset tool's output
    and the files it was told to write (read capped, never through a link)."""
    files, notes = {}, []
    for key, path in preset.output_files(str(paths.run_dir)).items():
        try:
            data = read_capped(path, OUTPUT_FILE_CAP_BYTES)
        except UntrustedFile as exc:
            notes.append(str(exc))
            continue
        if data is not None:
            files[key] = data.decode("utf-8", errors="replace")
    report = preset.parse(output, None if result.timed_out else result.exit_code, files)
    report = cost_from_pricing(report, agent.model, pricing or {})
    outcome = {k: v for k, v in list(report.outcome.items())[:20]
               if isinstance(v, (str, int, float, bool)) or v is None}
    return report.usage(), outcome, joined(*notes, report.note), report.infra_error


def joined(*parts: str) -> str:
    """The non-empty parts, "; "-separated (a run's reason from its notes)."""
    return "; ".join(p for p in parts if p)


def upstream_hidden(task, run_dir: Path) -> list[Path]:
    """The upstream cache and a file:// upstream (tasks/upstream.agent_hidden_paths), hidden
    from the agent unless hiding one would hide its own run folder."""
    run = os.path.realpath(run_dir)
    return [path for path in agent_hidden_paths(task.metadata)
            if not inside(run, [os.path.realpath(path)])]
