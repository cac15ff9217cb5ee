"""The agent presets by name: PRESETS["claude-code"] is the Claude Code preset, and so on.

A preset is usable with no configuration (`--agent codex`) or from a ci-eval.yaml entry with
`preset: codex`. Adding one: a module with a Preset subclass and PRESET (agents/preset.py says
what goes on it), listed in BUILTIN_MODULES; or, from another distribution, an entry point of the group
ENTRY_POINT_GROUP whose name is the preset's and whose value is its PRESET object:

    [project.entry-points."ci_eval.presets"]
    my-agent = "my_package.preset:PRESET"

Entry points are read on the first use of PRESETS (not at import: most commands never need
them). One that cannot be loaded, is not a Preset, names another preset or takes a name already
taken is a UserError naming it, whichever preset is asked for: a team's broken plugin is said,
never silently missing (the built-in agents reference and noop are not presets).
"""

from __future__ import annotations

import difflib
import importlib
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING

from ci_eval.agents.installs import Install
from ci_eval.agents.preset import Preset, one_line
from ci_eval.errors import UserError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "ci_eval.presets"
# The modules of the built-in presets, under ci_eval.agents: imported on the first use of
# PRESETS, like the plugins (a start that never looks a preset up skipped their ~15 ms).
BUILTIN_MODULES = ("claude_code", "codex", "gemini", "aider", "goose", "mini_swe_agent",
                   "qwen_code", "opencode", "cline", "copilot", "openhands")
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def builtin_presets() -> list[Preset]:
    """The built-in presets, in BUILTIN_MODULES' order (a missing module is a bug: loud)."""
    return [_builtin_module(name).PRESET for name in BUILTIN_MODULES]


def _builtin_module(name: str) -> ModuleType:
    return importlib.import_module(f"ci_eval.agents.{name}")


def load_presets(builtin: Iterable[Preset], plugins: Iterable[EntryPoint]) -> dict[str, Preset]:
    """The built-in presets, then each entry point's, checked (UserError naming the entry point)."""
    presets = {preset.name: preset for preset in builtin}
    for point in plugins:
        dist = getattr(point, "dist", None)
        where = (f"entry point {point.name!r} = {point.value!r} of the group {ENTRY_POINT_GROUP}"
                 + (f" (distribution {dist.name})" if dist is not None else ""))
        try:
            preset = point.load()
        except Exception as exc:  # noqa: BLE001 - any failure of a plugin's import is its own
            raise UserError(f"{where}: cannot be loaded ({type(exc).__name__}: "
                            f"{one_line(exc, 160)})") from None
        problem = _problem(point.name, preset)
        if problem is None and point.name in presets:
            problem = f"the preset name {point.name!r} is already taken"
        if problem:
            raise UserError(f"{where}: {problem}")
        presets[point.name] = preset
    return presets


def _problem(name: str, preset: object) -> str | None:
    if not isinstance(preset, Preset):
        return f"expected a Preset instance (ci_eval.agents.preset), got {type(preset).__name__}"
    if not _NAME.fullmatch(name):
        return "expected a name of lower-case letters, digits, '.', '_' and '-'"
    if preset.name != name:
        return f"the object is the preset {preset.name!r}, not {name!r}"
    if not isinstance(preset.program, str) or not preset.program:
        return "expected `program`, the executable's name"
    if not isinstance(preset.install, Install):
        return "expected `install` to be an ci_eval.agents.installs.Install"
    for field in ("key_env", "pass_env", "api_hosts", "harness_files"):
        value = getattr(preset, field)
        if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
            return f"expected `{field}` to be a tuple of strings"
    return None


class _Registry(Mapping[str, Preset]):
    """PRESETS: loaded once, on first use."""

    def __init__(self) -> None:
        self._presets: dict[str, Preset] | None = None
        self._lock = threading.RLock()

    def _loaded(self) -> dict[str, Preset]:
        with self._lock:
            if self._presets is None:
                # imported here: importlib.metadata costs about 50 ms to import (its email
                # parsing), which a command that never looks a preset up should not pay
                from importlib.metadata import entry_points

                self._presets = load_presets(builtin_presets(),
                                             entry_points(group=ENTRY_POINT_GROUP))
            return self._presets

    def __getitem__(self, name: str) -> Preset:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


PRESETS: Mapping[str, Preset] = _Registry()


def did_you_mean(name: object, known) -> str:
    """"did you mean 'x'? " for the closest known name, or "" (the start of a message)."""
    close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


def install_for(name: str | None) -> Install | None:
    """The install of the preset `name` (None when name is not a preset)."""
    return PRESETS[name].install if name and name in PRESETS else None
