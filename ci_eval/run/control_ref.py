"""`run --control-ref REF`: the control arm's agent and files, from REF's tree.

REF (e.g. origin/main, the PR's merge base) is read with git itself, never checked out: `git
archive` of its commit, with the system and global git config off, unpacked (plain members
only: plain_tar) into a temp folder. Its ci-eval.yaml gives the arm's agent entry (the same
name as the PR's --agent, or REF's default_agent); the tree is the arm's harness root (where its
command's scripts, and with agents.<name>.harness its harness files, are read from). The tasks
stay the PR's: the instrument does not change between the arms."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

from ci_eval.agents.config_file import load_config, resolve_agent
from ci_eval.errors import UserError
from ci_eval.plain_tar import extract_plain
from ci_eval.results.control_arm import check_marked
from ci_eval.results.store import drop_torn_tail, results_path
from ci_eval.run.sandbox import scratch
from ci_eval.run.context import Arm
from ci_eval.run.resume import check_resumable, read_recorded
from ci_eval.tasks.upstream import GIT_ENV

CONTROL = "control"
GIT_TIMEOUT = 300
# A ref as git spells one, never an option: no leading "-", no whitespace or control characters.
REF_PATTERN = re.compile(r"^[A-Za-z0-9_./@^~{}+:-]{1,200}$")


def _git(repo_root: Path, *args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo_root), *args], env=env, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=GIT_TIMEOUT, check=False)


def ref_commit(repo_root: Path, ref: str) -> str:
    """The commit REF names in the repo at repo_root; UserError (--control-ref) otherwise."""
    if not REF_PATTERN.fullmatch(ref) or ref.startswith("-"):
        raise UserError(f"expected a git ref or commit (e.g. origin/main), got {ref!r}",
                        field="--control-ref")
    try:
        found = _git(repo_root, "rev-parse", "--verify", "--quiet", "--end-of-options",
                     f"{ref}^{{commit}}")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"git could not be run ({exc})", field="--control-ref") from None
    if found.returncode != 0:
        raise UserError(f"{ref!r} is no commit of the repo at {repo_root} (fetch it first, e.g. "
                        "`git fetch origin main`; a shallow clone has only its own commit)",
                        field="--control-ref")
    return found.stdout.decode().strip()


def extract_tree(repo_root: Path, commit: str, into: Path) -> Path:
    """REF's tree (tracked files only) unpacked into `into`/tree; returns that folder."""
    tree = into / "tree"
    tree.mkdir(parents=True)
    archive = into / "tree.tar"
    with open(archive, "wb") as out:
        made = _git(repo_root, "archive", "--format=tar", commit, stdout=out)
    if made.returncode != 0:
        reason = made.stderr.decode(errors="replace").strip().splitlines()
        raise UserError(f"git archive {commit[:12]} failed: {reason[-1] if reason else '?'}",
                        field="--control-ref")
    with tarfile.open(archive) as opened:
        extract_plain(opened, tree)
    archive.unlink()
    return tree


def control_arm(repo_root: Path, ref: str, agent_name: str | None,
                workdir: Path | None = None) -> Arm:
    """The control arm of REF: its agent entry and its tree as the harness root. `workdir`: the
    folder to unpack into (default: a new temp folder; the caller removes it)."""
    commit = ref_commit(repo_root, ref)
    into = Path(workdir) if workdir else scratch.make("control")
    try:
        tree = extract_tree(repo_root, commit, into)
        agent = resolve_agent(load_config(tree), agent_name, None)
    except BaseException as exc:
        if workdir is None:
            shutil.rmtree(into, ignore_errors=True)
        if isinstance(exc, UserError):
            raise UserError(f"{ref} ({commit[:12]}): {exc}", field="--control-ref") from None
        raise
    return Arm(CONTROL, agent, tree)


def take_over_control(tasks, folder: Path, identity: str | None, *, resume: bool,
                      fresh: bool) -> dict[str, list[dict]]:
    """What `folder` (RESULTS/control) holds for these tasks, settled as `run` settles the PR's
    results: --fresh removes it, --resume reads it (refused when another agent or prompt made
    it), anything else with runs already there is refused. Returns task id -> records to
    resume. identity None: this invocation has no control arm (nothing is resumed)."""
    existing = [t for t in tasks if results_path(folder, t.id).exists()]
    if not existing:
        return {}
    if fresh:
        for task in existing:
            results_path(folder, task.id).unlink()
        return {}
    if not resume:
        raise UserError(f"control-arm results already recorded for {len(existing)} task(s), e.g. "
                        f"{existing[0].id} (use --resume to continue them or --fresh to discard "
                        "them)", path=folder, field="--out")
    if identity is None:
        return {}
    found = read_recorded(tasks, folder, allow_torn_tail=True)
    check_resumable(tasks, found, identity)
    for read in found.values():
        check_marked(read.records, read.lines, read.path)
        drop_torn_tail(read)
    return {task: read.records for task, read in found.items()}
