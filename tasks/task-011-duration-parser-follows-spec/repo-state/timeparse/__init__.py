"""Parse human-written durations (see docs/duration-spec.md)."""

import re

_COMPONENT = re.compile(r"(\d+)([hms])")
_SECONDS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> int:
    components = _COMPONENT.findall(text)
    if not components:
        raise ValueError(f"invalid duration: {text!r}")
    return sum(int(number) * _SECONDS[unit] for number, unit in components)
