import json
import subprocess
import sys
from pathlib import Path

HOOK = Path(__file__).resolve().parent.parent / ".claude" / "hooks" / "guard_bash.py"


def run_hook(command: str) -> int:
    payload = {"tool_name": "Bash", "tool_input": {"command": command}}
    proc = subprocess.run([sys.executable, str(HOOK)], input=json.dumps(payload), text=True)
    return proc.returncode


def test_blocks_rm_rf_root():
    assert run_hook("rm -rf /") == 2


def test_allows_ls():
    assert run_hook("ls -la") == 0
