"""What a sandbox shows: the view of the host every agent and checks sandbox is built from.

Agent: a new mount + PID namespace in which every mount is read-only but the run's own
folder (its HOME is a folder of it, run/sandbox/home.py); /tmp is writable through an overlay
whose writes are discarded; the repo root, the host's HOME (but the tools on PATH in it), the
folder of all runs, results folders and other ci-eval temp folders are covered by empty tmpfs
(see sandbox_program.py and docs/isolation.md). With `home: host`, the host's HOME is readable
instead and writable through an overlay. Checks: the same, plus a network namespace with only
loopback, host sockets hidden, the task's solution/ and negatives/ masked, only the workspace
and a reports folder writable (requests.py).
"""

from __future__ import annotations

import functools
import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ci_eval.run.sandbox import scratch
from ci_eval.run.sandbox.sandbox_program import View

TEMP_PREFIX = scratch.PREFIX

# Writable in the sandbox, but through an overlay whose writes are discarded with the run (what
# was there stays readable: wrapper scripts and fixtures in /tmp keep working; sockets in them are
# not reachable through the overlay). /var/tmp and /dev/shm get fresh, empty tmpfs mounts.
PRIVATE_TMP = ("/tmp",)
EMPTY_TMP = ("/var/tmp",)
SCRATCH = "overlays"  # in the run folder: the overlays' upper layers (or a fresh HOME)


def paths_to_hide(repo_root: Path, runs_base: Path, extra=()) -> list[str]:
    """The repo checkout, the git dir of the repository around it, this invocation's runs,
    results folders, and other ci-eval invocations' temp folders. Made for every sandbox
    (folders come and go): one listing of the temp folder, and string work linear in the number
    of folders (this runs twice per run)."""
    hidden = set(_fixed_hidden(str(repo_root), str(runs_base), tuple(map(str, extra))))
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


@functools.lru_cache(maxsize=32)
def _fixed_hidden(repo_root: str, runs_base: str, extra: tuple[str, ...]) -> frozenset[str]:
    """The part of paths_to_hide that cannot change within an invocation (the agent cannot write
    to any of these paths' parents), resolved once: two sandboxes per run asked for it."""
    hidden = {os.path.realpath(path) for path in (repo_root, runs_base, *extra)}
    hidden.update(str(path) for path in enclosing_git_dirs(Path(repo_root).resolve()))
    return frozenset(hidden)


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


def inside(path: str, folders) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


@dataclass(frozen=True)
class RunView:
    private: list[str]
    tmpfs: list[str]
    hidden: list[str]
    keep: list[str]
    home: str | None

    def for_command(self, *, writable, scratch_in: Path, keep=(), mask=()) -> View:
        """What sandbox_program.isolate is to build for one command (see sandbox_program.py's
        docstring), paths as strings: this view, plus what the command may write, the
        overlays' upper layers in scratch_in/overlays, `keep` bound back read-only beside
        what the view keeps, and `mask` shown empty."""
        return View(private=_strings(self.private), tmpfs=_strings(self.tmpfs),
                    hide=_strings(self.hidden), keep=_strings([*self.keep, *keep]),
                    writable=_strings(writable), mask=_strings(mask), home=self.home or None,
                    scratch=str(Path(scratch_in) / SCRATCH))


def _strings(paths) -> tuple[str, ...]:
    return tuple(str(path) for path in paths)


def run_view(repo_root: Path, runs_base: Path, hide, *, home: str | None, extra_hidden=()) -> RunView:
    """What every sandbox of a run hides and discards (see sandbox_program.py): /tmp writable with the
    writes discarded, whatever HOME is; /var/tmp and /dev/shm empty and private; the repo root,
    `hide` (results folders) and other ci-eval temp folders covered; the interpreter kept usable.
    `home`: the host's HOME the command shares (home: host: an overlay, writes discarded); None:
    the command has a HOME of its own in a writable folder, and the host's is covered too, but
    the tools on PATH in it (host_home_kept)."""
    private: list[str] = []
    tmpfs: list[str] = []
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
                 if not inside(p, hidden)]
    hidden += [p for p in (*extra_hidden, *([host] if host else ()))
               if os.path.isdir(p) and not inside(p, hidden)]
    covered = [prefix for prefix in dict.fromkeys(kept)  # a venv in the repo, /tmp or HOME
               if inside(prefix, [*hidden, *private, *tmpfs])]
    keep = [prefix for prefix in covered
            if not any(other != prefix and inside(prefix, [other]) for other in covered)]
    return RunView(private, tmpfs, hidden, keep, home)


def hidden_host_home(temp_folders: list[str]) -> str | None:
    """The host's HOME, to cover for a command with a HOME of its own; None where covering it
    would cover a temp folder too (HOME=/tmp, HOME=/ in containers, TMPDIR inside HOME): then
    it stays as visible as that folder."""
    home = os.environ.get("HOME")
    if not home or not os.path.isabs(home):
        return None
    path = os.path.realpath(home)
    if path == "/" or any(inside(folder, [path]) for folder in temp_folders):
        return None
    return path


def host_home_kept(home: str, path_value: str) -> list[str]:
    """What stays readable of a covered HOME: the install prefix of each PATH folder in it (the
    folder holding bin/: ~/.local for ~/.local/bin, ~/.cargo, ~/.pyenv for its shims, a node
    version of nvm), so the tools on PATH still run; a PATH folder directly in HOME (~/bin) on
    its own. HOME itself on PATH keeps nothing. Resolved once per (HOME, PATH): both sandboxes of every
    run ask."""
    return list(_host_home_kept(home, path_value))


@functools.lru_cache(maxsize=8)
def _host_home_kept(home: str, path_value: str) -> tuple[str, ...]:
    found: list[str] = []
    for entry in path_value.split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        folder = os.path.realpath(entry)
        if folder == home or not inside(folder, [home]) or not os.path.isdir(folder):
            continue
        parent = os.path.dirname(folder)
        prefix = folder if parent == home else parent
        if prefix not in found:
            found.append(prefix)
    return tuple(found)


@functools.lru_cache(maxsize=1)
def _interpreter_prefixes() -> tuple[str, ...]:
    return tuple(sorted({os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}))


# Host unix sockets (docker, dbus): a read-only mount does not stop connect(), so both sandboxes
# cover them. Container engines listen here on Linux hosts (Docker, rootless Docker, containerd,
# Podman: all under /run = /var/run), and whoever reaches an engine's socket is root on the host.
SOCKET_FOLDERS = ("/run",)


def socket_folders(environ=os.environ) -> tuple[str, ...]:
    """Folders holding engine sockets, for both sandboxes to cover: /run, and the folder of a
    unix DOCKER_HOST / CONTAINERD_ADDRESS elsewhere."""
    found = list(SOCKET_FOLDERS)
    for name in ("DOCKER_HOST", "CONTAINERD_ADDRESS"):
        value = environ.get(name, "")
        path = value[len("unix://"):] if value.startswith("unix://") else (
            value if value.startswith("/") else "")
        if path:
            folder = os.path.dirname(os.path.realpath(path))
            if folder not in ("/", "") and folder not in found:
                found.append(folder)
    return tuple(found)


RESOLVER_FILES = ("/etc/resolv.conf", "/etc/hosts")


def kept_under(folders: tuple[str, ...], files: tuple[str, ...] = RESOLVER_FILES) -> tuple[str, ...]:
    """The resolver's files that lie inside `folders` once their links are followed (Ubuntu's
    /etc/resolv.conf is /run/systemd/resolve/stub-resolv.conf): bound back for the agent, so
    that hiding /run does not take its DNS."""
    kept = []
    for name in files:
        target = os.path.realpath(name)
        if target != name and os.path.isfile(target) and inside(target, folders):
            kept.append(target)
    return tuple(kept)


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
    fds: list[int] = []
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
