"""What every run of one invocation shares: the agent, the isolation, the folders, the limits."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.agents.budget import Budget
from ci_eval.agents.config import AgentConfig
from ci_eval.agents.harness import Harness
from ci_eval.run.agent.budget import RunBudget
from ci_eval.run.agent.retry import BACKOFF_BASE_SECONDS
from ci_eval.run.runners import Runners
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.run.workspace.build import WorkspaceFactory

LOGS = "logs"  # results/logs/<task>/<run>.log: the end of what the agent printed


@dataclass(frozen=True)
class Arm:
    """Another agent than the PR's on the same tasks: the control arm of `run --control-ref`.
    `agent` is REF's ci-eval.yaml entry; `harness_root` the tree the arm's agent files are read
    from (REF's, extracted by run/control_ref.py): its command's scripts resolve there instead of
    in the PR's repo root, and (with agents.<name>.harness) its harness files come from there."""

    name: str
    agent: AgentConfig
    harness_root: Path


@dataclass
class RunContext:
    repo_root: Path
    out_dir: Path
    agent: AgentConfig
    isolation: Isolation
    runs_base: Path
    max_attempts: int = 3
    keep: bool = False
    timeout_override: float | None = None
    checks_env: tuple[str, ...] = ()
    write_lock: threading.Lock = field(default_factory=threading.Lock)
    workspaces: WorkspaceFactory | None = None
    pricing: dict = field(default_factory=dict)
    budget: RunBudget = field(default_factory=lambda: RunBudget(Budget()))
    backoff_base: float = BACKOFF_BASE_SECONDS
    rng: random.Random = field(default_factory=random.Random)
    runners: Runners | None = None  # each task's runner (default: local for every task)
    harness: Harness | None = None  # the agent's harness (agents/harness.py); None: none
    arm: Arm | None = None  # None: the PR's own runs; else whose agent (and harness) runs

    # Finished run folders are removed off the critical path, one at a time.
    cleaner: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="cleaner"))

    @property
    def agent_root(self) -> Path:
        """Where the agent's own files (its command's scripts) are read from."""
        return self.arm.harness_root if self.arm else self.repo_root

    @property
    def hidden(self) -> tuple[Path, ...]:
        """Folders the agent must not see besides its root: the results, and for another arm
        the PR's repo root too (its tasks' answers)."""
        return (self.out_dir, self.repo_root) if self.arm else (self.out_dir,)

    def __post_init__(self):
        if self.workspaces is None:
            self.workspaces = WorkspaceFactory(self.runs_base / "templates")
        if self.runners is None:
            self.runners = Runners.of(self.isolation, self.out_dir / LOGS / "images", None, None)
