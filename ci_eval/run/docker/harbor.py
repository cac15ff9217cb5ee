"""Harbor's verifier (Terminal-Bench 2): tests/ mounted at /tests, `tests/test.sh` run in a fresh
container of the task's image, the reward read from /logs/verifier (a folder of the harness's,
mounted there): reward.json first, else reward.txt (one number), as Harbor's Verifier.verify
does. reward.json is Harbor's rewards object, {name: number, ...} with any names: its "reward"
when it has one, else reward.txt's number when that file is there too (Harbor's scalar fallback),
else every reward counts (the run's reward is the least of them: a multi-dimension task, e.g.
{"correctness": 1, "performance": 0}, passes when all are full).

A run passes when the reward is at least 1 (Harbor's tasks score 0 or 1; a partial reward is a
fail, its value in the reason). No reward file, an unreadable or non-numeric one: a fail ("no
evidence the tests ran"). Pure: the bytes come from the caller (read capped, no link followed).
"""

from __future__ import annotations

import json
import math

TESTS_MOUNT = "/tests"
LOGS_MOUNT = "/logs"
REWARD_TXT = "reward.txt"
REWARD_JSON = "reward.json"
REWARD_CAP_BYTES = 64 * 1024
SOLUTION_MOUNT = "/solution"  # where Harbor puts solution/ (solve.sh calls /solution/solve.py)
SHEBANG_BYTES = 256  # the kernel reads no more of a #! line either
# a script with no #! line: bash when the image has it (Harbor's test.sh files are bash), else sh
_NO_SHEBANG = ("if command -v bash >/dev/null 2>&1; then exec bash \"$0\"; else exec sh "
               "\"$0\"; fi")


def script_argv(head: bytes, path: str) -> tuple[str, ...]:
    """The argv that runs the script at `path` (in the container) as Harbor runs it: by its #!
    line (interpreter and at most one argument, as the kernel reads it; `set -o pipefail` in a
    bash script needs bash, not the image's /bin/sh), else by bash or sh. `head`: the script's
    first bytes. The script need not be executable (mounts are read-only)."""
    line = head.split(b"\n", 1)[0]
    if line.startswith(b"#!"):
        words = line[2:].decode("utf-8", errors="replace").strip().split(None, 1)
        if words:
            return (*words, path)
    return ("/bin/sh", "-c", _NO_SHEBANG, path)


def test_argv(head: bytes) -> tuple[str, ...]:
    return script_argv(head, f"{TESTS_MOUNT}/test.sh")


def parse_reward(reward_txt: bytes | None, reward_json: bytes | None) -> tuple[float | None, str]:
    """(the reward, or None when there is none to trust; a note saying where it came from or
    why there is none). reward.json first, as Harbor's Verifier.verify reads it: its numeric
    fields are the rewards (others are ignored, as Harbor ignores them); without a "reward" key,
    reward.txt's number is the scalar when there is one, else the least of the rewards."""
    if reward_json is not None:
        try:
            data = json.loads(reward_json.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None, f"{REWARD_JSON} is not valid JSON"
        if not isinstance(data, dict):
            return None, f"{REWARD_JSON} is not an object of rewards ({{name: number}})"
        rewards = {str(k): float(v) for k, v in data.items() if _number(v)}
        ignored = sorted(str(k) for k in data if str(k) not in rewards)
        shown = ", ".join(f"{k} {v:g}" for k, v in list(rewards.items())[:8])
        tail = f"; ignored: {', '.join(ignored)[:80]}" if ignored else ""
        if "reward" in rewards:
            return rewards["reward"], f"reward {rewards['reward']:g} ({REWARD_JSON}: {shown[:200]}{tail})"
        if reward_txt is not None:
            value, note = _text_reward(reward_txt)
            return value, f"{note}; {REWARD_JSON}: {shown[:200]}{tail}"
        if not rewards:
            return None, f"{REWARD_JSON} holds no numeric reward{tail}"
        value = min(rewards.values())
        return value, f"reward {value:g} (the least of {REWARD_JSON}: {shown[:200]}{tail})"
    if reward_txt is not None:
        return _text_reward(reward_txt)
    return None, f"no {REWARD_TXT} or {REWARD_JSON} in /logs/verifier (no evidence the tests ran)"


def _text_reward(reward_txt: bytes) -> tuple[float | None, str]:
    text = reward_txt.decode("utf-8", errors="replace").strip()
    try:
        value = float(text)
    except ValueError:
        return None, f"{REWARD_TXT} is not a number ({text[:40]!r})"
    if not math.isfinite(value):
        return None, f"{REWARD_TXT} is not a finite number ({text[:40]!r})"
    return value, f"reward {value:g} ({REWARD_TXT})"


def _number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def passed(reward: float | None) -> bool:
    return reward is not None and reward >= 1.0
