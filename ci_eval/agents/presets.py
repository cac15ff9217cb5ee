"""The agent presets by name: PRESETS["claude-code"] is the Claude Code preset, and so on.

A preset is usable with no configuration (`--agent codex`) or from a ci-eval.yaml entry with
`preset: codex`. Adding one: a module with a Preset subclass and PRESET, listed here.
"""

from __future__ import annotations

import difflib

from ci_eval.agents import aider, claude_code, codex, gemini, goose, mini_swe_agent
from ci_eval.agents import openhands
from ci_eval.agents.preset import Preset

PRESETS: dict[str, Preset] = {
    module.PRESET.name: module.PRESET
    for module in (claude_code, codex, gemini, aider, goose, mini_swe_agent)
} | {
    module.PRESET.name: module.PRESET for module in (openhands,)
}


def did_you_mean(name: object, known) -> str:
    """"did you mean 'x'? " for the closest known name, or "" (the start of a message)."""
    close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""
