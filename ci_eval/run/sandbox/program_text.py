"""The text of a program module (`<name>_program.py`), for `python -c TEXT`: a program started
where ci_eval's folder may be hidden or first on sys.path would shadow (the agent's sandbox, the
checks' workspace) is given its source instead of its path. Read once per process."""

from __future__ import annotations

import functools
from pathlib import Path
from types import ModuleType


@functools.cache
def program_text(program: ModuleType) -> str:
    return Path(str(program.__file__)).read_text(encoding="utf-8")
