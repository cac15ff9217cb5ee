"""Workspaces: a fresh copy of a task's repo-state/ per run, as a git repo of its initial state.

repo-state/ is copied except its top-level setup.sh (run with bash in the workspace) and top-level
*.patch files (applied in sorted order); then a `.git` with the result as its one commit is
written (gitdir.py: no git runs). Solutions and negatives are applied with the same machinery.

Per task, once (WorkspaceFactory): the pristine tree (repo-state/ itself when it has no patches,
else a patched copy in the factory's cache folder), its template (template.py: what to make,
listed once) and its `.git`; per run: a copy of that tree laid from the template, plus the `.git`
files. A task with setup.sh is built afresh every run (what setup makes may hold absolute paths).
The pristine tree is also what the diff compares the workspace with.

No hardlinks: the agent owns every file of its workspace (it runs as root, or as the harness's
own user in a user namespace), so it could chmod and write through a link into the pristine tree
and hide its change from the diff; and read-only files owned by another user would break every
agent that edits a file in place. Every file is a copy of its own (mode and mtime kept).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

from ci_eval.run.sandbox import scratch
from ci_eval.run.sandbox import launcher
from ci_eval.run.sandbox.isolation import detect
from ci_eval.run.sandbox.process import Pipe, run_process
from ci_eval.run.sandbox.requests import script_request
from ci_eval.run.sandbox.sandbox_program import read_failure
from ci_eval.run.sandbox.scratch import remove_tree
from ci_eval.run.workspace.gitdir import git_files, write_git
from ci_eval.run.workspace.template import TreeTemplate
from ci_eval.tasks.model import PATCH_SUFFIXES
from ci_eval.tasks.upstream import PLAIN_TREE_MARK

SETUP_TIMEOUT = 120
SOLVE_SCRIPT_SUFFIX = ".sh"
GIT_IN_MEMORY_BYTES = 4 * 1024 * 1024  # a larger task's .git is kept in the cache folder

# Deterministic commits, no user config or hooks leaking in.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "ci-eval",
    "GIT_AUTHOR_EMAIL": "ci-eval@localhost",
    "GIT_COMMITTER_NAME": "ci-eval",
    "GIT_COMMITTER_EMAIL": "ci-eval@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}


class WorkspaceError(Exception):
    """Setting up or changing a workspace failed: an infrastructure error, not a task failure."""


def _git_env() -> dict:
    return {**os.environ, **GIT_ENV}


def git(workspace: Path, *args: str, check: bool = True, input: bytes | None = None) -> bytes:
    proc = subprocess.run(
        ["git", "-C", str(workspace), *args],
        capture_output=True,
        env=_git_env(),
        input=input,
        check=False,
    )
    if check and proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        raise WorkspaceError(f"git {args[0]} failed: {message[-1] if message else proc.returncode}")
    return proc.stdout


def special_files(repo_state: Path) -> set[str]:
    """repo-state's top-level setup.sh and *.patch: not copied, but run and applied (none for an
    upstream commit's tree: its setup.sh is the project's own file)."""
    if not Path(repo_state).is_dir() or (Path(repo_state).parent / PLAIN_TREE_MARK).is_file():
        return set()
    return {p.name for p in Path(repo_state).iterdir()
            if p.is_file() and (p.name == "setup.sh" or p.suffix == ".patch")}


def build_tree(repo_state: Path, target: Path) -> Path:
    """repo-state's files at `target` (must not exist), setup.sh run and patches applied."""
    repo_state = Path(repo_state).resolve()
    special = special_files(repo_state)
    if repo_state.is_dir():
        shutil.copytree(repo_state, target, symlinks=True,
                        ignore=lambda d, names: [n for n in names if n in special]
                        if Path(d) == repo_state else [])
    else:
        target.mkdir(parents=True)
    if "setup.sh" in special:
        run_script(repo_state / "setup.sh", target, what="setup.sh")
    for patch in sorted(n for n in special if n.endswith(".patch")):
        apply_patch(repo_state / patch, target)
    return target


def create_workspace(repo_state: Path, workspace: Path) -> Path:
    """Build the workspace at `workspace` (must not exist), its initial state committed."""
    build_tree(repo_state, workspace)
    try:
        write_git(workspace, git_files(workspace))
    except OSError as exc:
        raise WorkspaceError(f"cannot write the workspace's .git: {exc}") from None
    return workspace


class _Prepared:
    """A task's pristine tree, its template (template.py) and its .git (bytes, or a folder for
    a large one)."""

    def __init__(self, tree: Path, git: dict[str, bytes] | Path):
        self.tree = tree
        self.git = git
        self.template = TreeTemplate.of(tree)  # None: copied with copytree


class WorkspaceFactory:
    """Builds workspaces from each task's pristine tree and .git, prepared once per task (see
    the module docstring); a task with setup.sh is built afresh every time."""

    def __init__(self, cache_dir: Path):
        self.cache_dir = Path(cache_dir)
        self._lock = threading.Lock()
        self._prepared: dict[Path, _Prepared] = {}
        self._task_locks: dict[Path, threading.Lock] = {}
        self._special_files: dict[Path, set[str]] = {}

    def create(self, repo_state: Path, workspace: Path) -> Path:
        repo_state = Path(repo_state).resolve()
        if "setup.sh" in self._special(repo_state):
            return create_workspace(repo_state, workspace)
        prepared = self._prepare(repo_state)
        top = prepared.tree  # a .git of repo-state's own is not the workspace's
        if prepared.template is not None:
            prepared.template.lay(workspace)
        else:
            shutil.copytree(top, workspace, symlinks=True,
                            ignore=lambda d, names: [".git"] if d == str(top) and ".git" in names
                            else [])
        if isinstance(prepared.git, Path):
            shutil.copytree(prepared.git, workspace / ".git", copy_function=shutil.copyfile)
        else:
            write_git(workspace, prepared.git)
        return workspace

    def pristine(self, repo_state: Path, workspace: Path, snapshot: Path) -> Path:
        """The harness's own copy of `workspace` as just created, for the diff: the task's
        pristine tree, or (a task with setup.sh, built afresh) a copy made at `snapshot`. Both
        lie outside the agent's reach."""
        repo_state = Path(repo_state).resolve()
        if "setup.sh" in self._special(repo_state):
            top = Path(workspace)
            shutil.copytree(workspace, snapshot, symlinks=True,  # the agent's .git is not diffed
                            ignore=lambda d, names: [".git"] if Path(d) == top else [])
            return snapshot
        return self._prepare(repo_state).tree

    def _special(self, repo_state: Path) -> set[str]:
        special = self._special_files.get(repo_state)
        if special is None:
            special = self._special_files[repo_state] = special_files(repo_state)
        return special

    def _prepare(self, repo_state: Path) -> _Prepared:
        with self._lock:
            task_lock = self._task_locks.setdefault(repo_state, threading.Lock())
        with task_lock:
            prepared = self._prepared.get(repo_state)
            if prepared is None:
                prepared = self._build(repo_state)
                self._prepared[repo_state] = prepared
        return prepared

    def _build(self, repo_state: Path) -> _Prepared:
        folder = self.cache_dir / repo_state.parent.name
        remove_tree(folder)  # what a failed earlier attempt left
        tree = repo_state
        if special_files(repo_state) or not repo_state.is_dir():
            tree = build_tree(repo_state, folder / "tree")
        try:
            files = git_files(tree)
            if sum(len(data) for data in files.values()) <= GIT_IN_MEMORY_BYTES:
                return _Prepared(tree, files)
            write_git(folder / "git", files)
            return _Prepared(tree, folder / "git" / ".git")
        except OSError as exc:
            raise WorkspaceError(f"cannot prepare the workspace's .git: {exc}") from None


SCRIPT_ENV_KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM")


def script_env(workspace: Path, home: Path) -> dict[str, str]:
    """What a task's script (setup.sh, a solve script) runs with: the harness's PATH and locale,
    a HOME of its own, never the harness's secrets (they would reach the workspace the agent
    reads), and the marker that finds what it left running."""
    env = {name: os.environ[name] for name in SCRIPT_ENV_KEPT if name in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update({"HOME": str(home), "TMPDIR": str(home),
                "CI_EVAL_SCRIPT": f"{Path(workspace).resolve()}"})
    return env


def run_script(script: Path, workspace: Path, *, what: str, timeout: float = SETUP_TIMEOUT) -> None:
    """Run a task's script (task-author code, like checks.py) with bash in `workspace`: the
    environment of script_env, in the sandbox of requests.script_request where this machine
    has one (no network, writes only to the workspace and its own HOME, nothing left
    running); without one, its own session, and nothing it started left running afterwards
    (its group killed, and whatever left the group found by the marker in its environment)."""
    home = scratch.make("script")
    env = script_env(workspace, home)
    command = ["bash", str(Path(script).resolve())]
    request = script_request(detect(), command, writable=[workspace, home])
    try:
        with Pipe() as status:
            result = run_process(command, cwd=Path(workspace), env=env, timeout=timeout,
                                 sweep_env=f"CI_EVAL_SCRIPT={env['CI_EVAL_SCRIPT']}",
                                 pipes=(status,) if request else (),
                                 launch=(launcher.CHECKS, request) if request else None)
            failure = read_failure(status.read(), result.launch_error)
    finally:
        remove_tree(home)
    if failure is not None:
        raise WorkspaceError(f"{what} could not be started in its sandbox: {failure.message}")
    if result.timed_out:
        raise WorkspaceError(f"{what} did not finish within {timeout:g}s")
    if result.exit_code != 0:
        tail = result.output_tail.strip()[-300:]
        raise WorkspaceError(f"{what} exited {result.exit_code}: {tail}")


def apply_patch(patch: Path, workspace: Path) -> None:
    """git apply, then git apply --3way, then patch --fuzz (as the SWE-bench harness does)."""
    attempts = [
        ["git", "-C", str(workspace), "apply", "--whitespace=nowarn", str(patch)],
        ["git", "-C", str(workspace), "apply", "--3way", "--whitespace=nowarn", str(patch)],
        ["patch", "-p1", "--batch", "--fuzz=3", "-d", str(workspace), "-i", str(patch)],
    ]
    errors = []
    for argv in attempts:
        proc = subprocess.run(argv, capture_output=True, env=_git_env(), check=False)
        if proc.returncode == 0:
            return
        errors.append(proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""])
    raise WorkspaceError(f"{patch.name} does not apply: {errors[0][0]}")


def apply_output(source: Path, workspace: Path) -> None:
    """Apply a known output: a patch file, a solve script, or a folder of them (sorted)."""
    source = Path(source)
    if source.is_dir():
        entries = sorted(p for p in source.iterdir() if p.is_file())
        applicable = [p for p in entries if p.suffix in PATCH_SUFFIXES + (SOLVE_SCRIPT_SUFFIX,)]
        if not applicable:
            raise WorkspaceError(f"{source} holds no *.patch, *.diff or *.sh")
        for entry in applicable:
            apply_output(entry, workspace)
    elif source.suffix in PATCH_SUFFIXES:
        apply_patch(source.resolve(), workspace)
    elif source.suffix == SOLVE_SCRIPT_SUFFIX:
        run_script(source.resolve(), workspace, what=source.name)
    else:
        raise WorkspaceError(f"{source}: expected a *.patch, *.diff or *.sh")


def make_runs_base(*, keep: bool = False) -> Path:
    """This invocation's folder of run folders (scratch.make: what a killed invocation left
    behind is removed by the next one, unless --keep kept it)."""
    return scratch.make("run", keep=keep)
