"""Writing command output: stdout, or a file written atomically (never half-written)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ci_eval.errors import UserError


def write_atomic(path: Path, text: str) -> None:
    path = Path(path)
    if path.parent and not path.parent.is_dir():
        raise UserError("folder does not exist", path=path.parent, field="--output")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def emit(text: str, output: str | None) -> None:
    if output:
        write_atomic(Path(output), text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
