"""The environment agents and checks start with: an allow-list of the harness's variables, never
the rest (tokens, keys), and a PATH with only absolute entries.

An empty PATH entry (a leading or doubled `:`) or a relative one (`.`, `bin`) means "the current
folder" to a shell, and the current folder of agents and checks is the workspace: a fake `git`
or `python` there would be run in place of the real one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ci_eval.agents.config import BASE_ENV_ALLOWLIST

CHECKS_TZ = "UTC"  # checks must not depend on the host's time zone


def clean_path(value: str) -> str:
    """PATH without empty, relative or repeated entries."""
    kept: list[str] = []
    for entry in value.split(os.pathsep):
        if entry and os.path.isabs(entry) and entry not in kept:
            kept.append(entry)
    return os.pathsep.join(kept)


def allowed_env(names: tuple[str, ...] | list[str]) -> dict:
    env = {name: os.environ[name] for name in (*BASE_ENV_ALLOWLIST, *names) if name in os.environ}
    env["PATH"] = clean_path(env.get("PATH", os.defpath))
    return env


def python_bin_dir() -> str:
    """Where the interpreter running ci-eval keeps its scripts (pytest, ruff of the test extra)."""
    return str(Path(sys.executable).parent)
