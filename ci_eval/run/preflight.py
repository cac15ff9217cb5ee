"""What `ci-eval run` checks before any agent run (every refusal is exit 2, no run started):
the tasks valid and scorable, the agent startable, its harness free of conflicts with the
tasks, --agent-env's names, --out a folder of its own."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

from ci_eval.agents.config import AgentConfig
from ci_eval.agents.config_file import CONFIG_FILE, Config, config_path
from ci_eval.agents.harness import Harness, agent_harness, task_conflicts
from ci_eval.errors import UserError
from ci_eval.run.agent.problem import agent_problem
from ci_eval.run.checks.requirements import requirement_problems
from ci_eval.run.grade import check_gradings
from ci_eval.tasks.model import Task
from ci_eval.tasks.problems import validate_tasks


def checked_harness(agent: AgentConfig, tasks: list[Task], root: Path) -> Harness:
    """The agent's harness (agents/harness.py), checked against the tasks' repo-states (named
    on stderr when the runs start: which files make up the agent is never silent)."""
    harness = agent_harness(agent, root, config_path=config_path(root) or root / CONFIG_FILE)
    task_conflicts(harness, [(t.id, t.repo_state) for t in tasks])
    return harness


def with_env(agent: AgentConfig, names: list[str]) -> AgentConfig:
    """The agent with --agent-env's names added to the variables it may see."""
    for name in names:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", name):
            raise UserError(f"expected a variable name, got {name!r}", field="--agent-env")
    return dataclasses.replace(agent, env=tuple(dict.fromkeys((*agent.env, *names))))


def preflight(agent: AgentConfig, tasks: list[Task], root: Path, config: Config) -> None:
    """Exit 2 before any agent run when a task is invalid (every problem `ci-eval validate`
    finds: a checks.py that does not parse included), the agent cannot start or a task cannot
    be scored."""
    check_gradings(tasks)  # a broken rubric.yaml: exit 2 before any run
    invalid = [p for found in validate_tasks(root, [t.id for t in tasks]).values() for p in found]
    if invalid:  # what `ci-eval validate` refuses is never run (and charged to the agent)
        more = f" (and {len(invalid) - 1} more problem(s))" if len(invalid) > 1 else ""
        raise UserError(f"{invalid[0]}{more}; `ci-eval validate` lists them; no run started",
                        field="tasks")
    problem = agent_problem(agent, root)
    if problem:
        raise UserError(f"{problem}; no run started", field="--agent")
    missing = requirement_problems(tasks, root, host_home=config.checks_home == "host")
    if missing:
        more = f" (and {len(missing) - 1} more task(s))" if len(missing) > 1 else ""
        raise UserError(f"{missing[0]}{more}; no run started", field="requires")


def results_dir(root: Path, given: str) -> Path:
    """--out, relative to the repo root, resolved (so `results/../../x` means what the kernel
    will make of it); never the repo root itself or a folder inside tasks/, and a warning when
    a relative one climbs out of the repo root."""
    if not given.strip():
        raise UserError("expected a folder for the results, got an empty string", field="--out")
    out_dir = (root / given).resolve()
    if out_dir == root or out_dir in root.parents:
        raise UserError("is the repo root or above it (expected a folder of its own, e.g. "
                        "results/)", path=out_dir, field="--out")
    if out_dir.is_relative_to(root / "tasks"):
        raise UserError("is inside tasks/ (expected a folder outside the tasks)", path=out_dir,
                        field="--out")
    if not Path(given).is_absolute() and not out_dir.is_relative_to(root):
        print(f"ci-eval: warning: --out {given} climbs out of the repo root {root}: the "
              f"results go to {out_dir}", file=sys.stderr)  # allowed, docs/isolation.md says why
    return out_dir
