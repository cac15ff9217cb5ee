"""Stop hook: exit 2 + ruff findings on stderr when the project violates its own config; else 0.

The hook is run the way Claude Code runs it: every Stop command in .claude/settings.json, through
bash, with the hook payload on stdin and CLAUDE_PROJECT_DIR set. It runs on copies of the workspace
so that fixtures (an over-long line, a different configured line length) can be added.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ci_eval.checks import failed, main, passed

PAYLOAD = {
    "session_id": "golden-task-001",
    "transcript_path": "/dev/null",
    "hook_event_name": "Stop",
    "stop_hook_active": False,
}
LONG_LINE = 'MESSAGE = "' + "x" * 97 + '"\n'  # 110 characters


def stop_commands(project: Path) -> list[str]:
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    groups = settings.get("hooks", {}).get("Stop", [])
    return [h["command"] for g in groups for h in g.get("hooks", []) if h.get("type") == "command"]


def run_stop_hooks(project: Path):
    """(exit codes, stderr) of every Stop command hook, run as Claude Code runs them.

    Raises LookupError when settings.json registers no usable Stop command hook.
    """
    try:
        commands = stop_commands(project)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LookupError(f".claude/settings.json has no usable Stop hook ({exc})") from None
    if not commands:
        raise LookupError(".claude/settings.json registers no Stop command hook")
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(project))
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    payload = json.dumps({**PAYLOAD, "cwd": str(project)})
    codes, stderr = [], ""
    for command in commands:
        proc = subprocess.run(
            ["bash", "-c", command], cwd=project, env=env, input=payload,
            capture_output=True, text=True, timeout=30, check=False,
        )
        codes.append(proc.returncode)
        stderr += proc.stderr
    return codes, stderr


def copy_project(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".git", "__pycache__", ".ruff_cache"))
    return dest


def check_clean_project():
    with tempfile.TemporaryDirectory() as tmp:
        project = copy_project(Path.cwd(), Path(tmp) / "project")
        codes, stderr = run_stop_hooks(project)
        if any(code != 0 for code in codes):
            return failed(f"clean project (ruff check passes under pyproject.toml): hook exit codes "
                          f"{codes}, expected 0; stderr: {stderr.strip()[:300]!r}")
        return passed("clean project: hook exits 0")


def check_long_line_blocks():
    with tempfile.TemporaryDirectory() as tmp:
        project = copy_project(Path.cwd(), Path(tmp) / "project")
        (project / "src" / "notes" / "banner.py").write_text(LONG_LINE)
        codes, stderr = run_stop_hooks(project)
        if 2 not in codes:
            return failed(f"a 110-character line with line-length = 100: hook exit codes {codes}, "
                          "expected 2 (block the stop)")
        if "banner.py" not in stderr or "E501" not in stderr:
            return failed("hook exited 2 but stderr does not carry ruff's finding (expected the file "
                          f"name banner.py and the code E501); stderr: {stderr.strip()[:300]!r}")
        return passed("long line: hook blocks with the finding on stderr")


def check_follows_configured_length():
    with tempfile.TemporaryDirectory() as tmp:
        project = copy_project(Path.cwd(), Path(tmp) / "project")
        (project / "src" / "notes" / "banner.py").write_text(LONG_LINE)
        pyproject = project / "pyproject.toml"
        text = pyproject.read_text()
        new_text = re.sub(r"(?m)^line-length\s*=\s*\d+", "line-length = 120", text)
        if new_text == text:
            return failed("pyproject.toml no longer sets line-length under [tool.ruff]")
        pyproject.write_text(new_text)
        codes, _ = run_stop_hooks(project)
        if any(code != 0 for code in codes):
            return failed("with line-length = 120 configured, a 110-character line still made the "
                          f"hook exit {codes}: it ignores the project's configuration")
        return passed("hook follows the configured line length")


def guarded(check):
    def run():
        try:
            return check()
        except LookupError as exc:
            return failed(str(exc))
    return run


main(*(guarded(c) for c in (check_clean_project, check_long_line_blocks,
                            check_follows_configured_length)))
