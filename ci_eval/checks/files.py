"""Checks of the workspace's files: file_equals, regex_match (capped reads, symlinks never
followed: everything there was written by the agent).

Imported by checks.py in a fresh interpreter per scored run: os alone at import (no pathlib, no
re until regex_match is called: together they cost more than the check)."""

from __future__ import annotations

import os

from ci_eval.checks.result import CheckResult, failed, passed
from ci_eval.output import UntrustedFile, read_capped, shown

MULTILINE = 8  # re.MULTILINE, without importing re for the default

READ_CAP_BYTES = 16 * 1024 * 1024  # the most a helper reads of one workspace file


def file_equals(path: str | os.PathLike, expected: str | os.PathLike, *,
                ignore_trailing_newlines: bool = False,
                universal_newlines: bool = False) -> CheckResult:
    """`path` (in the workspace) equals `expected`: a pathlib.Path names a file, a str is text.
    ignore_trailing_newlines=True compares both without the newlines they end in;
    universal_newlines=True reads \r\n and \r as \n in both, as Python's text mode does (the
    fixture-task format's file_equals, for tasks imported from it, does both)."""
    target = shown(path)
    actual = workspace_text(target, universal_newlines)
    if not isinstance(actual, str):
        return actual
    if isinstance(expected, os.PathLike):
        with open(expected, "rb") as handle:
            expected_text = handle.read().decode("utf-8", errors="replace")
    else:
        expected_text = expected
    if universal_newlines:
        expected_text = universal(expected_text)
    if ignore_trailing_newlines:
        actual, expected_text = actual.rstrip("\n"), expected_text.rstrip("\n")
    if actual == expected_text:
        return passed(f"{target}: contents as expected")
    return failed(f"{target}{first_difference(actual, expected_text)}")


def first_difference(actual: str, expected: str) -> str:
    """Where two different texts first differ, as ":LINE: what" (or ": what"): the line's
    content, its line ending, a missing or extra newline at the end, missing or extra lines."""
    got_lines = actual.splitlines(keepends=True)
    want_lines = expected.splitlines(keepends=True)
    for number, (got, want) in enumerate(zip(got_lines, want_lines), start=1):
        if got == want:
            continue
        got_body, want_body = got.rstrip("\r\n"), want.rstrip("\r\n")
        if got_body != want_body:
            return f":{number}: expected {want_body!r}, found {got_body!r}"
        got_end, want_end = got[len(got_body):], want[len(want_body):]
        if not got_end:
            return f":{number}: expected a newline at the end of the file, found none"
        if not want_end:
            return f":{number}: expected no newline at the end of the file, found {got_end!r}"
        return f":{number}: expected the line to end in {want_end!r}, found {got_end!r}"
    if len(got_lines) < len(want_lines):
        missing = want_lines[len(got_lines)]
        return (f": expected {len(want_lines)} lines, found {len(got_lines)} (missing from "
                f"line {len(got_lines) + 1}: {missing.rstrip(chr(13) + chr(10))!r})")
    extra = got_lines[len(want_lines)]
    return (f": expected {len(want_lines)} lines, found {len(got_lines)} (extra from line "
            f"{len(want_lines) + 1}: {extra.rstrip(chr(13) + chr(10))!r})")


def regex_match(path: str | os.PathLike, pattern: str, flags: int = MULTILINE, *,
                universal_newlines: bool = False) -> CheckResult:
    """Some part of the file at `path` matches `pattern` (re.search, MULTILINE by default);
    universal_newlines=True reads \r\n and \r as \n first, as Python's text mode does."""
    import re  # here: most checks.py never match a pattern

    target = shown(path)
    text = workspace_text(target, universal_newlines)
    if not isinstance(text, str):
        return text
    if re.search(pattern, text, flags):
        return passed(f"{target}: matches {pattern!r}")
    return failed(f"{target}: no match for {pattern!r}")


def universal(text: str) -> str:
    """\r\n and \r read as \n, as Python's text mode does."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def workspace_text(target: str, universal_newlines: bool = False) -> str | CheckResult:
    """A workspace file's text, or the failed CheckResult saying why it cannot be read: missing,
    a symlink (never followed: it could point at a file the agent must not quote), not a regular
    file, or larger than READ_CAP_BYTES."""
    try:
        data = read_capped(target, READ_CAP_BYTES)
    except UntrustedFile as exc:
        return failed(f"{target}: {str(exc).split(': ', 1)[-1]}")
    if data is None:
        return failed(f"{target}: file is missing")
    text = data.decode("utf-8", errors="replace")
    return universal(text) if universal_newlines else text
