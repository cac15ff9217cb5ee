"""ci-eval.yaml: named agents (command, timeout, env allow-list, usage)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.errors import UserError

CONFIG_FILE = "ci-eval.yaml"
BUILTIN_AGENTS = ("reference", "noop")
# Always passed to agents and checks; everything else must be allow-listed by name.
BASE_ENV_ALLOWLIST = ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "SHELL")


@dataclass(frozen=True)
class AgentConfig:
    name: str
    command: tuple[str, ...] | None  # None for built-ins
    timeout_seconds: float | None = None  # None: the task's own agent timeout
    env: tuple[str, ...] = ()  # extra variable names the agent may see (e.g. secrets)
    builtin: str | None = None  # "reference" | "noop"

    @property
    def identity(self) -> str:
        """What results and the baseline record as the agent that produced them."""
        return self.name


@dataclass(frozen=True)
class Config:
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    default_agent: str | None = None
    checks_env: tuple[str, ...] = ()


def builtin_agent(name: str) -> AgentConfig:
    return AgentConfig(name=name, command=None, builtin=name)


def inline_agent(command: str) -> AgentConfig:
    argv = shlex.split(command)
    if not argv:
        raise UserError("--agent-cmd: expected a command, got an empty string")
    return AgentConfig(name=f"cmd:{command}", command=tuple(argv))


def load_config(root: Path) -> Config:
    path = Path(root) / CONFIG_FILE
    if not path.exists():
        return Config()
    import yaml

    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise UserError(f"invalid YAML ({str(exc).splitlines()[0]})", path=path)
    if not isinstance(data, dict):
        raise UserError("expected a mapping at the top level", path=path)
    agents = {}
    for name, spec in (data.get("agents") or {}).items():
        command = spec.get("command")
        argv = tuple(shlex.split(command)) if isinstance(command, str) else tuple(command)
        agents[name] = AgentConfig(
            name=name,
            command=argv,
            timeout_seconds=spec.get("timeout_seconds"),
            env=tuple(spec.get("env", [])),
        )
    return Config(agents=agents, default_agent=data.get("default_agent"))


def resolve_agent(config: Config, name: str | None, command: str | None) -> AgentConfig:
    if command:
        return inline_agent(command)
    name = name or config.default_agent or "reference"
    if name in config.agents:
        return config.agents[name]
    if name in BUILTIN_AGENTS:
        return builtin_agent(name)
    known = ", ".join(sorted(set(config.agents) | set(BUILTIN_AGENTS)))
    raise UserError(f"unknown agent {name!r} (known: {known})", field="--agent")
