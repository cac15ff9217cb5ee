"""Before any run (the preflight): why an agent cannot start on this machine, or None."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from ci_eval.agents.config import AgentConfig, env_problem
from ci_eval.run.sandbox.environment import allowed_env


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
