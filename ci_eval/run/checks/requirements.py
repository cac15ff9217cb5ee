"""Before any agent run: is every task's `requires` met for the checks? Problems found here
cost no agent run (the agent's half of the preflight is agent/problem.agent_problem).

Each name is resolved as the checks will see it: it is
  met when the interpreter that runs the checks can import it from their sys.path (pytest, ruff
  and other Python tools), or when it is a command on the checks' PATH that is not a
  version-manager shim (a pyenv `pytest` shim says nothing about the checks' interpreter: it may
  run another Python that has pytest while this one has not); either way from a place the
  checks' sandbox shows (requests.checks_reach). A tool found in a folder the sandbox hides
  (./bin or node_modules/.bin in the repo root, a HOME folder that is not a tool prefix on PATH)
  is named with that folder and the fix: the checks would not find it, and the correct
  solution would score fail.
"""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ci_eval.run.sandbox.environment import allowed_env, clean_path, python_bin_dir
from ci_eval.run.sandbox.isolation import detect
from ci_eval.run.sandbox.requests import ChecksReach, checks_reach, checks_sys_path
from ci_eval.tasks.model import Task

SHIM_FOLDERS = ("shims",)  # pyenv, rbenv, asdf, nodenv: the program they run depends on config


def checks_path() -> str:
    return clean_path(os.pathsep.join([python_bin_dir(), allowed_env(()).get("PATH", os.defpath)]))


@dataclass(frozen=True)
class Unmet:
    name: str
    found: str | None = None  # where the harness found it, in a folder the checks cannot see
    hidden_by: str | None = None  # that folder

    def __str__(self) -> str:
        if self.found is None:
            return self.name
        return f"{self.name} (found at {self.found}, in {self.hidden_by}, which the checks' sandbox hides)"


def unmet_requirement(name: str, path: str, reach: ChecksReach, task_dir: Path) -> Unmet | None:
    """None when the checks can import `name` or run it from their PATH, as their sandbox shows
    it; else what is wrong."""
    if name in sys.builtin_module_names:
        return None
    found_hidden = None
    spec = _module_spec(name)
    if spec is not None:
        origin = spec.origin if spec.origin not in (None, "namespace") else \
            next(iter(spec.submodule_search_locations or ()), None)
        hidden = reach.hidden_by(origin, task_dir) if origin else None
        if hidden is None:
            return None
        found_hidden = Unmet(name, origin, hidden)
    for folder in path.split(os.pathsep):
        found = shutil.which(name, path=folder) if folder else None
        if found is None or Path(found).parent.name in SHIM_FOLDERS:
            continue
        hidden = reach.hidden_by(folder, task_dir) or reach.hidden_by(found, task_dir)
        if hidden is None:
            return None
        found_hidden = found_hidden or Unmet(name, found, hidden)
    return found_hidden or Unmet(name)


def _module_spec(name: str):
    """The module as the checks' interpreter finds it on their sys.path (none of the harness's
    own entries, such as the current folder)."""
    try:
        return importlib.machinery.PathFinder.find_spec(name, list(checks_sys_path()))
    except (ImportError, ValueError):
        return None


EVERYWHERE = ChecksReach()  # no sandbox: every place is reachable


def missing_requirements(task: Task, path: str | None = None,
                         reach: ChecksReach = EVERYWHERE) -> list[Unmet]:
    path = checks_path() if path is None else path
    unmet = (unmet_requirement(name, path, reach, task.path) for name in task.requires)
    return [problem for problem in unmet if problem is not None]


def requirement_problems(tasks: Iterable[Task], repo_root: Path, *,
                         host_home: bool = False) -> list[str]:
    """One line per task whose `requires` the checks cannot reach, naming the tool, where it
    was found when that is a folder the checks' sandbox hides, and the fix."""
    path = checks_path()
    reach = checks_reach(detect(), Path(repo_root), host_home=host_home)
    problems = []
    for task in tasks:
        missing = missing_requirements(task, path, reach)
        if not missing:
            continue
        hidden = [m for m in missing if m.found]
        if hidden:
            problems.append(
                f"{task.id}: requires {', '.join(map(str, missing))}; install it where the "
                f"checks can see it: outside the repo root (into the environment that runs "
                f"ci-eval, {python_bin_dir()}, or a folder on PATH elsewhere)")
        else:
            problems.append(f"{task.id}: requires {', '.join(map(str, missing))}, which the "
                            "checks' interpreter cannot import and PATH does not have")
    return problems
