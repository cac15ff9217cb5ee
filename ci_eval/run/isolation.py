"""What this platform can do to isolate agents and checks, and what the launcher is asked for it.

Both sandboxes are made by the sandbox launcher (launcher.py), which forks each command into its
namespaces. What this platform allows is one typed value, `Isolation`: the launcher's requests,
the one unshare(1) argv still run (checks with only a network namespace) and the label recorded
on every run (results/notices.RecordedIsolation, read back by its one parser) all derive from it.

Agent: a new mount + PID namespace in which every mount is read-only but the run's own
folder (its HOME is a folder of it, run/home.py); /tmp is writable through an overlay whose
writes are discarded; the repo root, the host's HOME (but the tools on PATH in it), the folder of
all runs, results folders and other ci-eval temp folders are covered by empty tmpfs (see
_sandbox.py and docs/isolation.md). With `home: host`, the host's HOME is readable instead and
writable through an overlay. Checks: the same, plus a network namespace with only
loopback, host sockets hidden, the task's solution/ and negatives/ masked, only the workspace and
a reports folder writable. Where a sandbox is impossible, runs still happen and every report says
so (`notices`, the records' `isolation`), never silently.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import ci_eval
from ci_eval.results.notices import ChecksIsolation, RecordedIsolation
from ci_eval.run import launcher
from ci_eval.run._sandbox import View, read_failure
from ci_eval.run.home import OWN_HOME
from ci_eval.run.launcher import Request
from ci_eval.run.process import Pipe, run_process

TEMP_PREFIX = "ci-eval-"


@dataclass(frozen=True)
class Isolation:
    agent_sandboxed: bool  # False: agents run unisolated
    checks: ChecksIsolation  # SANDBOX: mount + PID + network namespace; OFFLINE: only the last
    user_namespace: bool = False  # not root: each namespace set is made in a user namespace
    notices: tuple[str, ...] = ()

    @property
    def checks_sandboxed(self) -> bool:
        return self.checks is ChecksIsolation.SANDBOX

    @property
    def recorded(self) -> RecordedIsolation:
        return RecordedIsolation(self.agent_sandboxed, self.checks)

    @property
    def label(self) -> str:
        return self.recorded.label


UNISOLATED = Isolation(False, ChecksIsolation.ONLINE)


def _works(argv: list[str], cwd: Path | None = None) -> tuple[bool, str]:
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    lines = proc.stderr.decode(errors="replace").strip().splitlines()
    return proc.returncode == 0, (lines[-1] if lines else f"exit {proc.returncode}")


def offline_prefix(user_namespace: bool) -> list[str]:
    """unshare(1) with only a network namespace (root can unshare directly; others need a user
    namespace mapping them to root inside it)."""
    return ["unshare", *(["--user", "--map-root-user"] if user_namespace else []), "--net"]


@functools.lru_cache(maxsize=1)
def detect() -> Isolation:
    if os.environ.get("CI_EVAL_NO_ISOLATION") == "1":
        notice = ("isolation disabled by CI_EVAL_NO_ISOLATION=1: solutions were readable by "
                  "the agent; checks ran without a sandbox and with network access")
        return Isolation(False, ChecksIsolation.ONLINE, notices=(notice,))
    notices: list[str] = []
    user = os.geteuid() != 0
    agent = _probe(user, False, notices, "agent sandbox",
                   "solutions were readable by the agent, and it could write outside its run "
                   "folder")
    checks = ChecksIsolation.SANDBOX
    if not _probe(user, True, notices, "checks sandbox",
                  "agent code run by the checks could read the harness's files"):
        checks = ChecksIsolation.OFFLINE
        if not _works([*offline_prefix(user), "true"])[0]:
            checks = ChecksIsolation.ONLINE
            notices.append("no network namespace here (unshare -n failed): checks ran with "
                           "network access")
    return Isolation(agent, checks, user, tuple(notices))


def _probe(user: bool, net: bool, notices: list[str], what: str, consequence: str) -> bool:
    """Run the real sandbox once on a probe folder, through the launcher the runs will use
    (mount + PID namespaces, and a user / a network namespace as asked): whether it works (if
    not, a notice says so)."""
    probe_dir = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX + "probe-"))
    try:
        run = probe_dir / "run"
        (run / "reports").mkdir(parents=True)
        (probe_dir / "repo" / "solution").mkdir(parents=True)
        view = _view(probe_dir / "repo", probe_dir, (), home=None)
        shown = sandbox_view(
            private=view.private, tmpfs=view.tmpfs, hide=view.hidden, keep=view.keep,
            writable=[run], mask=[probe_dir / "repo" / "solution"], home=view.home,
            scratch=run / SCRATCH)
        request = Request(("true",), shown, user, net)
        with Pipe() as status:
            result = run_process(["true"], cwd=run, env={"PATH": os.defpath}, timeout=20,
                                 pipes=(status,), launch=(launcher.AGENTS, request))
            failure = read_failure(status.read(), result.launch_error)
        works = result.exit_code == 0 and failure is None
        why = failure.message if failure else (
            result.output_tail.strip().splitlines() or [f"exit {result.exit_code}"])[-1]
    finally:
        release_scratch(probe_dir / "run")
        shutil.rmtree(probe_dir, ignore_errors=True)
    if not works:
        notices.append(f"no {what} here ({why[:200]}): {consequence}")
    return works


# Writable in the sandbox, but through an overlay whose writes are discarded with the run (what
# was there stays readable: wrapper scripts and fixtures in /tmp keep working; sockets in them are
# not reachable through the overlay). /var/tmp and /dev/shm get fresh, empty tmpfs mounts.
PRIVATE_TMP = ("/tmp",)
EMPTY_TMP = ("/var/tmp",)
SCRATCH = "overlays"  # in the run folder: the overlays' upper layers (or a fresh HOME)


def sandbox_view(*, private=(), tmpfs=(), hide=(), keep=(), writable=(), mask=(),
                 home: str | None = None, scratch: Path | None = None) -> View:
    """What _sandbox.isolate is to build (see _sandbox.py's docstring), paths as strings."""
    def paths(values) -> tuple[str, ...]:
        return tuple(str(path) for path in values)

    return View(private=paths(private), tmpfs=paths(tmpfs), hide=paths(hide), keep=paths(keep),
                writable=paths(writable), mask=paths(mask), home=home or None,
                scratch=str(scratch) if scratch else None)


def paths_to_hide(repo_root: Path, runs_base: Path, extra=()) -> list[str]:
    """The repo checkout, the git dir of the repository around it, this invocation's runs,
    results folders, and other ci-eval invocations' temp folders. Made for every sandbox
    (folders come and go): one listing of the temp folder, and string work linear in the number
    of folders (this runs twice per run)."""
    hidden = {os.path.realpath(path) for path in (repo_root, runs_base, *extra)}
    hidden.update(str(path) for path in enclosing_git_dirs(Path(repo_root).resolve()))
    temp = os.path.realpath(tempfile.gettempdir())
    try:
        with os.scandir(temp) as entries:
            hidden.update(os.path.join(temp, entry.name) for entry in entries
                          if entry.name.startswith(TEMP_PREFIX)
                          and entry.is_dir(follow_symlinks=False))
    except OSError:
        pass
    # A folder inside another hidden one is covered already (and gone once that one is).
    return sorted(path for path in hidden if not _below_any(path, hidden))


def _below_any(path: str, folders: set[str]) -> bool:
    parent = os.path.dirname(path)
    while parent != path:
        if parent in folders:
            return True
        path, parent = parent, os.path.dirname(parent)
    return False


def enclosing_git_dirs(repo_root: Path) -> list[Path]:
    """The git dir(s) of the repository that holds the repo root (`--root evals` in a larger
    project): actions/checkout leaves its token in .git/config, and the history holds every
    task's solution. A `.git` file (a worktree, a submodule) names its git dir, whose
    `commondir` names the shared one that holds the config."""
    for folder in (repo_root, *repo_root.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return [dot.resolve()]
        if not dot.is_file():
            continue
        try:
            text = dot.read_text(errors="replace")
        except OSError:
            return []
        if not text.startswith("gitdir:"):
            return []
        git_dir = (folder / text[len("gitdir:"):].strip()).resolve()
        found = [git_dir]
        try:
            common = (git_dir / "commondir").read_text(errors="replace").strip()
            found.append((git_dir / common).resolve())
        except OSError:
            pass
        return [path for path in found if path.is_dir() and path != Path("/")]
    return []


def _inside(path: str, folders) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


@dataclass(frozen=True)
class _View:
    private: list[str]
    tmpfs: list[str]
    hidden: list[str]
    keep: list[str]
    home: str | None


def _view(repo_root: Path, runs_base: Path, hide, *, home: str | None, extra_hidden=()) -> _View:
    """What every sandbox of a run hides and discards (see _sandbox.py): /tmp writable with the
    writes discarded, whatever HOME is; /var/tmp and /dev/shm empty and private; the repo root,
    `hide` (results folders) and other ci-eval temp folders covered; the interpreter kept usable.
    `home`: the host's HOME the command shares (home: host: an overlay, writes discarded); None:
    the command has a HOME of its own in a writable folder, and the host's is covered too, but
    the tools on PATH in it (host_home_kept)."""
    private, tmpfs = [], []
    for names, kind in (((*PRIVATE_TMP, tempfile.gettempdir()), private), (EMPTY_TMP, tmpfs)):
        for name in names:
            path = os.path.realpath(name)
            # not over /: a TMPDIR of / only gets its ci-eval folders hidden
            if os.path.isdir(path) and path != "/" and path not in private + tmpfs:
                kind.append(path)
    hidden = paths_to_hide(repo_root, runs_base, hide)
    kept = list(_interpreter_prefixes())
    host = None if home is not None else hidden_host_home(private + tmpfs)
    if host is not None:
        kept += [p for p in host_home_kept(host, os.environ.get("PATH", ""))
                 if not _inside(p, hidden)]
    hidden += [p for p in (*extra_hidden, *([host] if host else ()))
               if os.path.isdir(p) and not _inside(p, hidden)]
    covered = [prefix for prefix in dict.fromkeys(kept)  # a venv in the repo, /tmp or HOME
               if _inside(prefix, [*hidden, *private, *tmpfs])]
    keep = [prefix for prefix in covered
            if not any(other != prefix and _inside(prefix, [other]) for other in covered)]
    return _View(private, tmpfs, hidden, keep, home)


def hidden_host_home(temp_folders: list[str]) -> str | None:
    """The host's HOME, to cover for a command with a HOME of its own; None where covering it
    would cover a temp folder too (HOME=/tmp, HOME=/ in containers, TMPDIR inside HOME): then
    it stays as visible as that folder."""
    home = os.environ.get("HOME")
    if not home or not os.path.isabs(home):
        return None
    path = os.path.realpath(home)
    if path == "/" or any(_inside(folder, [path]) for folder in temp_folders):
        return None
    return path


def host_home_kept(home: str, path_value: str) -> list[str]:
    """What stays readable of a covered HOME: the install prefix of each PATH folder in it (the
    folder holding bin/: ~/.local for ~/.local/bin, ~/.cargo, ~/.pyenv for its shims, a node
    version of nvm), so the tools on PATH still run; a PATH folder directly in HOME (~/bin) on
    its own. HOME itself on PATH keeps nothing."""
    found: list[str] = []
    for entry in path_value.split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        folder = os.path.realpath(entry)
        if folder == home or not _inside(folder, [home]) or not os.path.isdir(folder):
            continue
        parent = os.path.dirname(folder)
        prefix = folder if parent == home else parent
        if prefix not in found:
            found.append(prefix)
    return found


@functools.lru_cache(maxsize=1)
def _interpreter_prefixes() -> tuple[str, ...]:
    return tuple(sorted({os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}))


def agent_request(isolation: Isolation, command: list[str], *, repo_root: Path,
                  runs_base: Path, run_dir: Path, hide=(), home: str | None = None,
                  keep=()) -> Request | None:
    """The agent's command inside its sandbox, for the launcher: every mount read-only but the
    run folder, which holds its own HOME (see _view for the rest; `home`: the host's HOME
    instead, home: host). `keep`: paths bound back read-only inside what `hide` covers (the
    resolver's file under a hidden /run). None: agents run unisolated here."""
    if not isolation.agent_sandboxed:
        return None
    run_dir = Path(run_dir).resolve()
    view = _view(repo_root, runs_base, hide, home=home)
    shown = sandbox_view(private=view.private, tmpfs=view.tmpfs, hide=view.hidden,
                         keep=[*view.keep, *keep], writable=[run_dir], home=view.home,
                         scratch=run_dir / SCRATCH)
    return Request(tuple(command), shown, user=isolation.user_namespace, net=False)


SOCKET_FOLDERS = ("/run",)  # host unix sockets (docker, dbus): a read-only mount does not stop connect()
CHECKS_HIDDEN_PARTS = ("solution", "negatives")  # of the task folder


def checks_request(isolation: Isolation, checks_py: Path, *, task_dir: Path, workspace: Path,
                   checks_dir: Path, repo_root: Path, runs_base: Path, hide=(),
                   home: str | None = None, held: bool = False) -> Request | None:
    """checks.py inside the checks' sandbox, for the launcher: like the agent's view, plus no
    network, host sockets hidden, the task folder readable without its solution/ and
    negatives/, ci-eval's own package readable, and only the workspace and checks_dir/reports
    writable, and checks_dir/home, their own HOME, unless `home` (the host's HOME, home: host).
    Every process they start dies with them (PID namespace). held: the workspace is
    bound only if it is still the folder of a descriptor handed along, and the sandbox waits
    on a gate (scoring.ChecksRun).
    None: no checks sandbox here (see unsandboxed_checks_argv)."""
    if not isolation.checks_sandboxed:
        return None
    checks_dir = Path(checks_dir).resolve()
    task_dir = Path(task_dir).resolve()
    view = _view(repo_root, runs_base, hide, home=home, extra_hidden=SOCKET_FOLDERS)
    keep = [*view.keep, task_dir, Path(ci_eval.__file__).resolve().parent]
    writable = [Path(workspace).resolve(), checks_dir / "reports"]
    writable += [] if home else [checks_dir / OWN_HOME]
    shown = sandbox_view(private=view.private, tmpfs=view.tmpfs, hide=view.hidden,
                         keep=keep, writable=writable,
                         mask=[task_dir / part for part in CHECKS_HIDDEN_PARTS],
                         home=view.home, scratch=checks_dir / SCRATCH)
    return Request((), shown, user=isolation.user_namespace, net=True, mode="checks",
                   checks=str(Path(checks_py).resolve()), sys_path=checks_sys_path(),
                   gated=held, held=(str(Path(workspace).resolve()),) if held else ())


@dataclass(frozen=True)
class ChecksReach:
    """What of the host the checks' sandbox shows, for resolving a task's `requires` as the
    checks will see them (preflight): `hidden_by(path)` is the covered folder that hides path
    from the checks, or None when they can reach it."""

    hidden: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()

    def hidden_by(self, path: str | Path, *also_kept: Path) -> str | None:
        real = os.path.realpath(path)
        if _inside(real, [*self.kept, *(str(Path(p).resolve()) for p in also_kept)]):
            return None
        return next((folder for folder in self.hidden if _inside(real, [folder])), None)


def checks_reach(isolation: Isolation, repo_root: Path, *, hide=(),
                 host_home: bool = False) -> ChecksReach:
    """The checks' view (checks_request) of an invocation on repo_root; everything is reachable
    without a checks sandbox. A task's own folder is bound back too (hidden_by's also_kept)."""
    if not isolation.checks_sandboxed:
        return ChecksReach()
    home = os.environ.get("HOME") if host_home else None
    view = _view(repo_root, repo_root, hide, home=home, extra_hidden=SOCKET_FOLDERS)
    kept = (*view.keep, str(Path(ci_eval.__file__).resolve().parent))
    return ChecksReach(tuple(view.hidden + view.tmpfs), kept)


@functools.lru_cache(maxsize=1)
def checks_sys_path() -> tuple[str, ...]:
    """sys.path for checks.py, as `python -I` would start with it (launcher.checks_sys_path)."""
    return launcher.checks_sys_path()


def unsandboxed_checks_argv(isolation: Isolation, command: list[str]) -> list[str]:
    """Without a checks sandbox: only a network namespace, if that works here."""
    if isolation.checks is ChecksIsolation.OFFLINE:
        return [*offline_prefix(isolation.user_namespace), *command]
    return list(command)


def release_scratch(run_dir: Path) -> None:
    """overlayfs leaves its work folder mode 000: fine for root, but a non-root harness could
    not remove the run folder without opening it up again. The folders are opened one level at
    a time without following links: the agent could have planted a link to any host file."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        scratch = os.open(Path(run_dir) / SCRATCH, flags)
    except OSError:
        return
    try:
        for name in os.listdir(scratch):
            _chmod_nested(scratch, [name, "work", "work"], flags)
    finally:
        os.close(scratch)


def _chmod_nested(parent: int, names: list[str], flags: int) -> None:
    """chmod 0700 the folder parent/names[0]/.../names[-1], no link followed on the way."""
    fds = []
    try:
        for name in names[:-1]:
            fds.append(os.open(name, flags, dir_fd=fds[-1] if fds else parent))
        last = fds[-1] if fds else parent
        if stat.S_ISDIR(os.stat(names[-1], dir_fd=last, follow_symlinks=False).st_mode):
            os.chmod(names[-1], 0o700, dir_fd=last)
    except OSError:
        pass
    finally:
        for fd in fds:
            os.close(fd)
