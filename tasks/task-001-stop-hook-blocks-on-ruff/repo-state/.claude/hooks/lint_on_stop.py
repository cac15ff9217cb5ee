#!/usr/bin/env python3
"""Stop hook: keep Claude working while ruff still reports problems."""

import json
import os
import subprocess
import sys


def main() -> int:
    json.load(sys.stdin)  # hook payload; nothing in it we need
    project = os.environ.get("CLAUDE_PROJECT_DIR", os.getcwd())
    proc = subprocess.run(
        ["ruff", "check", "--isolated", "--select", "E,F", project],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        print(proc.stdout)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
