"""An agent's harness: the repo's files that make up the team's agent (CLAUDE.md, .claude/,
AGENTS.md, an agent's own code), declared in ci-eval.yaml or defaulted by its preset, collected
from a root folder (the repo; the drift check's control arm passes another ref's copy) into a
Harness with a digest per file.

    harness:                          # in an agents.NAME entry; [] means none
      - CLAUDE.md                     # a file or folder of the repo, laid into every run's
      - .claude/                      #   workspace at the same relative path
      - {path: agent-home/skills, home: .claude/skills}   # into the run's own HOME instead

Without `harness:`, a preset agent gets the files its tool reads from a project that exist in the
repo (Preset.harness_defaults); a command agent gets none. What a harness may hold (each refusal
one line naming the entry, exit 2): a relative path without "..", that exists, outside tasks/ and
archive/ (the answers), not through a symlink, and no symlink inside it that leaves the repo or
points into tasks/ or archive/ (links are laid as links, never followed); regular files, folders
and links only; at most MAX_FILES files and MAX_BYTES bytes in all. `.git` and `__pycache__`
folders inside a harness folder are left out (neither is the team's agent).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ci_eval.agents.presets import PRESETS
from ci_eval.agents.values import got
from ci_eval.errors import UserError
from ci_eval.output import UntrustedFile, read_capped
from ci_eval.tasks.model import ARCHIVE_DIR
from ci_eval.verdict.harness_changes import harness_digest

MAX_FILES = 1000
MAX_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64  # folders deep
SKIPPED_FOLDERS = (".git", "__pycache__")
ANSWER_FOLDERS = ("tasks", ARCHIVE_DIR)
ENTRY_KEYS = ("path", "home")
WORKSPACE, HOME = "workspace", "home"
LISTED = 20  # files a run's header names


@dataclass(frozen=True)
class HarnessEntry:
    path: str  # relative to the repo root, "/"-separated, normalised
    home: str | None = None  # relative to the run's HOME; None: the workspace, at `path`

    def __str__(self) -> str:
        return f"{self.path} -> ~/{self.home}" if self.home is not None else self.path


@dataclass(frozen=True)
class HarnessFile:
    key: str  # its path in the repo
    place: str  # WORKSPACE or HOME
    dest: str  # relative to the workspace or the HOME
    mode: int  # 0o644, 0o755, or 0 for a link
    link: str | None  # a link's target (laid as a link), else None
    digest: str  # sha256 over placement, mode and content (or target)
    size: int
    data: bytes = field(default=b"", repr=False, compare=False)  # as read when collected


@dataclass(frozen=True)
class Harness:
    root: Path
    files: tuple[HarnessFile, ...] = ()
    entries: tuple[HarnessEntry, ...] = ()
    source: str = "none"  # "declared" (ci-eval.yaml), "preset NAME" (its defaults), "none"

    @property
    def file_digests(self) -> dict[str, str]:
        return {f.key: f.digest for f in self.files}

    @property
    def digest(self) -> str:
        return harness_digest(self.file_digests)

    def placed(self, place: str) -> tuple[HarnessFile, ...]:
        return tuple(f for f in self.files if f.place == place)

    def describe(self) -> str:
        """One line for a run's header and `ci-eval show`: never silent about the harness."""
        if not self.entries:
            return f"harness: none ({self.source})"
        size = sum(f.size for f in self.files)
        names = [f.key if f.place == WORKSPACE else f"{f.key} (~/{f.dest})" for f in self.files]
        more = f" and {len(names) - LISTED} more" if len(names) > LISTED else ""
        return (f"harness ({self.source}; {len(self.files)} file(s), {size} bytes, digest "
                f"{self.digest[:12]}): {', '.join(names[:LISTED])}{more}")


def no_harness(root: Path) -> Harness:
    return Harness(Path(root))


def parse_harness(value: Any, path: Path | str, where: str) -> tuple[HarnessEntry, ...]:
    """An entry's `harness:` list (where = "agents.NAME.harness")."""
    if not isinstance(value, list):
        raise UserError(f"expected a list of repo paths (or [] for none), got {got(value)}",
                        path=path, field=where)
    entries: list[HarnessEntry] = []
    for index, item in enumerate(value):
        named = f"{where}[{index}]"
        if isinstance(item, dict):
            unknown = sorted(set(item) - set(ENTRY_KEYS), key=str)
            if unknown or "path" not in item:
                raise UserError(f"expected {{path: REPO_PATH}} or {{path: REPO_PATH, home: "
                                f"PATH_IN_HOME}}, got {got(item)}", path=path, field=named)
            home = item.get("home")
            entry = HarnessEntry(_relative(item["path"], path, f"{named}.path"),
                                 None if home is None else _relative(home, path, f"{named}.home"))
        else:
            entry = HarnessEntry(_relative(item, path, named))
        if entry in entries:
            raise UserError(f"{entry} is listed twice", path=path, field=named)
        entries.append(entry)
    return tuple(entries)


def _relative(value: Any, path: Path | str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"expected a relative path, got {got(value)}", path=path, field=where)
    if value.startswith(("/", "~")):
        raise UserError(f"expected a path relative to the repo root, got absolute {value!r}",
                        path=path, field=where)
    parts = PurePosixPath(value).parts
    if ".." in parts or "\\" in value:
        raise UserError(f"'..' and '\\' are not allowed in a harness path, got {value!r}",
                        path=path, field=where)
    normal = PurePosixPath(*[p for p in parts if p != "."]).as_posix() if parts else "."
    if normal == ".":
        raise UserError("the repo root itself cannot be a harness entry (name its files or "
                        "folders)", path=path, field=where)
    return normal


def collect_harness(entries: Iterable[HarnessEntry], root: Path, *, source: str = "declared",
                    config_path: Path | str = "ci-eval.yaml",
                    where: str = "harness") -> Harness:
    """The files of `entries` under `root`, checked (module docstring) and digested. Links are
    never followed: a link is recorded as its target text. Errors name `where[index]`."""
    root = Path(root).resolve()
    entries = tuple(entries)
    files: dict[tuple[str, str], HarnessFile] = {}
    total = 0
    for index, entry in enumerate(entries):
        named = f"{where}[{index}]"
        for found in _entry_files(entry, root, config_path, named):
            if (found.place, found.dest) in files:
                raise UserError(f"{found.key} is laid twice (another entry covers it too)",
                                path=config_path, field=named)
            files[(found.place, found.dest)] = found
            total += found.size
            if len(files) > MAX_FILES or total > MAX_BYTES:
                raise UserError(f"the harness is over its cap ({MAX_FILES} files, "
                                f"{MAX_BYTES // (1024 * 1024)} MiB in all) at {found.key}",
                                path=config_path, field=named)
    ordered = tuple(sorted(files.values(), key=lambda f: (f.key, f.place, f.dest)))
    return Harness(root, ordered, entries, source)


def _entry_files(entry: HarnessEntry, root: Path, config_path, where: str) -> list[HarnessFile]:
    def refuse(why: str) -> UserError:
        return UserError(f"{entry.path}: {why}", path=config_path, field=where)

    top = entry.path.split("/")[0]
    if top in ANSWER_FOLDERS:
        raise refuse(f"is inside {top}/ (the tasks and their answers are never part of the "
                     "agent)")
    if ".git" in entry.path.split("/"):
        raise refuse("is inside a .git folder")
    current = root
    for part in entry.path.split("/")[:-1]:
        current = current / part
        if os.path.islink(current):
            raise refuse(f"goes through the symlink {current.relative_to(root)} (not followed)")
    target = root / entry.path
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        raise refuse("does not exist in the repo") from None
    except OSError as exc:
        raise refuse(f"cannot be read ({exc.strerror})") from None
    found: list[HarnessFile] = []
    _add(target, info, entry.path, entry, root, found, refuse)
    return found


def _add(path: Path, info: os.stat_result, key: str, entry: HarnessEntry, root: Path,
         found: list[HarnessFile], refuse) -> None:
    if stat.S_ISDIR(info.st_mode):
        try:
            names = sorted(os.listdir(path))
        except OSError as exc:
            raise refuse(f"{key} cannot be listed ({exc.strerror})") from None
        if key.count("/") > MAX_DEPTH or len(names) > MAX_FILES:
            raise refuse(f"{key} is over the harness cap ({MAX_DEPTH} folders deep, "
                         f"{MAX_FILES} names in a folder)")
        for name in names:
            if name in SKIPPED_FOLDERS:
                continue
            child = path / name
            _add(child, os.lstat(child), f"{key}/{name}", entry, root, found, refuse)
            if len(found) > MAX_FILES:
                raise refuse(f"holds more than {MAX_FILES} files (the harness cap)")
        return
    place, dest = _placement(entry, key)
    if stat.S_ISLNK(info.st_mode):
        link = os.readlink(path)
        _check_link(key, link, refuse)
        found.append(HarnessFile(key, place, dest, 0, link, file_digest(place, dest, 0,
                                                                   link.encode()), 0))
        return
    if not stat.S_ISREG(info.st_mode):
        raise refuse(f"{key} is not a regular file, folder or link")
    if info.st_size > MAX_BYTES:
        raise refuse(f"{key} is {info.st_size} bytes, over the harness cap of "
                     f"{MAX_BYTES // (1024 * 1024)} MiB")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    mode = 0o755 if info.st_mode & 0o111 else 0o644
    found.append(HarnessFile(key, place, dest, mode, None, file_digest(place, dest, mode, data),
                             len(data), data))


def _placement(entry: HarnessEntry, key: str) -> tuple[str, str]:
    if entry.home is None:
        return WORKSPACE, key
    rest = key[len(entry.path):].lstrip("/")
    return HOME, f"{entry.home}/{rest}" if rest else entry.home


def _check_link(key: str, link: str, refuse) -> None:
    if os.path.isabs(link):
        raise refuse(f"{key} is a symlink to an absolute path ({link}), which leaves the repo")
    resolved = os.path.normpath(os.path.join(os.path.dirname(key), link))
    if resolved == ".." or resolved.startswith("../"):
        raise refuse(f"{key} is a symlink leaving the repo ({link})")
    if resolved.split("/")[0] in ANSWER_FOLDERS:
        raise refuse(f"{key} is a symlink into {resolved.split('/')[0]}/ ({link})")


def file_digest(place: str, dest: str, mode: int, data: bytes) -> str:
    head = f"{place}\0{dest}\0{mode:o}\0".encode()
    return hashlib.sha256(head + data).hexdigest()


def task_conflicts(harness: Harness, repo_states: Iterable[tuple[str, Path]]) -> None:
    """A task whose repo-state already holds a file at a harness path of the workspace: an
    error naming both (overriding either side silently would hide something). Checked before
    any run; a path made by setup.sh or an upstream tree is refused when the run lays the
    harness (run/workspace/harness_files.py)."""
    laid = harness.placed(WORKSPACE)
    if not laid:
        return
    for task_id, repo_state in repo_states:
        for item in laid:
            if os.path.lexists(Path(repo_state) / item.dest):
                raise UserError(
                    f"task {task_id}'s repo-state holds {item.dest}, which is also a harness file "
                    f"of the agent ({harness.source}): rename one, or leave it out of the harness",
                    path=Path(repo_state) / item.dest, field="harness")


READ_CAP_BYTES = 256 * 1024  # a config file a preset reads for its default harness


def agent_harness(agent: Any, root: Path, *, config_path: Path | str = "ci-eval.yaml") -> Harness:
    """The harness of `agent` (an AgentConfig) read from `root`: its declared `harness:`, else
    its preset's defaults that exist under root, else none (a built-in, or a command agent that
    declares none)."""
    root = Path(root)
    where = f"agents.{agent.name}.harness"
    if agent.builtin:
        return Harness(root, source="built-in agent")
    if agent.harness is not None:
        if agent.home == "host" and any(e.home is not None for e in agent.harness):
            raise UserError("a home entry goes into the run's own HOME: it needs home: run "
                            "(the host's HOME is never written)", path=config_path, field=where)
        return collect_harness(agent.harness, root, source="declared in ci-eval.yaml",
                               config_path=config_path, where=where)
    if not agent.preset:
        return Harness(root, source="a command agent: declare harness: in ci-eval.yaml")
    names = PRESETS[agent.preset].harness_defaults(agent.args, lambda name: repo_text(root, name))
    entries = []
    for name in dict.fromkeys(names):
        try:
            entry = HarnessEntry(_relative(name, config_path, where))
        except UserError:
            continue  # what a config file names outside the repo is not the repo's to carry
        if os.path.lexists(root / entry.path) and entry not in entries:
            entries.append(entry)
    return collect_harness(entries, root, source=f"the {agent.preset} preset's defaults",
                           config_path=config_path, where=f"{where} (default)")


def repo_text(root: Path, name: str) -> str | None:
    """A repo file's text for a preset's defaults (capped, never through a link), or None."""
    try:
        data = read_capped(Path(root) / name, READ_CAP_BYTES)
    except UntrustedFile:
        return None
    return data.decode("utf-8", errors="replace") if data is not None else None


def harness_problems(agents: Iterable[Any], root: Path, repo_states: list[tuple[str, Path]],
                     config_path: Path | str) -> list[str]:
    """`ci-eval validate`: each configured agent's harness collected and checked against the
    tasks' repo-states; one line per agent whose harness is refused."""
    problems = []
    for agent in agents:
        try:
            task_conflicts(agent_harness(agent, root, config_path=config_path), repo_states)
        except UserError as exc:
            problems.append(str(exc))
    return problems
