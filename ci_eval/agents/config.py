"""ci-eval.yaml: named agents (a command or a preset), budgets, prices, the checks' environment.

Format (every key optional; a missing file means no named agents):

    default_agent: claude            # used when no --agent is given (none: --agent is required)
    agents:
      claude:                        # name: letters, digits, ".", "_", "-"; not a built-in
        preset: claude-code          # one of the presets (agents/presets.py), or instead:
        # command: ./agents/claude.sh --max-turns 30   # a string runs as `bash -c STRING`,
        #                                              # a list runs as argv
        model: claude-sonnet-4-5     # presets only: the model the tool is told to use
        args: [--max-turns, "30"]    # presets only: extra arguments for the tool
        base_url: http://gw:8080     # presets only: a gateway for the model API, set in the
                                     # tool's own way (ANTHROPIC_BASE_URL, codex -c ...)
        timeout_seconds: 900         # 0 < number <= 86400; overrides the task's agent timeout
        env: [ANTHROPIC_BASE_URL]    # variables let through to the agent (besides PATH, HOME...
                                     # and, for a preset, its key and setting variables)
        usage: file                  # commands only. "file": agent may write CI_EVAL_USAGE_FILE
                                     # (default); "none": it never does
        home: run                    # "run" (default): a fresh, empty HOME of its own per run
                                     # (a preset's login file copied in), the host's hidden;
                                     # "host": the harness user's HOME (readable, writes discarded)
    budget:                          # limits for one invocation (see budget.py)
      max_cost_usd: 20
      max_cost_usd_per_run: 2
      max_runs: 50
    pricing:                         # USD per million tokens, for tools that report no cost
      gpt-5-codex: {input: 1.25, cached_input: 0.125, output: 10}
    checks:
      env: [MY_TOOL_HOME]            # variables let through to checks.py
      home: run                      # as for agents: "run" (default) or "host"
    failure_logs: .ci-eval/failure-logs   # folder of failure logs (`ci-eval new-task`), relative
                                          # to the repo root; this is the default
    runner: local                    # local | docker: where tasks run when neither --runner nor
                                     # the task's metadata.json says (docs/docker.md)
    gate:                            # the gate's parameters (verdict/rules.py; docs/gate.md)
      regression_threshold: 0.30
      min_baseline_rate: 0.60
      cost: {max_increase: 0.5, fail: false}      # also tokens:, wall:

An agent entry may also say `placement: host | container` (docker runner only; default host):
host runs it in the local sandbox, container runs its command in a container of the task's
image with the workspace mounted (docs/docker.md).

A `command` string is a bash script (`bash -c`, as a workflow `run:` step): $VARS such as
$CI_EVAL_PROMPT_FILE, pipes and redirections work; it runs in the workspace. A string without
any shell syntax (`./agents/claude.sh --max-turns 30`) means the same run directly, so it is
kept as argv, and its relative program path stays relative to the repo root (shell.plain_argv).
A list is argv, no shell. AgentConfig.command is what to execute either way (("bash", "-c",
STRING) for a script; `shell` and `script` say which). `--agent-cmd` is a string.

A preset needs no entry: `--agent codex` uses the codex preset with the tool's default model.
An entry may carry a preset's own name (`codex: {preset: codex, model: o3}`); entries win over
presets. Identity (what results and the baseline record): the agent's name, and for a preset
agent with a model "NAME:MODEL" (claude:claude-sonnet-4-5), so a baseline taken with one model
is never compared with another; `args` do not change the identity.

Rules: unknown keys are errors at every level (they are typos more often than not); duplicate keys
are errors; an agent may not be named after a built-in (reference, noop); `command` and `preset`
exclude each other. Every error is one line naming the file and the field path, e.g.
`ci-eval.yaml: agents.claude.timeout_seconds: expected a positive number, got "ten"`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval.agents.budget import Budget, parse_budget
from ci_eval.agents.gate_config import parse_gate
from ci_eval.agents.presets import PRESETS, did_you_mean
from ci_eval.agents.pricing import ModelPrice, parse_pricing
from ci_eval.agents.shell import first_program
from ci_eval.agents.values import (
    argument_list,
    base_url,
    check_keys,
    command_value,
    env_names,
    got,
    model_name,
    positive_number,
    string_command,
)
from ci_eval.errors import UserError
from ci_eval.strict_yaml import read_yaml
from ci_eval.tasks.model import MAX_TIMEOUT_SECONDS
from ci_eval.verdict.rules import DEFAULT_RULES, GateRules

CONFIG_FILE = "ci-eval.yaml"
CONFIG_NAMES = (CONFIG_FILE, "ci-eval.yml", ".ci-eval.yaml", ".ci-eval.yml")  # found, never ignored
BUILTIN_AGENTS = ("reference", "noop")
# Always passed to agents and checks; everything else must be allow-listed by name.
BASE_ENV_ALLOWLIST = ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "SHELL")
TOP_LEVEL_KEYS = ("agents", "default_agent", "checks", "budget", "pricing", "failure_logs",
                  "runner", "gate")
RUNNER_NAMES = ("local", "docker")
PLACEMENTS = ("host", "container")
DEFAULT_FAILURE_LOGS = ".ci-eval/failure-logs"
AGENT_KEYS = ("command", "preset", "model", "args", "base_url", "timeout_seconds", "env",
              "usage", "placement", "home", "network", "allow_hosts")
CHECKS_KEYS = ("env", "home")
USAGE_MODES = ("file", "none")
HOME_MODES = ("run", "host")  # a HOME of its own per run (the default), or the host's
NETWORK_MODES = ("host", "api-only")  # run/api_proxy.py; default: api-only on pinned tasks
AGENT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class AgentConfig:
    name: str
    command: tuple[str, ...] | None  # what to execute; None for built-ins and presets
    timeout_seconds: float | None = None  # None: the task's own agent timeout
    env: tuple[str, ...] = ()  # extra variable names the agent may see (e.g. secrets)
    builtin: str | None = None  # "reference" | "noop"
    usage: str = "file"  # "file": read CI_EVAL_USAGE_FILE if the agent wrote it; "none": don't
    preset: str | None = None  # a name in PRESETS
    model: str | None = None  # presets: passed to the tool
    args: tuple[str, ...] = ()  # presets: extra arguments for the tool
    base_url: str | None = None  # presets: a gateway / proxy for the model API (its URL)
    shell: bool = False  # command is ("bash", "-c", script): a command string
    placement: str = "host"  # docker runner: "host" (local sandbox) or "container" (the image)
    home: str = "run"  # one of HOME_MODES
    network: str | None = None  # one of NETWORK_MODES; None: api-only for pinned-commit tasks
    allow_hosts: tuple[str, ...] = ()  # api-only: hosts (host or host:port) besides the API's

    @property
    def identity(self) -> str:
        """What results and the baseline record as the agent that produced them."""
        if self.preset and self.model:
            return f"{self.name}:{self.model}"
        return self.name

    @property
    def script(self) -> str | None:
        """The bash script of a command string."""
        return self.command[2] if self.shell and self.command else None

    @property
    def program(self) -> str | None:
        """What preflight should find executable: the preset's program, a list command's argv[0],
        or the program a command string starts with (None when that is not a plain word)."""
        if self.preset:
            return PRESETS[self.preset].program
        if self.shell:
            return first_program(self.script or "")
        return self.command[0] if self.command else None


@dataclass(frozen=True)
class Config:
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    default_agent: str | None = None
    checks_env: tuple[str, ...] = ()
    checks_home: str = "run"  # one of HOME_MODES
    budget: Budget = field(default_factory=Budget)
    pricing: dict[str, ModelPrice] = field(default_factory=dict)
    failure_logs: str = DEFAULT_FAILURE_LOGS  # relative to the repo root (or absolute)
    runner: str | None = None  # the default runner (None: local)
    gate: GateRules = DEFAULT_RULES


def builtin_agent(name: str) -> AgentConfig:
    return AgentConfig(name=name, command=None, builtin=name)


def preset_agent(name: str) -> AgentConfig:
    """A preset used by name, with no configuration."""
    return AgentConfig(name=name, command=None, preset=name)


def inline_agent(command: str) -> AgentConfig:
    """--agent-cmd: a command string (bash, or directly when it has no shell syntax)."""
    argv, shell = string_command(command, None, "--agent-cmd")
    return AgentConfig(name=f"cmd:{command}", command=argv, shell=shell)


def visible_env(agent: AgentConfig) -> tuple[str, ...]:
    """Names of the variables the agent may see (those that are set are passed through)."""
    names = [*BASE_ENV_ALLOWLIST]
    if agent.preset:
        preset = PRESETS[agent.preset]
        names += [*preset.key_env, *preset.pass_env]
    names += agent.env
    return tuple(dict.fromkeys(names))


def env_problem(agent: AgentConfig, environ: Mapping[str, str]) -> str | None:
    """Why the agent cannot start in this environment (preflight, before any run), or None:
    every name in its `env:` must be set, and a preset needs one of its key variables."""
    for name in agent.env:
        if not environ.get(name):
            return f"agent {agent.name}: environment variable {name} is not set (listed in its env)"
    if agent.preset:
        preset = PRESETS[agent.preset]
        if any(environ.get(name) for name in preset.key_env):
            return None
        login = preset.login_path(environ)
        if login is not None and os.path.isfile(login):
            return None  # the tool's own login file: copied into the agent's HOME (run/home.py)
        logged_in = f", or log in with {preset.program} (no {login})" if login else ""
        return (f"agent {agent.name} ({agent.preset}): {preset.key_env[0]} is not set "
                f"(set one of {', '.join(preset.key_env)}{logged_in})")
    return None


def config_path(root: Path) -> Path | None:
    """The repo's config file under any of CONFIG_NAMES; UserError when two are there (which
    one would win is a guess); None when there is none."""
    found = [Path(root) / name for name in CONFIG_NAMES
             if (Path(root) / name).exists() or (Path(root) / name).is_symlink()]
    if len(found) > 1:
        raise UserError(f"{' and '.join(p.name for p in found)} both exist; keep one "
                        f"({CONFIG_FILE})", path=found[1])
    return found[0] if found else None


def load_config(root: Path) -> Config:
    """Parse root/ci-eval.yaml (Config() if absent). UserError naming file + field on bad input."""
    path = config_path(root)
    if path is None:
        return Config()
    return parse_config(read_yaml(path), path)


def parse_config(data: Any, path: Path | str = CONFIG_FILE) -> Config:
    """Validate already-parsed YAML data (a dict or None) into a Config."""
    if data is None:
        return Config()
    if not isinstance(data, dict):
        raise UserError(f"expected a mapping at the top level, got {got(data)}", path=path)
    check_keys(data, TOP_LEVEL_KEYS, path, prefix="")

    agents: dict[str, AgentConfig] = {}
    raw_agents = data.get("agents")
    if raw_agents is not None and not isinstance(raw_agents, dict):
        raise UserError(
            f"expected a mapping of agent names to settings, got {got(raw_agents)}",
            path=path,
            field="agents",
        )
    for name, spec in (raw_agents or {}).items():
        agents[name] = _parse_agent(name, spec, path)

    default = data.get("default_agent")
    if default is not None:
        if not isinstance(default, str) or not default:
            raise UserError(
                f"expected an agent name, got {got(default)}", path=path, field="default_agent"
            )
        if default not in agents and default not in BUILTIN_AGENTS and default not in PRESETS:
            raise UserError(_unknown_agent(default, agents), path=path, field="default_agent")

    checks_env: tuple[str, ...] = ()
    checks_home = "run"
    checks = data.get("checks")
    if checks is not None:
        if not isinstance(checks, dict):
            raise UserError(f"expected a mapping, got {got(checks)}", path=path, field="checks")
        check_keys(checks, CHECKS_KEYS, path, prefix="checks.")
        checks_env = env_names(checks.get("env"), path, "checks.env")
        checks_home = _home(checks, path, "checks")
    failure_logs = data.get("failure_logs", DEFAULT_FAILURE_LOGS)
    if not isinstance(failure_logs, str) or not failure_logs.strip():
        raise UserError(f"expected a folder path, got {got(failure_logs)}", path=path,
                        field="failure_logs")
    runner = data.get("runner")
    if runner is not None and runner not in RUNNER_NAMES:
        raise UserError(f"expected one of {', '.join(RUNNER_NAMES)}, got {got(runner)}",
                        path=path, field="runner")
    return Config(agents=agents, default_agent=default, checks_env=checks_env,
                  checks_home=checks_home,
                  budget=parse_budget(data.get("budget"), path),
                  pricing=parse_pricing(data.get("pricing"), path), failure_logs=failure_logs,
                  runner=runner, gate=parse_gate(data.get("gate"), path))


def resolve_agent(config: Config, name: str | None, command: str | None) -> AgentConfig:
    """The agent to run: --agent-cmd, else --agent / default_agent, looked up in ci-eval.yaml,
    then the built-ins, then the presets. None of them: UserError (never a silent fallback to
    the reference agent, which would pass every task with its own solution)."""
    if command:
        return inline_agent(command)
    name = name or config.default_agent
    if not name:
        raise UserError(
            "no agent to run: name one with --agent NAME (a preset: "
            f"{', '.join(sorted(PRESETS))}; reference applies each task's solution, noop changes "
            "nothing), give a command with --agent-cmd CMD, or set default_agent in ci-eval.yaml",
            field="--agent")
    if name in config.agents:
        return config.agents[name]
    if name in BUILTIN_AGENTS:
        return builtin_agent(name)
    if name in PRESETS:
        return preset_agent(name)
    raise UserError(_unknown_agent(name, config.agents), field="--agent")


# --- internals ---------------------------------------------------------------------------------


def _unknown_agent(name: str, agents: Mapping[str, AgentConfig]) -> str:
    known = sorted(set(agents) | set(BUILTIN_AGENTS))
    hint = did_you_mean(name, [*known, *PRESETS])
    return (f"unknown agent {name!r} (known: {', '.join(known)}), presets: "
            f"{', '.join(sorted(PRESETS))}" + (f"; {hint.strip()}" if hint else ""))


def _parse_agent(name: Any, spec: Any, path: Path | str) -> AgentConfig:
    where = f"agents.{name}"
    if not isinstance(name, str) or not AGENT_NAME_RE.match(name):
        raise UserError(
            f"agent name must be letters, digits, '.', '_' or '-' (starting with a letter or "
            f"digit), got {got(name)}",
            path=path,
            field=where,
        )
    if name in BUILTIN_AGENTS:
        raise UserError(
            f"{name!r} is a built-in agent ({', '.join(BUILTIN_AGENTS)}); choose another name",
            path=path,
            field=where,
        )
    if not isinstance(spec, dict):
        raise UserError(
            f"expected a mapping with a 'command', got {got(spec)}", path=path, field=where
        )
    check_keys(spec, AGENT_KEYS, path, prefix=f"{where}.")
    placement = spec.get("placement", "host")
    if placement not in PLACEMENTS:
        raise UserError(f"expected one of {', '.join(PLACEMENTS)}, got {got(placement)}",
                        path=path, field=f"{where}.placement")
    if placement == "container" and "preset" in spec:
        raise UserError("container placement runs an agent `command` in the task's image "
                        "(a preset's CLI runs on the host)", path=path, field=f"{where}.placement")
    if "command" in spec and "preset" in spec:
        raise UserError("cannot be given with 'command': an agent is a preset or a command",
                        path=path, field=f"{where}.preset")
    if "command" not in spec and "preset" not in spec:
        raise UserError(
            "required key is missing (the agent's command, or a preset: "
            f"{', '.join(sorted(PRESETS))})", path=path, field=f"{where}.command"
        )
    timeout = _timeout(spec, path, where)
    env = env_names(spec.get("env"), path, f"{where}.env")
    home = _home(spec, path, where)
    network = _network(spec, path, where)
    if network["network"] == "api-only" and placement == "container":
        raise UserError("api-only is for an agent in the local sandbox (a container agent has "
                        "its image's network settings)", path=path, field=f"{where}.network")
    if "preset" in spec:
        for key, why in (("usage", "a preset reads usage from its tool's output"),):
            if key in spec:
                raise UserError(f"only for a command agent ({why})", path=path,
                                field=f"{where}.{key}")
        return AgentConfig(
            name=name, command=None, timeout_seconds=timeout, env=env, home=home, **network,
            preset=_preset(spec["preset"], path, f"{where}.preset"),
            model=model_name(spec.get("model"), path, f"{where}.model") if "model" in spec else None,
            args=argument_list(spec["args"], path, f"{where}.args") if "args" in spec else (),
            base_url=base_url(spec["base_url"], path, f"{where}.base_url")
            if "base_url" in spec else None,
        )
    for key in ("model", "args", "base_url"):
        if key in spec:
            raise UserError(
                "only for a preset agent (a command chooses its own model, arguments and "
                "gateway; let a variable through with env:)", path=path, field=f"{where}.{key}")
    usage = spec.get("usage", "file")
    if usage not in USAGE_MODES:
        raise UserError(
            f"expected one of {', '.join(USAGE_MODES)}, got {got(usage)}",
            path=path,
            field=f"{where}.usage",
        )
    command, shell = command_value(spec["command"], path, f"{where}.command")
    return AgentConfig(name=name, command=command, timeout_seconds=timeout, env=env,
                       usage=usage, shell=shell, placement=placement, home=home, **network)


def _network(spec: dict, path: Path | str, where: str) -> dict:
    network = spec.get("network")
    if network is not None and network not in NETWORK_MODES:
        raise UserError(f"expected one of {', '.join(NETWORK_MODES)}, got {got(network)}",
                        path=path, field=f"{where}.network")
    hosts = spec.get("allow_hosts", [])
    if not isinstance(hosts, list) or not all(
            isinstance(h, str) and re.fullmatch(r"[A-Za-z0-9.-]+(:[0-9]{1,5})?", h) for h in hosts):
        raise UserError(f"expected a list of host names (host or host:port), got {got(hosts)}",
                        path=path, field=f"{where}.allow_hosts")
    return {"network": network, "allow_hosts": tuple(hosts)}


def _home(spec: dict, path: Path | str, where: str) -> str:
    home = spec.get("home", "run")
    if home not in HOME_MODES:
        raise UserError(f"expected one of {', '.join(HOME_MODES)}, got {got(home)}", path=path,
                        field=f"{where}.home")
    return home


def _timeout(spec: dict, path: Path | str, where: str) -> float | None:
    if "timeout_seconds" not in spec:
        return None
    timeout = positive_number(spec["timeout_seconds"], path, f"{where}.timeout_seconds")
    if timeout > MAX_TIMEOUT_SECONDS:
        raise UserError(
            f"expected at most {MAX_TIMEOUT_SECONDS:g} seconds (24 h), got {got(spec['timeout_seconds'])}",
            path=path,
            field=f"{where}.timeout_seconds",
        )
    return timeout


def _preset(value: Any, path: Path | str, where: str) -> str:
    if isinstance(value, str) and value in PRESETS:
        return value
    if not isinstance(value, str):
        raise UserError(f"expected a preset name, got {got(value)}", path=path, field=where)
    raise UserError(
        f"unknown preset {value!r} ({did_you_mean(value, PRESETS)}known: "
        f"{', '.join(sorted(PRESETS))})", path=path, field=where)
