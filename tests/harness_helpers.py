"""Builders for harness tests: task folders on disk and the real CLI as a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

CHECKOUT = str(Path(__file__).resolve().parents[1])

PASSING_CHECKS = 'from ci_eval.checks import file_equals, main\nmain(file_equals("greet.txt", "hello\\n"))\n'


def write_task(root: Path, name: str = "task-001-greet", *, checks: str = PASSING_CHECKS,
               metadata: dict | None = None, files: dict | None = None,
               solution: str | None = "echo hello > greet.txt\n",
               negatives: dict | None = None, prompt: str = "Make greet.txt say hello.\n",
               extra: dict | None = None) -> Path:
    """A task folder under root/tasks; files maps repo-state paths to contents (str or bytes),
    extra maps other paths in the task folder (hidden_tests/...) to contents."""
    task = root / "tasks" / name
    (task / "repo-state").mkdir(parents=True)
    (task / "prompt.md").write_text(prompt)
    (task / "checks.py").write_text(checks)
    meta = {"difficulty": 1, "area": "demo", "tags": ["test"], "created": "2026-01-01"}
    meta.update(metadata or {})
    (task / "metadata.json").write_text(json.dumps(meta))
    for rel, text in (files if files is not None else {"greet.txt": "bye\n"}).items():
        _write(task / "repo-state" / rel, text)
    if solution is not None:
        _write(task / "solution" / "solve.sh", solution)
    for rel, text in (negatives or {}).items():
        _write(task / "negatives" / rel, text)
    for rel, text in (extra or {}).items():
        _write(task / rel, text)
    return task


def task_with_workspace(root: Path, checks: str):
    """A loaded task under root/repo and a fresh workspace for it in root/runs:
    (task, workspace, the runs folder)."""
    from ci_eval.run.workspace.build import create_workspace
    from ci_eval.tasks.load import load_task

    task = load_task(write_task(root / "repo", checks=checks).resolve())
    runs = root / "runs"
    return task, create_workspace(task.repo_state, runs / "run" / "workspace"), runs


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)


def cli(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120):
    """`python -m ci_eval ARGS` of this checkout (first on PYTHONPATH, as conftest's `cli`)."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([CHECKOUT] + ([env["PYTHONPATH"]]
                                                      if env.get("PYTHONPATH") else []))
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def live_pids_with(marker: str) -> list[int]:
    """Running (not zombie) processes whose command line holds marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def assert_bad_input(result, *needles: str) -> str:
    """Exit 2, no traceback, one line on stderr containing every needle; returns that line."""
    detail = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 2, detail
    assert "Traceback" not in result.stderr, detail
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, detail
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in stderr\n{detail}"
    return lines[0]


NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def nobody_python() -> str | None:
    """A Python >= 3.10 that user nobody can run in a user namespace (the one running the tests
    may sit in /root)."""
    for candidate in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        probe = subprocess.run([*NOBODY, "unshare", "--user", "--map-root-user", candidate, "-c",
                                "import sys; assert sys.version_info >= (3, 10)"],
                               capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate
    return None


def popen_interruptible(argv: list[str], **kwargs) -> subprocess.Popen:
    """Popen, the child's SIGINT at its default whatever this process inherited: pytest started
    in the background of a non-interactive shell ignores SIGINT, and a child inherits an ignored
    signal (Python then keeps it ignored), so a ^C test would wait out its timeout. A handler
    set here is reset to the default in the child at exec."""
    ignored = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(argv, **kwargs)
    finally:
        signal.signal(signal.SIGINT, ignored)
