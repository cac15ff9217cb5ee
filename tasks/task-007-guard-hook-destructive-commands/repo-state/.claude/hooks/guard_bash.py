#!/usr/bin/env python3
"""PreToolUse hook: refuse catastrophic shell commands (exit 2 blocks the tool call)."""

import json
import sys

BLOCKED = [
    "rm -rf /",
    "rm -rf ~",
    "git push --force",
]


def main() -> int:
    payload = json.load(sys.stdin)
    command = payload.get("tool_input", {}).get("command", "")
    for pattern in BLOCKED:
        if pattern in command:
            print(f"Blocked: `{command}` matches `{pattern}`", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
