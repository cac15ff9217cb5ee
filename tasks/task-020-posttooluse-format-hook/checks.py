"""PostToolUse hook formats the .py file an Edit/MultiEdit/Write touched (project config), leaves
other files alone, and exits 0 for every payload.

Hooks are run as Claude Code runs them: the PostToolUse commands in .claude/settings.json whose
matcher matches the tool, through bash, payload on stdin, CLAUDE_PROJECT_DIR set, on a copy of
the workspace.
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

UGLY = (
    "import os\n"
    "def   area( w,h ):\n"
    "  return w*h\n"
    "RESULT = compute_shipping_estimate(destination_code, package_weight, express=True, insured=1)\n"
)
PRETTY = (
    "import os\n"
    "\n"
    "\n"
    "def area(w, h):\n"
    "    return w * h\n"
    "\n"
    "\n"
    "RESULT = compute_shipping_estimate(destination_code, package_weight, express=True, insured=1)\n"
)  # the last line is 94 characters: fine under the project's line-length = 100, wrapped at 88


def hook_commands(project: Path, tool: str) -> list[str]:
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    commands = []
    for group in settings.get("hooks", {}).get("PostToolUse", []):
        matcher = group.get("matcher", "")
        if matcher in ("", "*") or re.fullmatch(matcher, tool):
            commands += [h["command"] for h in group.get("hooks", []) if h.get("type") == "command"]
    return commands


def run_hooks(project: Path, tool: str, tool_input: dict) -> list[tuple[int, str]]:
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(project))
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    payload = {
        "session_id": "golden-task-020",
        "hook_event_name": "PostToolUse",
        "cwd": str(project),
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": {"success": True},
    }
    results = []
    for command in hook_commands(project, tool):
        proc = subprocess.run(["bash", "-c", command], cwd=project, env=env,
                              input=json.dumps(payload), capture_output=True, text=True,
                              timeout=30, check=False)
        results.append((proc.returncode, proc.stderr.strip()[-200:]))
    return results


def check_hook():
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        shutil.copytree(Path.cwd(), project, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        try:
            registered = {tool: bool(hook_commands(project, tool))
                          for tool in ("Edit", "MultiEdit", "Write")}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, re.error) as exc:
            return failed(f".claude/settings.json is not usable: {exc}")
        missing = [tool for tool, ok in registered.items() if not ok]
        if missing:
            return failed(f"no PostToolUse command hook runs for {missing}")
        problems = []
        cases = [
            ("Edit", "src/shop/edited.py", {"old_string": "a", "new_string": "b"}),
            ("MultiEdit", "src/shop/multi.py", {"edits": [{"old_string": "a", "new_string": "b"}]}),
            ("Write", "src/shop/written.py", {"content": UGLY}),
        ]
        for tool, rel, extra in cases:
            target = project / rel
            target.write_text(UGLY)
            results = run_hooks(project, tool, {"file_path": str(target), **extra})
            if any(code != 0 for code, _ in results):
                problems.append(f"{tool} on {rel}: hook exit codes {results}")
            if target.read_text() != PRETTY:
                problems.append(f"{tool} on {rel}: file not formatted with the project's settings "
                                f"(got {target.read_text()!r})")
        notes = project / "NOTES.md"
        notes.write_text("x=1\n")
        results = run_hooks(project, "Write", {"file_path": str(notes), "content": "x=1\n"})
        if any(code != 0 for code, _ in results) or notes.read_text() != "x=1\n":
            problems.append(f"Write on NOTES.md: must be left alone with exit 0 ({results})")
        broken = project / "src" / "shop" / "broken.py"
        broken.write_text("def f(:\n")
        results = run_hooks(project, "Edit", {"file_path": str(broken), "old_string": "",
                                              "new_string": ""})
        if any(code != 0 for code, _ in results):
            problems.append(f"Edit of a file with a syntax error: exit codes {results}")
        odd = run_hooks(project, "Edit", {"notebook_path": "x.ipynb"})
        if any(code != 0 for code, _ in odd):
            problems.append(f"payload without file_path: exit codes {odd}")
    if problems:
        return failed("; ".join(problems))
    return passed("formats edited Python files, leaves others, always exits 0")


main(check_hook)
