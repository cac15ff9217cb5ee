"""ci-eval.yaml, the repo's configuration file -> Config: its named agents (each entry:
agents/config.py), budgets, prices, the checks' environment, the runner, the gate's parameters;
and which agent a run uses.

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

The contract of every key (types, allowed values, unknown keys: typos more often than not) is
the JSON Schema ci_eval/tasks/schemas/ci-eval.schema.json (`ci-eval schema ci-eval.yaml`, the
reference page docs/reference/config.md); parse_config checks it first and the code keeps only
what a schema cannot say (agents/config.py: `command` or `preset`, the preset exists, which keys
go with which; default_agent names a known agent; values converted: exact rates, a command
split like a shell's). Duplicate keys are errors (strict_yaml). Every error is one line naming
the file and the field path, e.g.
`ci-eval.yaml: agents.claude.timeout_seconds: expected a positive number of seconds, at most
86400 (24 h), got "ten"`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ci_eval.agents.budget import Budget, parse_budget
from ci_eval.agents.config import (
    BUILTIN_AGENTS,
    AgentConfig,
    HomeMode,
    builtin_agent,
    inline_agent,
    parse_agent,
    preset_agent,
    unknown_agent,
)
from ci_eval.agents.gate_config import parse_gate
from ci_eval.agents.presets import PRESETS
from ci_eval.agents.pricing import ModelPrice, parse_pricing
from ci_eval.agents.values import env_names, got
from ci_eval.errors import UserError
from ci_eval.strict_yaml import read_yaml
from ci_eval.tasks.schema import schema_problems
from ci_eval.verdict.rules import DEFAULT_RULES, GateRules

CONFIG_FILE = "ci-eval.yaml"
CONFIG_NAMES = (CONFIG_FILE, "ci-eval.yml", ".ci-eval.yaml", ".ci-eval.yml")  # found, never ignored
RunnerName = Literal["local", "docker"]  # as the schema's runner (tests/test_config_schema.py)
CONFIG_SCHEMA = "ci-eval"  # ci_eval/tasks/schemas/ci-eval.schema.json
DEFAULT_FAILURE_LOGS = ".ci-eval/failure-logs"


@dataclass(frozen=True)
class Config:
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    default_agent: str | None = None
    checks_env: tuple[str, ...] = ()
    checks_home: HomeMode = "run"
    budget: Budget = field(default_factory=Budget)
    pricing: dict[str, ModelPrice] = field(default_factory=dict)
    failure_logs: str = DEFAULT_FAILURE_LOGS  # relative to the repo root (or absolute)
    runner: RunnerName | None = None  # the default runner (None: local)
    gate: GateRules = DEFAULT_RULES


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
    problems = schema_problems(data, CONFIG_SCHEMA)
    if problems:
        raise UserError(problems[0].message, path=path, field=problems[0].dotted)

    agents = {name: parse_agent(name, spec, path)
              for name, spec in (data.get("agents") or {}).items()}
    default = data.get("default_agent")
    if default is not None and default not in agents and default not in BUILTIN_AGENTS \
            and default not in PRESETS:
        raise UserError(unknown_agent(default, agents), path=path, field="default_agent")
    checks = data.get("checks") or {}
    checks_env = env_names(checks.get("env"), path, "checks.env")
    checks_home = checks.get("home", "run")
    failure_logs = data.get("failure_logs", DEFAULT_FAILURE_LOGS)
    runner = data.get("runner")
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
    raise UserError(unknown_agent(name, config.agents), field="--agent")
