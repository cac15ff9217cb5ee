"""Running a mined tree's test suite as checks run: the tree is the repo-state/ of a throwaway
task whose checks.py (ours) runs pytest over the whole suite, in the checks' sandbox (its own
mount and PID namespace, no network, the harness's folders hidden), every test's outcome read
from the structured report. The repository under mining is untrusted: its tests and conftest.py
run only there."""

from __future__ import annotations

import itertools
import json
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_eval.generate.taskfolder import source_roots
from ci_eval.run.checks.scoring import CheckKind, run_checks
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.run.workspace.build import WorkspaceError, apply_output, create_workspace, remove_tree
from ci_eval.tasks.model import Task

PROBE_SETTINGS = "probe.json"
# The probe's checks.py: the suite (or the named tests) under the project's own pytest
# configuration; the verdict is "fail" with pytest's summary line of the first failure, which
# the prompt quotes as what the user sees.
PROBE_CHECKS = '''"""ci-eval generate's probe: the suite's outcomes (read by the harness from the report)."""

import json
import os

from ci_eval.checks import failed, main, passed, run_pytest, task_dir

SETTINGS = json.loads((task_dir() / "probe.json").read_text(encoding="utf-8"))
# absolute: pytest reads a relative pythonpath from the ini file's folder (/dev for -c /dev/null)
PATHS = [f"-opythonpath={' '.join(os.path.abspath(p) for p in SETTINGS['pythonpath'])}"]
os.environ["COLUMNS"] = "300"  # pytest cuts its summary lines to the terminal's width


def suite():
    run = run_pytest([*PATHS, *SETTINGS["args"]], project_config=True,
                     timeout=SETTINGS["timeout"])
    if run.outcomes is None:
        return failed("no outcomes: " + run.problem + ": " + " ~ ".join(
            run.output.splitlines()[-3:]))
    said = [line for line in run.output.splitlines() if line.startswith(("FAILED ", "ERROR "))
            and not line.split()[1].startswith("/")]  # not the sentinel (outside the tree)
    return failed(said[0]) if said else passed("ran")


main(suite)
'''


@dataclass(frozen=True)
class Probe:
    outcomes: dict[str, str] | None  # None: no evidence the tests ran (problem says why)
    problem: str = ""
    timed_out: bool = False
    summary: str = ""  # pytest's line for the first failure ("FAILED id - AssertionError ...")


class Prober:
    """Probes under `work` (a private folder of the invocation), each in a fresh workspace."""

    def __init__(self, work: Path, isolation: Isolation, *, timeout: float = 120):
        self.work, self.isolation, self.timeout = Path(work), isolation, timeout
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def run(self, tree: Path, patches: Sequence[Path] = (), args: Sequence[str] = (),
            *, times: int = 1) -> list[Probe]:
        """The suite of `tree` with `patches` applied, `times` times (each a fresh copy)."""
        with self._lock:
            number = next(self._numbers)
        root = self.work / f"probe-{number}"
        folder = root / "tasks" / "task-001-probe"
        try:
            folder.mkdir(parents=True)
            state = folder / "repo-state"
            shutil.copytree(tree, state, symlinks=False)
            (folder / "checks.py").write_text(PROBE_CHECKS)
            (folder / PROBE_SETTINGS).write_text(json.dumps(
                {"args": list(args), "pythonpath": source_roots(tree),
                 "timeout": max(5.0, self.timeout - 5)}))
            task = Task(id=folder.name, number=1, path=folder,
                        metadata={"timeout_seconds": {"checks": self.timeout}})
            return [self._once(task, state, patches, root, at) for at in range(times)]
        finally:
            remove_tree(root)

    def _once(self, task: Task, state: Path, patches: Sequence[Path], root: Path,
              at: int) -> Probe:
        workspace = root / f"ws-{at}"
        try:
            create_workspace(state, workspace)
            for patch in patches:
                apply_output(patch, workspace)
        except WorkspaceError as exc:
            return Probe(None, f"does not apply: {exc}")
        outcome = run_checks(task, workspace, self.isolation, checks_dir=root / f"checks-{at}",
                             runs_base=root)
        if outcome.kind is CheckKind.TIMEOUT:
            return Probe(None, outcome.reason, timed_out=True)
        if outcome.kind in (CheckKind.INFRA, CheckKind.CRASH, CheckKind.NO_VERDICT):
            return Probe(None, outcome.reason)
        if outcome.reason.startswith("FAIL: no outcomes") or not outcome.test_outcomes:
            return Probe(None, outcome.reason or "no test ran")
        summary = outcome.reason[len("FAIL: "):] if outcome.kind is CheckKind.FAIL else ""
        return Probe(dict(outcome.test_outcomes), summary=summary[:400])
