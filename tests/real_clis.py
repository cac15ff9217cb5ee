"""The real agent CLIs at pinned versions (ci_eval/agents/installs.py), installed once into the test cache and reused
(across xdist workers, sessions and runs): npm packages into one prefix, each pip package into a
venv of its own. A fresh machine installs them on first use; `.ci/run` does it before the suite
(`python3 tests/real_clis.py install`), so the install is not timed inside a test.

    bins = real_clis.install()          # {"claude": "/…/bin", "codex": …, "aider": …, …}
    real_clis.missing()                 # why they cannot be installed here ("" when they can)

A stamp file per install records its pins (for a pip package, the interpreter its venv is made
from too: this process's base interpreter, or for a package that needs another Python (installs.py
`python`: openhands needs 3.12) an interpreter of that version on this machine, whose absence
leaves that CLI out, named); a changed pin installs again. A file lock keeps two
workers from installing at once.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

from cache_folder import CACHE  # ~/.cache/ci-eval-tests, or $CI_EVAL_TESTS_CACHE

from ci_eval.agents.presets import PRESETS

# The pins are the presets' own (their `install`, what init writes into a team's workflows):
# the tests verify the versions teams are given. program: package spec
INSTALLS = {name: preset.install for name, preset in PRESETS.items()}
NPM_PACKAGES = {i.program: i.spec for i in INSTALLS.values() if i.kind == "npm"}
# program: (pip requirement, venv folder under CACHE)
PIP_VENVS = {"aider": "venv-aider", "mini-swe-agent": "venv-mini"}
PIP_VENVS |= {"openhands": "venv-openhands"}
PIP_PACKAGES = {i.program: (i.spec, PIP_VENVS[i.program])
                for i in INSTALLS.values() if i.kind == "pip"}
# program: the Python version its package needs (installs.py `python`), "" = this interpreter
PIP_PYTHONS = {i.program: i.python for i in INSTALLS.values() if i.kind == "pip"}
INSTALL_TIMEOUT = 1800


NODE_MAJOR = 20  # the oldest node the pinned npm CLIs run on (their package.json "engines")


def missing() -> str:
    """Why the CLIs cannot be installed here, or "" when they can."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        return "npm/node not found: the real agent CLIs (Claude Code, codex, gemini-cli) need it"
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=60,
                             check=False).stdout.strip()
    major = version.lstrip("v").split(".", 1)[0]
    if not major.isdigit() or int(major) < NODE_MAJOR:
        return (f"node {version or '(no version)'} is too old: the real agent CLIs need node "
                f">= {NODE_MAJOR}")
    return ""


def _locked_install(name: str, pins: dict, install) -> Path:
    folder = CACHE / name
    stamp = folder / ".ci-eval-pins.json"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file() and json.loads(stamp.read_text()) == pins:
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        started = time.monotonic()
        install(folder)
        print(f"real_clis: installed {name} ({', '.join(pins.values())}) in "
              f"{time.monotonic() - started:.0f}s", file=sys.stderr)
        stamp.write_text(json.dumps(pins))
    return folder


def _run(argv: list[str], env: dict | None = None) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False,
                          env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} … failed ({done.returncode}): "
                           f"{(done.stderr or done.stdout)[-2000:]}")


def _npm(folder: Path) -> None:
    folder.mkdir(parents=True)
    _run(["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error",
          *NPM_PACKAGES.values()])


def _pip(spec: str, python: str | None = None):
    def install(folder: Path) -> None:
        if python:
            _run([python, "-m", "venv", str(folder)])
        else:
            venv.create(folder, with_pip=True)
        # pip's download cache of the act tests too (tests/test_act_presets.py): the workflow's
        # own install of the same pin then downloads nothing (openhands: about 790 MB installed)
        _run([str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet",
              "--disable-pip-version-check", spec],
             env={**os.environ, "PIP_CACHE_DIR": str(CACHE / "pip-cache")})
    return install


def _base_python() -> str:
    """The interpreter venv.create makes a venv of (a venv's own base): part of the pins, as
    the CLI's speed and its bytecode caches are that interpreter's."""
    return f"{os.path.realpath(sys.base_prefix)} {sys.version.split()[0]}"


def python_of(version: str) -> str | None:
    """An interpreter of this machine of `version` ("3.12"): pythonX.Y on PATH (a pyenv shim of
    a version that is not selected fails, so it is run), else a pyenv build; None if none."""
    candidates = [shutil.which(f"python{version}") or ""]
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(str(p) for p in root.glob(f"{version}.*/bin/python{version}"))
    for candidate in filter(None, candidates):
        done = subprocess.run([candidate, "-c", "import sys, venv; print(sys.version.split()[0])"],
                              capture_output=True, text=True, timeout=60, check=False)
        if done.returncode == 0 and done.stdout.startswith(f"{version}."):
            return os.path.realpath(candidate)
    return None

def install() -> dict[str, str]:
    """Install (or reuse) every CLI; {program: the folder to put first on PATH}."""
    npm = _locked_install("npm", NPM_PACKAGES, _npm) / "node_modules" / ".bin"
    bins = {program: str(npm) for program in NPM_PACKAGES}
    for program, (spec, name) in PIP_PACKAGES.items():
        version = PIP_PYTHONS[program]
        python = python_of(version) if version else None
        if version and python is None:  # its test skips, naming this (tests/test_real_clis.py)
            print(f"real_clis: {program} not installed: no Python {version} here", file=sys.stderr)
            continue
        base = f"{python} {version}" if python else _base_python()
        folder = _locked_install(name, {program: spec, "python": base}, _pip(spec, python))
        bins[program] = str(folder / "bin")
    for program, folder in bins.items():
        if not (Path(folder) / program).exists():
            raise RuntimeError(f"{program} is not in {folder} after the install")
    return bins


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python3 tests/real_clis.py install")
    if missing():
        sys.exit(missing())
    started = time.monotonic()
    for program, folder in install().items():
        print(f"{program}: {folder}")
    print(f"real CLIs ready in {time.monotonic() - started:.0f}s")


def write_answer_task(repo: Path, agent_timeout: float, task_id: str = "task-001-answer") -> Path:
    """The one task the real-CLI tests give a CLI (the fake models' scripts solve it: 42 into
    answer.txt), its agent timeout `agent_timeout`; its folder."""
    task = repo / "tasks" / task_id
    (task / "repo-state").mkdir(parents=True)
    (task / "solution").mkdir()
    (task / "prompt.md").write_text("Write the answer to the question in README.md into "
                                    "answer.txt.\n")
    (task / "checks.py").write_text('from ci_eval.checks import file_equals, main\n\n'
                                    'main(file_equals("answer.txt", "42\\n"))\n')
    (task / "metadata.json").write_text(json.dumps({
        "difficulty": 1, "area": "demo", "tags": ["real-cli"], "created": "2026-12-01",
        "timeout_seconds": {"agent": agent_timeout}}))
    (task / "repo-state" / "README.md").write_text("What is six times seven?\n")
    (task / "solution" / "solve.sh").write_text("#!/bin/sh\nprintf '42\\n' > answer.txt\n")
    return task

