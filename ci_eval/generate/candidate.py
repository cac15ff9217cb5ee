"""What every candidate goes through, wherever it came from: the base and the base with the
solution probed twice each, judged, given a prompt that passes the leak check, written as a task
folder in the staging area and proved by `ci-eval verify`'s own verify_task."""

from __future__ import annotations

import difflib
import itertools
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.generate import decide
from ci_eval.generate.probe import Probe, Prober
from ci_eval.generate.prompts import safe_prompt
from ci_eval.generate.taskfolder import TaskParts, write_task
from ci_eval.importers.base import kebab
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.run.verify import verify_task
from ci_eval.run.workspace.build import remove_tree, special_files
from ci_eval.tasks.load import load_task

RUNS_PER_STATE = 2


@dataclass
class MiningContext:
    """What the candidates of one invocation share."""

    bare: Path  # our clone of the repository under mining
    repo_name: str
    isolation: Isolation
    prober: Prober
    work: Path  # private scratch and staging folder of the invocation
    created: str
    pytest_args: list[str] = field(default_factory=list)
    limits: decide.Limits = field(default_factory=decide.Limits)
    timeout: float = 120.0
    _numbers: itertools.count = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def scratch(self, key: str) -> Path:
        with self._lock:
            number = next(self._numbers)
        folder = self.work / "scratch" / f"{number}-{key[:12]}"
        folder.mkdir(parents=True)
        return folder


@dataclass
class Candidate:
    key: str  # the commit, or the mutation's id
    reason: str = ""  # empty: kept
    detail: str = ""
    staged: Path | None = None  # the verified task folder (kept only)
    name: str = ""
    duplicate_key: str = ""
    fail_to_pass: int = 0

    @property
    def kept(self) -> bool:
        return not self.reason


def file_patch(path: str, old: str, new: str) -> bytes:
    """A patch (git apply -p1) turning `old` into `new` in the file `path`."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 f"a/{path}", f"b/{path}", n=3)
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
    return f"diff --git a/{path} b/{path}\n{text}".encode()


def probe_states(ctx: MiningContext, base: Path, solution: Path,
                 solved: list[Probe] | None = None) -> tuple[list[Probe], list[Probe], str, str]:
    """(base runs, solved runs, rejection reason, detail); the reason is empty when every run
    gave outcomes. `solved`: runs already made of the solved state (mutations share one)."""
    at_base = ctx.prober.run(base, [], ctx.pytest_args, times=RUNS_PER_STATE)
    if solved is None:
        solved = ctx.prober.run(base, [solution], ctx.pytest_args, times=RUNS_PER_STATE)
    for probe in at_base + solved:
        if probe.timed_out:
            return at_base, solved, decide.TIMED_OUT, probe.problem
        if probe.outcomes is None:
            reason = decide.NOT_APPLIED if probe.problem.startswith("does not apply") \
                else decide.NO_EVIDENCE
            return at_base, solved, reason, probe.problem
    return at_base, solved, "", ""


def stage(ctx: MiningContext, key: str, name: str, base: Path, solution: bytes, judged,
          summary: str, origin: dict, negatives: dict[str, bytes] | None = None) -> Candidate:
    """The judged candidate as a task folder in staging, proved by verify_task."""
    sources = {}
    for test in judged.fail_to_pass:
        path = base / test.split("::")[0]
        if path.is_file():
            sources[test.split("::")[0]] = path.read_text(encoding="utf-8", errors="replace")
    solution_text = solution.decode("utf-8", errors="replace")
    text = safe_prompt(judged.fail_to_pass, summary, sources, solution_text)
    if text is None:
        return Candidate(key, decide.LEAK, "the failure itself repeats a line of the fix")
    files, lines = decide.patch_size(solution_text)
    origin = {**origin, "key": key}
    parts = TaskParts(
        name=name, base=base, prompt=text, solution=solution,
        fail_to_pass=judged.fail_to_pass, pass_to_pass=judged.pass_to_pass,
        pytest_args=ctx.pytest_args, origin=origin, created=ctx.created,
        difficulty=decide.difficulty(files, lines, len(judged.fail_to_pass)),
        negatives=negatives or {}, timeout=ctx.timeout)
    folder = ctx.work / "staging" / key[:40] / "tasks" / f"task-001-{name}"
    remove_tree(folder.parents[1])
    write_task(parts, folder)
    verdict = verify_task(load_task(folder), ctx.isolation)
    if not verdict.valid:
        remove_tree(folder.parents[1])
        return Candidate(key, decide.VERIFY_FAILED, verdict.problems[0][:300])
    return Candidate(key, staged=folder, name=name,
                     duplicate_key=decide.duplicate_key(solution_text, judged.fail_to_pass),
                     fail_to_pass=len(judged.fail_to_pass))


def finish(ctx: MiningContext, key: str, base: Path, solution: bytes, origin: dict,
           work: Path) -> Candidate:
    """A history candidate from its base tree and solution patch."""
    if special_files(base):
        return Candidate(key, decide.UNSUPPORTED, "the tree's top holds setup.sh or a *.patch, "
                         "which repo-state/ would run or apply")
    patch = work / "fix.patch"
    patch.write_bytes(solution)
    at_base, solved, reason, detail = probe_states(ctx, base, patch)
    if reason:
        return Candidate(key, reason, detail[:300])
    # without a reason, every probe read its outcomes
    judged = decide.judge([p.outcomes or {} for p in at_base], [p.outcomes or {} for p in solved])
    if judged.reason:
        return Candidate(key, judged.reason, judged.detail[:300])
    test_name = judged.fail_to_pass[0].split("::")[-1].split("[")[0]
    name = kebab(f"{ctx.repo_name}-{key[:8]}-{test_name}")[:60].strip("-")
    return stage(ctx, key, name, base, solution, judged, at_base[0].summary, origin)
