"""The HOME an agent and the checks run with.

By default (`home: run` in ci-eval.yaml, for an agent and for `checks:`) each gets a fresh,
empty folder of its own per run, writable, outside the workspace and gone with the run; the
host's HOME is hidden from both sandboxes (views.py), so its credential files
(~/.git-credentials, ~/.config/gh, ~/.npmrc...) are out of reach. Only two things reach an
agent's own HOME, written by the harness before the agent starts:
- a preset's login file (`claude login`, `codex login`, gemini's Google login), copied from the
  host's HOME when that is how the tool logs in here (none of its key variables is set);
- the files the preset asks for (Preset.home_files: {path relative to HOME: text}).
`home: host` keeps the harness user's HOME (readable, writes discarded), as before.

    env.update(agent_home(agent, paths.home))            # {} for home: host
    env.update(own_home(checks_dir / OWN_HOME))          # the checks' (home: run)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from ci_eval.agents.config import AgentConfig
from ci_eval.agents.preset import Preset
from ci_eval.agents.presets import PRESETS

OWN_HOME = "home"  # the folder's name, in the run folder (agent) or the checks folder
LOGIN_CAP_BYTES = 1024 * 1024


def own_home(folder: Path, files: Mapping[str, str | bytes] | None = None) -> dict[str, str]:
    """Make `folder` (which must not exist) a HOME holding `files` (relative path -> content);
    the environment change that makes it the HOME."""
    folder = Path(folder)
    folder.mkdir(mode=0o700)
    for relative, content in dict(files or {}).items():
        target = folder / _relative(relative)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = content.encode() if isinstance(content, str) else content
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    return {"HOME": str(folder)}


def agent_home(agent: AgentConfig, folder: Path,
               environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The agent's own HOME in `folder`, filled (see the module docstring); the environment
    changes: HOME, and a preset's login-folder variable (CODEX_HOME) pointing into it. {} for
    `home: host`."""
    if agent.home == "host":
        return {}
    preset = PRESETS[agent.preset] if agent.preset else None
    files: dict[str, str | bytes] = {}
    env = {}
    if preset is not None and preset.login_file is not None:
        folder_name, name = preset.login_file
        login = _login_to_copy(preset, environ)
        if login is not None:
            files[f"{folder_name}/{name}"] = login
        if preset.login_folder_env:  # the tool's state folder is in its own HOME too
            env[preset.login_folder_env] = str(Path(folder) / folder_name)
    if preset is not None:
        files.update(preset.home_files(agent.model))
        if agent.base_url:
            files.update(preset.gateway_home_files(agent.base_url, agent.model))
    home = own_home(folder, files)
    for path in env.values():  # codex 0.171 refuses a CODEX_HOME that does not exist
        Path(path).mkdir(mode=0o700, exist_ok=True)
    return {**home, **env}


def _login_to_copy(preset: Preset, environ: Mapping[str, str]) -> bytes | None:
    """The host's login file of the tool, when that is how it logs in here (no key variable
    set) and it exists; None otherwise."""
    if any(environ.get(name) for name in preset.key_env):
        return None
    path = preset.login_path(environ)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read(LOGIN_CAP_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= LOGIN_CAP_BYTES else None


def _relative(path: str) -> PurePosixPath:
    relative = PurePosixPath(path)
    if not path or relative.is_absolute() or ".." in relative.parts:
        raise ValueError(f"a HOME file must be a relative path without '..', got {path!r}")
    return relative
