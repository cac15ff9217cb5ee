"""A report file a test runner wrote (pytest's JSON report, a JUnit XML), read as hostile input.

The runner writes it in the same sandbox as the code under test, so it is read like any file the
agent could have written: capped in size, no symlink followed, no FIFO (output.read_capped). What
is wrong with the file is the reader's own error type, its message naming the report.
"""

from __future__ import annotations

from pathlib import Path

from ci_eval.output import UntrustedFile, read_capped


def read_report_file(path: str | Path, cap: int, error: type[ValueError],
                     what: str) -> bytes | None:
    """The report's bytes (at most `cap`), None when there is no file (the runner never wrote
    it); `error("<what> <why>")` for a file that cannot be trusted."""
    try:
        return read_capped(path, cap)
    except UntrustedFile as exc:
        raise error(f"{what} {exc}") from None
