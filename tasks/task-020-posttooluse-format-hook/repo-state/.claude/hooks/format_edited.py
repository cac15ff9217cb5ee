#!/usr/bin/env python3
"""PostToolUse hook: run `ruff format` on the Python file Claude just edited."""

import json
import subprocess
import sys


def main() -> int:
    payload = json.load(sys.stdin)
    path = payload["tool_input"]["path"]
    proc = subprocess.run(["ruff", "format", path], capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
