"""The arena every attack runs in, and the canaries checked after every `ci-eval run`.

    def test_x(arena):
        arena.task(checks=..., files=...)             # a small task in a tmp repo
        agent = arena.agent("cat /proc/1/environ > loot.txt\n")   # a hostile --agent-cmd
        result = arena.run("-k", "1", "--agent-cmd", agent)      # the real CLI, canaries checked
        assert result.record()["status"] == "fail"

The arena (one per test, or one per module with `module_arena`) is a tmp folder holding:
  repo/            the repo root (--root, cwd of the CLI) with tasks/ and the results
  agents/          the hostile agents' scripts (readable by the agent: /tmp stays readable)
  tmp/             the TMPDIR of every `ci-eval run`: its runs folders, so that what a run
                   leaves behind is seen here, and other sessions' ci-eval runs on this machine
                   (which remove stale runs folders) neither see nor touch ours
  canary.txt       a canary file beside the repo root; another one lives in /tmp itself

The canaries, checked by `run` after every invocation (check_canaries):
  - secrets: CI_EVAL_CANARY_SECRET, GITHUB_TOKEN, ANTHROPIC_API_KEY are set in the environment
    of `ci-eval run` and must appear nowhere: not in its stdout/stderr, not in any file under the
    arena (results, kept workspaces, logs, whatever an agent or the checks wrote), not in /tmp
    files an attack could have written;
  - the solution canary (a line in every task's solution/ and negatives/) reaches no output
    and no file outside those folders: not the results, not a kept workspace, not a log;
  - canary files outside the run folder are unchanged, and no `PWNED*` proof file exists: the
    attacks' payloads write one wherever they run unsandboxed (outside a sandbox, /tmp writes
    persist; inside, they are discarded);
  - no process of the run survives: nothing whose command line, environment or cwd mentions the
    arena's TMPDIR (every agent and checks process has TMPDIR in its environment and its cwd
    there), and the runs folder is gone (unless --keep).
The status each attack must get (what an honest agent with the same outcome gets) is asserted
by the test itself.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from harness_helpers import write_task

from ci_eval.run.sandbox import isolation

REPO_ROOT = Path(__file__).resolve().parents[2]

SANDBOXED = isolation.detect().agent_sandboxed and isolation.detect().checks_sandboxed
IS_ROOT = os.geteuid() == 0
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason="no agent/checks sandbox here")

PYTHON = sys.executable
GREET_CHECKS = 'from ci_eval.checks import file_equals, main\nmain(file_equals("greet.txt", "hello\\n"))\n'
CALC_CHECKS = ('from ci_eval.checks import main, run_tests\n'
               'main(lambda: run_tests(fail_to_pass=["tests/test_calc.py::test_add"], '
               'restore=["tests/"]))\n')
CALC_FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
}
CALC_SOLUTION = "sed -i 's/a - b/a + b/' calc.py\n"
GOOD_CALC = "def add(a, b):\n    return a + b\n"


def _token() -> str:
    return uuid.uuid4().hex


@dataclass
class RunResult:
    proc: subprocess.CompletedProcess
    seconds: float
    max_rss_kib: int  # the peak RSS of `ci-eval run` and every process it waited for
    out: Path  # the results folder

    @property
    def returncode(self) -> int:
        return self.proc.returncode

    @property
    def stderr(self) -> str:
        return self.proc.stderr

    @property
    def stdout(self) -> str:
        return self.proc.stdout

    def records(self, task: str | None = None) -> list[dict]:
        files = sorted(self.out.glob("*.jsonl")) if task is None else [self.out / f"{task}.jsonl"]
        found = []
        for path in files:
            found += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return sorted(found, key=lambda r: (r["task"], r["run"]))

    def record(self, task: str | None = None) -> dict:
        found = self.records(task)
        assert len(found) == 1, found
        return found[0]

    def by_task(self) -> dict[str, dict]:
        """task id -> its one record (runs of -k 1)."""
        return {r["task"]: r for r in self.records()}

    def detail(self) -> str:
        return f"exit {self.returncode}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"


@dataclass
class Arena:
    base: Path
    secrets: dict = field(default_factory=dict)
    solution_canary: str = ""
    canaries: dict = field(default_factory=dict)  # path -> bytes it must keep
    modes: dict = field(default_factory=dict)  # path -> mode it must keep
    secret_files: set = field(default_factory=set)  # files that hold a secret on purpose

    def __post_init__(self):
        self.repo = self.base / "repo"
        (self.repo / "tasks").mkdir(parents=True)
        self.agents = self.base / "agents"
        self.agents.mkdir()
        self.tmp = self.base / "tmp"
        self.tmp.mkdir()
        self.marker = str(uuid.uuid4().int)[:12]  # digits: usable as `sleep 60.MARKER`
        self.secrets = {
            "CI_EVAL_CANARY_SECRET": "canary-secret-" + _token(),
            "GITHUB_TOKEN": "ghp_" + _token(),
            "ANTHROPIC_API_KEY": "sk-ant-" + _token(),
        }
        self.solution_canary = "SOLUTION-CANARY-" + _token()
        beside = self.base / "canary.txt"
        in_tmp = Path("/tmp") / f"adv-canary-{self.marker}.txt"  # not ci-eval-*: stays visible
        for path in (beside, in_tmp):
            path.write_text(f"canary {self.marker}\n")
            self.canaries[path] = path.read_bytes()
        self.tmp_canary = in_tmp

    # --- building ------------------------------------------------------------------------------

    def task(self, name: str = "task-001-greet", *, checks: str = GREET_CHECKS,
             files: dict | None = None, solution: str = "echo hello > greet.txt\n",
             metadata: dict | None = None, extra: dict | None = None) -> Path:
        """A task under repo/tasks; its solution carries the solution canary. `extra` maps paths
        relative to the task folder (hidden_tests/...) to contents."""
        return write_task(self.repo, name, checks=checks, files=files,
                          solution=f"# {self.solution_canary}\n{solution}",
                          metadata={"tags": ["adversarial"], **(metadata or {})},
                          prompt="Make the checks pass.\n", extra=extra)

    def calc_task(self, name: str = "task-001-calc", **kwargs) -> Path:
        """A task whose checks run the agent's code: pytest imports calc.py."""
        kwargs.setdefault("checks", CALC_CHECKS)
        kwargs.setdefault("files", dict(CALC_FILES))
        kwargs.setdefault("solution", CALC_SOLUTION)
        return self.task(name, **kwargs)

    def agent(self, script: str, *, name: str | None = None, shell: str = "bash") -> str:
        """An --agent-cmd running `script` (bash, or python with shell="python")."""
        name = name or f"agent-{_token()[:8]}"
        suffix = ".py" if shell == "python" else ".sh"
        path = self.agents / f"{name}{suffix}"
        path.write_text(script)
        program = PYTHON if shell == "python" else "bash"
        return f"{program} {path} {self.marker}"

    def file(self, name: str, content: str | bytes) -> Path:
        """A file in agents/ (readable by the agent) for it to copy in."""
        path = self.agents / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
        return path

    def pwned(self, what: str) -> Path:
        """Where a payload writes its proof when it runs outside any sandbox."""
        return self.base / f"PWNED-{what}"

    # --- running -------------------------------------------------------------------------------

    def env(self, extra: dict | None = None) -> dict:
        env = os.environ.copy()
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.pop("GITHUB_ACTIONS", None)
        env.pop("CI_EVAL_NO_ISOLATION", None)
        env["TMPDIR"] = str(self.tmp)
        env.update(self.secrets)
        env.update(extra or {})
        return env

    def start(self, *args: str, env: dict | None = None, cwd: Path | None = None,
              prefix: list[str] = (), **popen) -> subprocess.Popen:
        """`ci-eval ARGS` started in its own session (for a test that signals or races it)."""
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen([*prefix, PYTHON, "-m", "ci_eval", *map(str, args)],
                                cwd=cwd or self.repo, env=self.env(env), text=True,
                                start_new_session=True, **popen)

    def run(self, *args: str, env: dict | None = None, timeout: float = 120,
            out: str = "results", cwd: Path | None = None, prefix: list[str] = (),
            check_canaries: bool = True, keep: bool = False) -> RunResult:
        """`python -m ci_eval ARGS` for real; wall time and peak RSS measured (wait4 of the CLI
        process: its own peak, or that of a process it waited for, whichever is larger); the
        canaries checked afterwards (see the module docstring)."""
        started = time.monotonic()
        proc = self.start(*args, env=env, cwd=cwd, prefix=prefix)
        streams = {"stdout": [], "stderr": []}
        readers = [threading.Thread(target=lambda s=s, n=n: streams[n].append(s.read()),
                                    daemon=True)
                   for n, s in (("stdout", proc.stdout), ("stderr", proc.stderr))]
        for reader in readers:
            reader.start()
        expired = threading.Event()

        def on_timeout():
            expired.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(timeout, on_timeout)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - started
        for reader in readers:
            reader.join(timeout=10)
        stdout = "".join(streams["stdout"])
        stderr = "".join(streams["stderr"])
        if expired.is_set():
            self.kill_survivors()
            pytest.fail(f"`ci-eval {' '.join(map(str, args))}` did not finish in {timeout}s: "
                        f"the harness hangs\n{stderr[-2000:]}")
        completed = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
        out_dir = Path(out) if os.path.isabs(out) else (cwd or self.repo) / out
        result = RunResult(completed, seconds, usage.ru_maxrss, out_dir)
        if check_canaries:
            self.check_canaries(result, keep=keep)
        return result

    # --- the canaries --------------------------------------------------------------------------

    def survivors(self) -> list[str]:
        """Live processes of this arena's runs: TMPDIR (or the marker) in their command line or
        environment, or their cwd inside TMPDIR."""
        needles = (str(self.tmp).encode(), self.marker.encode())
        own = os.getpid()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == own:
                continue
            try:
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state in ("Z", "X"):
                    continue
                cmdline = (entry / "cmdline").read_bytes()
                try:
                    environ = (entry / "environ").read_bytes()
                except OSError:
                    environ = b""
                try:
                    cwd = os.readlink(entry / "cwd")
                except OSError:
                    cwd = ""
            except (OSError, IndexError):
                continue
            if (any(n in cmdline or n in environ for n in needles)
                    or cwd.startswith(str(self.tmp))):
                shown = cmdline.replace(b"\0", b" ").decode(errors="replace")[:200]
                found.append(f"{entry.name}: {shown}")
        return found

    def kill_survivors(self) -> None:
        for line in self.survivors():
            try:
                os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)
            except OSError:
                pass

    def check_canaries(self, result: RunResult | None = None, *, keep: bool = False) -> None:
        deadline = time.monotonic() + 5
        while (alive := self.survivors()) and time.monotonic() < deadline:
            time.sleep(0.05)
        if alive:
            self.kill_survivors()
        assert not alive, f"processes of the run survived it: {alive}"
        if not keep:
            # folders an earlier `--keep` kept are the user's (KEPT marker): not this run's
            left = sorted(p.name for p in self.tmp.glob("ci-eval-*") if not (p / "KEPT").exists())
            assert not left, f"the run left folders behind in its TMPDIR: {left}"
        texts = {}
        if result is not None:
            texts["stdout"] = result.stdout.encode()
            texts["stderr"] = result.stderr.encode()
        for path, data in self._files():
            if path not in self.secret_files:
                texts[str(path)] = data
        for name, value in self.secrets.items():
            leaks = [where for where, data in texts.items() if value.encode() in data]
            assert not leaks, f"the harness's {name} leaked into {leaks}"
        leaks = [where for where, data in texts.items()
                 if self.solution_canary.encode() in data and not _task_answer(where)]
        assert not leaks, f"the task's solution reached {leaks}"
        for path, content in self.canaries.items():
            assert path.exists() and path.read_bytes() == content, f"canary {path} was changed"
        for path, mode in self.modes.items():
            assert os.lstat(path).st_mode == mode, f"the mode of {path} was changed"
        proofs = [str(p) for p in self.base.rglob("PWNED*")]
        proofs += [str(p) for p in Path("/tmp").glob(f"*{self.marker}*") if p != self.tmp_canary]
        assert not proofs, f"a payload ran outside the sandbox (or wrote where it must not): {proofs}"

    def _files(self):
        """(path, first 1 MiB) of every regular file under the arena, links not followed."""
        for folder, dirs, names in os.walk(self.base):
            for name in names:
                path = Path(folder) / name
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                except OSError:
                    continue
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        continue
                    yield path, os.read(fd, 1024 * 1024)
                finally:
                    os.close(fd)

    def cleanup(self) -> None:
        self.kill_survivors()
        self.tmp_canary.unlink(missing_ok=True)
        for path in Path("/tmp").glob(f"*{self.marker}*"):
            subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=False)
        subprocess.run(["rm", "-rf", "--one-file-system", str(self.tmp)], check=False)


def _task_answer(where: str) -> bool:
    """A task's own solution/ or negatives/ file (where the solution canary belongs)."""
    parts = Path(where).parts
    return "tasks" in parts and bool({"solution", "negatives"} & set(parts))


def _arena(base: Path) -> Arena:
    return Arena(base)


@pytest.fixture
def arena(tmp_path):
    made = _arena(tmp_path / "arena")
    yield made
    made.cleanup()


@pytest.fixture(scope="module")
def module_arena(tmp_path_factory):
    made = _arena(tmp_path_factory.mktemp("arena"))
    yield made
    made.cleanup()
