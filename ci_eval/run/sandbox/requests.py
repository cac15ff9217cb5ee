"""The sandbox launcher's requests: an agent's command and checks.py, each in its view
(views.py), for the Isolation this platform has (isolation.py); and what the checks' view lets
a task's `requires` reach (preflight).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import ci_eval
from ci_eval.run.sandbox import launcher
from ci_eval.run.sandbox.home import OWN_HOME
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.run.sandbox.launcher import Request
from ci_eval.run.sandbox.sandbox_program import View
from ci_eval.run.sandbox.views import RunView, inside, run_view, socket_folders


def agent_request(isolation: Isolation, command: list[str], *, repo_root: Path,
                  runs_base: Path, run_dir: Path, hide=(), home: str | None = None,
                  keep=()) -> Request | None:
    """The agent's command inside its sandbox, for the launcher: every mount read-only but the
    run folder, which holds its own HOME (see views.run_view for the rest; `home`: the host's HOME
    instead, home: host). `keep`: paths bound back read-only inside what `hide` covers (the
    resolver's file under a hidden /run). None: agents run unisolated here."""
    if not isolation.agent_sandboxed:
        return None
    run_dir = Path(run_dir).resolve()
    shown = run_view(repo_root, runs_base, hide, home=home).for_command(
        writable=[run_dir], scratch_in=run_dir, keep=keep)
    return Request(tuple(command), shown, user=isolation.user_namespace, net=False)


def script_request(isolation: Isolation, command: list[str], *, writable) -> Request | None:
    """A task's own script (setup.sh: task-author code, run while its workspace is built) in a
    sandbox like the checks': new PID and network namespaces (nothing it starts outlives it,
    no network, no /proc of the harness), every mount read-only but `writable`, /var/tmp
    empty, no capabilities. None: no sandbox here."""
    if not isolation.checks_sandboxed:
        return None
    shown = View(tmpfs=("/var/tmp",), writable=tuple(str(Path(p).resolve()) for p in writable))
    return Request(tuple(command), shown, user=isolation.user_namespace, net=True)


CHECKS_HIDDEN_PARTS = ("solution", "negatives")  # of the task folder


def checks_view(isolation: Isolation, repo_root: Path, runs_base: Path, *, hide=(),
                home: str | None = None) -> RunView | None:
    """What the checks' sandbox hides and discards: the agent's (views.run_view), plus the
    folders of host sockets; `home`: the host's HOME they share (home: host). None: no checks
    sandbox here (see unsandboxed_checks_argv)."""
    if not isolation.checks_sandboxed:
        return None
    return run_view(repo_root, runs_base, hide, home=home, extra_hidden=socket_folders())


def checks_request(isolation: Isolation, view: RunView, checks_py: Path, *, task_dir: Path,
                   workspace: Path, checks_dir: Path, held: bool = False) -> Request:
    """checks.py inside the checks' sandbox (`view`, checks_view's), for the launcher: no
    network, the task folder readable without its solution/ and negatives/, ci-eval's own
    package readable, and only the workspace and checks_dir/reports writable, and
    checks_dir/home, their own HOME, unless the view shares the host's (home: host).
    Every process they start dies with them (PID namespace). held: the workspace is
    bound only if it is still the folder of a descriptor handed along, and the sandbox waits
    on a gate (scoring.ChecksRun)."""
    checks_dir = Path(checks_dir).resolve()
    task_dir = Path(task_dir).resolve()
    writable = [Path(workspace).resolve(), checks_dir / "reports"]
    writable += [] if view.home else [checks_dir / OWN_HOME]
    shown = view.for_command(writable=writable, scratch_in=checks_dir,
                             keep=[task_dir, ci_eval_package()],
                             mask=[task_dir / part for part in CHECKS_HIDDEN_PARTS])
    return Request((), shown, user=isolation.user_namespace, net=True, mode="checks",
                   checks=str(Path(checks_py).resolve()), sys_path=checks_sys_path(),
                   gated=held, held=(str(Path(workspace).resolve()),) if held else ())


def ci_eval_package() -> Path:
    return Path(ci_eval.__file__).resolve().parent


@dataclass(frozen=True)
class ChecksReach:
    """What of the host the checks' sandbox shows, for resolving a task's `requires` as the
    checks will see them (preflight): `hidden_by(path)` is the covered folder that hides path
    from the checks, or None when they can reach it."""

    hidden: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()

    @classmethod
    def of(cls, view: RunView | None) -> ChecksReach:
        """What checks_request's sandbox over `view` reaches; everything without one (None).
        A task's own folder is bound back too (hidden_by's also_kept)."""
        if view is None:
            return cls()
        return cls(tuple(view.hidden + view.tmpfs), (*view.keep, str(ci_eval_package())))

    def hidden_by(self, path: str | Path, *also_kept: Path) -> str | None:
        real = os.path.realpath(path)
        if inside(real, [*self.kept, *(str(Path(p).resolve()) for p in also_kept)]):
            return None
        return next((folder for folder in self.hidden if inside(real, [folder])), None)


def checks_reach(isolation: Isolation, repo_root: Path, *, hide=(),
                 host_home: bool = False) -> ChecksReach:
    """What the checks of an invocation on repo_root reach, before any run folder exists."""
    home = os.environ.get("HOME") if host_home else None
    return ChecksReach.of(checks_view(isolation, repo_root, repo_root, hide=hide, home=home))


@functools.lru_cache(maxsize=1)
def checks_sys_path() -> tuple[str, ...]:
    """sys.path for checks.py, as `python -I` would start with it (launcher.checks_sys_path)."""
    return launcher.checks_sys_path()
