"""Harbor's verifier (Terminal-Bench 2): tests/ mounted at /tests, `tests/test.sh` run in a fresh
container of the task's image, the reward read from /logs/verifier (a folder of the harness's,
mounted there): reward.txt (one number) first, else reward.json ({"reward": number, ...}).

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
# bash when the image has it (Harbor's test.sh files are bash), else sh (a busybox image)
TEST_COMMAND = ("/bin/sh", "-c", (f"if command -v bash >/dev/null 2>&1; then exec bash "
                                  f"{TESTS_MOUNT}/test.sh; else exec sh {TESTS_MOUNT}/test.sh; fi"))


def parse_reward(reward_txt: bytes | None, reward_json: bytes | None) -> tuple[float | None, str]:
    """(the reward, or None when there is none to trust; a note saying where it came from or
    why there is none)."""
    if reward_txt is not None:
        text = reward_txt.decode("utf-8", errors="replace").strip()
        try:
            value = float(text)
        except ValueError:
            return None, f"{REWARD_TXT} is not a number ({text[:40]!r})"
        if not math.isfinite(value):
            return None, f"{REWARD_TXT} is not a finite number ({text[:40]!r})"
        return value, f"reward {value:g} ({REWARD_TXT})"
    if reward_json is not None:
        try:
            data = json.loads(reward_json.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None, f"{REWARD_JSON} is not valid JSON"
        value = data.get("reward") if isinstance(data, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None, f"{REWARD_JSON} has no numeric \"reward\""
        return float(value), f"reward {value:g} ({REWARD_JSON})"
    return None, f"no {REWARD_TXT} or {REWARD_JSON} in /logs/verifier (no evidence the tests ran)"


def passed(reward: float | None) -> bool:
    return reward is not None and reward >= 1.0
