"""One agent's configuration (AgentConfig): an `agents:` entry of ci-eval.yaml (its format:
agents/config_file.py), a built-in, a preset used by name, or `--agent-cmd`; the environment
it may see and why it cannot start.

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

An entry's keys: {command | preset}, model, args, base_url, timeout_seconds, env, usage,
placement, home, network, allow_hosts, harness (the repo files that make up the agent:
agents/harness.py). Their types and values are ci-eval.schema.json's (#/$defs/agent), checked
before parse_agent sees the entry; here are the rules between keys: a built-in's name, `command`
with `preset`, neither, a preset's keys on a command and back, each one line naming the file
and the field path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ci_eval.agents.harness import HarnessEntry, parse_harness
from ci_eval.agents.presets import PRESETS, did_you_mean
from ci_eval.agents.shell import first_program
from ci_eval.agents.values import (
    argument_list,
    base_url,
    command_value,
    env_names,
    got,
    model_name,
    positive_number,
    string_command,
)
from ci_eval.errors import UserError
from ci_eval.tasks.model import MAX_TIMEOUT_SECONDS

BUILTIN_AGENTS = ("reference", "noop")
# Always passed to agents and checks; everything else must be allow-listed by name.
BASE_ENV_ALLOWLIST = ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "SHELL")
# The values of ci-eval.schema.json's enums (tests/test_config_schema.py holds them equal).
Placement = Literal["host", "container"]  # docker runner: the local sandbox, or the task's image
HomeMode = Literal["run", "host"]  # a HOME of its own per run (the default), or the host's
NetworkMode = Literal["host", "api-only"]  # run/agent/api_proxy.py
UsageMode = Literal["file", "none"]
AGENT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class AgentConfig:
    name: str
    command: tuple[str, ...] | None  # what to execute; None for built-ins and presets
    timeout_seconds: float | None = None  # None: the task's own agent timeout
    env: tuple[str, ...] = ()  # extra variable names the agent may see (e.g. secrets)
    builtin: str | None = None  # "reference" | "noop"
    usage: UsageMode = "file"  # "file": read CI_EVAL_USAGE_FILE if the agent wrote it; "none": don't
    preset: str | None = None  # a name in PRESETS
    model: str | None = None  # presets: passed to the tool
    args: tuple[str, ...] = ()  # presets: extra arguments for the tool
    base_url: str | None = None  # presets: a gateway / proxy for the model API (its URL)
    shell: bool = False  # command is ("bash", "-c", script): a command string
    placement: Placement = "host"  # docker runner: "host" (local sandbox) or "container" (the image)
    home: HomeMode = "run"
    network: NetworkMode | None = None  # None: api-only for pinned-commit tasks
    allow_hosts: tuple[str, ...] = ()  # api-only: hosts (host or host:port) besides the API's
    harness: tuple[HarnessEntry, ...] | None = None  # None: the preset's defaults (or none)

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
        if preset.model_env is not None and not agent.model and not any(
                environ.get(name) for name in preset.model_env):
            return (f"agent {agent.name} ({agent.preset}): no model, and the tool has no "
                    f"default: set `model:` in its agents: entry of ci-eval.yaml (preset: "
                    f"{agent.preset}), or set {' / '.join(preset.model_env)}")
        if any(environ.get(name) for name in preset.key_env):
            return None
        login = preset.login_path(environ)
        if login is not None and os.path.isfile(login):
            return None  # the tool's own login file: copied into the agent's HOME (run/sandbox/home.py)
        logged_in = f", or log in with {preset.program} (no {login})" if login else ""
        return (f"agent {agent.name} ({agent.preset}): {preset.key_env[0]} is not set "
                f"(set one of {', '.join(preset.key_env)}{logged_in})")
    return None


def unknown_agent(name: str, agents: Mapping[str, AgentConfig]) -> str:
    """The message for an agent name that is neither configured, built in nor a preset."""
    known = sorted(set(agents) | set(BUILTIN_AGENTS))
    hint = did_you_mean(name, [*known, *PRESETS])
    return (f"unknown agent {name!r} (known: {', '.join(known)}), presets: "
            f"{', '.join(sorted(PRESETS))}" + (f"; {hint.strip()}" if hint else ""))


def parse_agent(name: Any, spec: Any, path: Path | str) -> AgentConfig:
    """One `agents:` entry (agents.NAME) -> AgentConfig."""
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
    placement = spec.get("placement", "host")
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
    home = spec.get("home", "run")
    network = spec.get("network")
    allow_hosts = tuple(spec.get("allow_hosts", ()))
    harness = parse_harness(spec["harness"], path, f"{where}.harness") if "harness" in spec \
        else None
    if network == "api-only" and placement == "container":
        raise UserError("api-only is for an agent in the local sandbox (a container agent has "
                        "its image's network settings)", path=path, field=f"{where}.network")
    if "preset" in spec:
        for key, why in (("usage", "a preset reads usage from its tool's output"),):
            if key in spec:
                raise UserError(f"only for a command agent ({why})", path=path,
                                field=f"{where}.{key}")
        return AgentConfig(
            name=name, command=None, timeout_seconds=timeout, env=env, home=home,
            network=network, allow_hosts=allow_hosts, harness=harness,
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
    command, shell = command_value(spec["command"], path, f"{where}.command")
    return AgentConfig(name=name, command=command, timeout_seconds=timeout, env=env,
                       usage=usage, shell=shell, placement=placement, home=home,
                       network=network, allow_hosts=allow_hosts, harness=harness)


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
