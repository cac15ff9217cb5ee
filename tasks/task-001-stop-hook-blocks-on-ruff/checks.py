"""Stop hook: exit 2 + ruff findings on stderr when the project violates its own config; else 0.

The hook is run the way Claude Code runs it: every Stop command in .claude/settings.json, through
bash, with the hook payload on stdin and CLAUDE_PROJECT_DIR set. It runs on copies of the workspace
so that fixtures (an over-long line, a different configured line length) can be added.

Where the project keeps its ruff configuration is the agent's choice (pyproject.toml, ruff.toml or
.ruff.toml): ruff itself (`ruff check --show-settings`) says which file it honours, and that file
is the one the line-length probe edits. The findings probe plants several kinds of violation and
asks the real ruff what it finds there, so a hook that imitates one rule without running ruff fails;
the files are in src/, tests/ and scripts/, so a hook that lints one folder fails too.
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
            return failed(f"clean project (ruff check passes under its configuration): hook exit codes "
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


# One file per kind of violation the project's rule selection (E, F, W) reports, in src/notes/
# and beyond it (the project is more than src/: a hook that lints one folder misses the rest).
PLANTED = {
    "src/notes/inventory_sync.py": ("F401", "import os\n\n\ndef sync():\n    return 1\n"),
    "src/notes/price_rules.py": ("E711", "def missing(price):\n    return price == None\n"),
    "tests/test_audit_trail.py": ("F841", "def test_record():\n    stamp = 3\n    assert 1\n"),
    "src/notes/retry_policy.py": ("F821", "def attempts():\n    return max_attempts + 1\n"),
    "src/notes/csv_export.py": ("W291", "def header():   \n    return 'id,name'\n"),
    "scripts/batch_jobs.py": ("E702", "def run():\n    a = 1; return a\n"),
}
PLANTED_NAMES = {Path(rel).name for rel in PLANTED}
LINE_LENGTH_KEY = re.compile(r"(?m)^(\s*(?:max-)?line-length\s*=\s*)\d+")


def ruff() -> str:
    path = shutil.which("ruff")
    if path is None:
        raise RuntimeError("ruff is not on PATH for the checks")  # infrastructure error
    return path


def ruff_settings_path(project: Path, target: Path) -> Path | None:
    """The configuration file ruff honours for `target`, as ruff itself resolves it."""
    proc = subprocess.run([ruff(), "check", "--no-cache", "--show-settings", str(target)],
                          cwd=project, capture_output=True, text=True, timeout=30, check=False)
    match = re.search(r'^Settings path: "(.+)"$', proc.stdout, re.MULTILINE)
    return Path(match.group(1)) if match else None


def ruff_findings(project: Path) -> set[tuple[str, str]]:
    """(file name, rule code) pairs the real ruff reports in `project` under its own config."""
    proc = subprocess.run([ruff(), "check", "--no-cache", "--output-format", "json", "."],
                          cwd=project, capture_output=True, text=True, timeout=30, check=False)
    try:
        items = json.loads(proc.stdout or "[]")
    except ValueError:
        raise RuntimeError(f"ruff gave no JSON report: {proc.stderr[:300]}") from None
    return {(Path(item["filename"]).name, item["code"]) for item in items if item.get("code")}


def check_follows_configured_length():
    with tempfile.TemporaryDirectory() as tmp:
        project = copy_project(Path.cwd(), Path(tmp) / "project")
        banner = project / "src" / "notes" / "banner.py"
        banner.write_text(LONG_LINE)
        config = ruff_settings_path(project, banner)
        if config is None or not config.resolve().is_relative_to(project.resolve()):
            return failed(f"ruff finds no configuration file in the project (resolved: {config})")
        text = config.read_text()
        new_text = LINE_LENGTH_KEY.sub(r"\g<1>120", text)
        if new_text == text:
            return failed(f"{config.name}, the configuration ruff uses, sets no line-length")
        config.write_text(new_text)
        codes, _ = run_stop_hooks(project)
        if any(code != 0 for code in codes):
            return failed(f"with line-length = 120 configured in {config.name}, a 110-character "
                          f"line still made the hook exit {codes}: it ignores the project's "
                          "configuration")
        return passed("hook follows the configured line length")


def check_reports_what_ruff_finds():
    """Several kinds of violation at once: the hook must block and name each one ruff finds."""
    with tempfile.TemporaryDirectory() as tmp:
        project = copy_project(Path.cwd(), Path(tmp) / "project")
        for rel, (_, source) in PLANTED.items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(source)
        expected = {pair for pair in ruff_findings(project) if pair[0] in PLANTED_NAMES}
        missing_kinds = {code for name, (code, _) in PLANTED.items()} - {c for _, c in expected}
        if missing_kinds:  # the project's own configuration switched these rules off
            expected = {pair for pair in expected if pair[1] not in missing_kinds}
        codes, stderr = run_stop_hooks(project)
        if 2 not in codes:
            return failed(f"files with {sorted(c for _, c in expected)} violations: hook exit "
                          f"codes {codes}, expected 2 (block the stop)")
        unreported = sorted(f"{name} {code}" for name, code in expected
                            if name not in stderr or code not in stderr)
        if unreported:
            return failed(f"hook blocked but its stderr lacks ruff's findings {unreported}; "
                          f"stderr: {stderr.strip()[:300]!r}")
        return passed("hook reports every finding ruff makes")


def guarded(check):
    def run():
        try:
            return check()
        except LookupError as exc:
            return failed(str(exc))
    return run


main(*(guarded(c) for c in (check_clean_project, check_long_line_blocks,
                            check_follows_configured_length, check_reports_what_ruff_finds)))
