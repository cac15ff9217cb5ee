"""What this platform can do to isolate agents and checks, and the command prefixes for it.

Agent: a new mount + PID namespace (`unshare`) in which the repo root, the folder of all runs and
other ci-eval temp folders are covered by empty tmpfs, except the run's own folder. Checks: a new
network namespace with no interfaces but loopback. Where either is impossible, runs still happen
and every report says so (`notices`), never silently.
"""

from __future__ import annotations

import functools
import glob
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

TEMP_PREFIX = "ci-eval-"


@dataclass(frozen=True)
class Isolation:
    agent_prefix: tuple[str, ...] | None  # None: agents run unisolated
    checks_prefix: tuple[str, ...] | None  # None: checks keep network access
    notices: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        parts = ["agent-sandbox" if self.agent_prefix else "agent-unisolated"]
        parts.append("checks-offline" if self.checks_prefix else "checks-online")
        return ",".join(parts)


def _works(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=20, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _userns(flags: list[str]) -> list[str]:
    """Root can unshare directly; others need a user namespace mapping them to root inside it."""
    return ["unshare", *flags] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", *flags]


@functools.lru_cache(maxsize=1)
def detect() -> Isolation:
    if os.environ.get("CI_EVAL_NO_ISOLATION") == "1":
        notice = ("isolation disabled by CI_EVAL_NO_ISOLATION=1: solutions were readable by "
                  "the agent; checks had network access")
        return Isolation(None, None, (notice,))
    notices = []
    agent = _userns(["--mount", "--pid", "--fork", "--kill-child", "--mount-proc",
                     "--propagation", "private"])
    probe_dir = tempfile.mkdtemp(prefix=TEMP_PREFIX + "probe-")
    try:
        sandbox_ok = _works([*agent, *sandbox_command([Path(probe_dir)], [], [])])
    finally:
        os.rmdir(probe_dir)
    if not sandbox_ok:
        agent = None
        notices.append("no mount namespace here (unshare failed): solutions were readable by the agent")
    checks = _userns(["--net"])
    if not _works([*checks, "true"]):
        checks = None
        notices.append("no network namespace here (unshare -n failed): checks ran with network access")
    return Isolation(tuple(agent) if agent else None, tuple(checks) if checks else None,
                     tuple(notices))


def sandbox_command(hide: list[Path], keep: list[Path], command: list[str]) -> list[str]:
    # By path with -S: the sandbox needs no site-packages, and skipping them halves start-up.
    argv = [sys.executable, "-I", "-S", str(Path(__file__).with_name("_sandbox.py"))]
    for path in hide:
        argv += ["--hide", str(path)]
    for path in keep:
        argv += ["--keep", str(path)]
    return [*argv, "--", *command]


def paths_to_hide(repo_root: Path, runs_base: Path) -> list[Path]:
    """The repo checkout, this invocation's runs, and other ci-eval invocations' temp folders."""
    hidden = {Path(repo_root).resolve(), Path(runs_base).resolve()}
    for other in glob.glob(os.path.join(tempfile.gettempdir(), TEMP_PREFIX + "*")):
        if os.path.isdir(other):
            hidden.add(Path(other).resolve())
    return sorted(hidden)


def agent_argv(isolation: Isolation, command: list[str], *, repo_root: Path,
               runs_base: Path, run_dir: Path) -> list[str]:
    if isolation.agent_prefix is None:
        return list(command)
    keep = [Path(run_dir).resolve()]
    prefix = Path(sys.prefix).resolve()
    if prefix.is_relative_to(Path(repo_root).resolve()):
        keep.append(prefix)  # a virtualenv inside the repo must stay usable
    hide = paths_to_hide(repo_root, runs_base)
    return [*isolation.agent_prefix, *sandbox_command(hide, keep, command)]


def checks_argv(isolation: Isolation, command: list[str]) -> list[str]:
    if isolation.checks_prefix is None:
        return list(command)
    return [*isolation.checks_prefix, *command]
