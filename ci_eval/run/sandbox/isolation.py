"""What this platform can do to isolate agents and checks: one typed value, `Isolation`.

Both sandboxes are made by the sandbox launcher (launcher.py), which forks each command into its
namespaces; what they show is views.py's, the launcher's requests for them are requests.py's.
What this platform allows is `Isolation`, found once by running the real sandbox on a probe
folder (`detect`): the launcher's requests, the one unshare(1) argv still run (checks with only a
network namespace) and the label recorded on every run (results/notices.RecordedIsolation, read
back by its one parser) all derive from it. Where a sandbox is impossible, runs still happen and
every report says so (`notices`, the records' `isolation`), never silently.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ci_eval.results.notices import ChecksIsolation, RecordedIsolation
from ci_eval.run.sandbox import scratch
from ci_eval.run.sandbox import isolation_cache, launcher
from ci_eval.run.sandbox.launcher import Request
from ci_eval.run.sandbox.process import Pipe, run_process
from ci_eval.run.sandbox.sandbox_program import read_failure
from ci_eval.run.sandbox.views import release_scratch, run_view


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
    user = os.geteuid() != 0
    kept = isolation_cache.cache_file()
    key = isolation_cache.platform_key() if kept is not None else None
    if kept is not None and key is not None and isolation_cache.holds_sandboxed(kept, key):
        return Isolation(True, ChecksIsolation.SANDBOX, user)
    found = _probed(user)
    if kept is not None and key is not None:
        if found.agent_sandboxed and found.checks_sandboxed:
            isolation_cache.keep_sandboxed(kept, key)
        else:
            isolation_cache.forget(kept)
    return found


def _probed(user: bool) -> Isolation:
    """The probes themselves: the agents' sandbox, then the checks' (or what is left of it)."""
    notices: list[str] = []
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
    probe_dir = scratch.make("probe")
    try:
        run = probe_dir / "run"
        (run / "reports").mkdir(parents=True)
        (probe_dir / "repo" / "solution").mkdir(parents=True)
        shown = run_view(probe_dir / "repo", probe_dir, (), home=None).for_command(
            writable=[run], scratch_in=run, mask=[probe_dir / "repo" / "solution"])
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


def unsandboxed_checks_argv(isolation: Isolation, command: list[str]) -> list[str]:
    """Without a checks sandbox: only a network namespace, if that works here."""
    if isolation.checks is ChecksIsolation.OFFLINE:
        return [*offline_prefix(isolation.user_namespace), *command]
    return list(command)
