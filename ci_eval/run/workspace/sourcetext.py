"""A changed file's bytes as text, the way Python reads a source file, and its lines as Python
splits them (pure).

The rubric's pattern criteria read code, so they must read what the interpreter runs: a file
with a PEP 263 coding cookie (`# -*- coding: latin-1 -*-`) is valid Python in that encoding, a
UTF-8 BOM is dropped, and Python ends lines at `\\n`, `\\r\\n` and `\\r` only (str.splitlines
also splits at form feeds and other separators, inside what Python reads as one line). Every
file is read this way (a script without a .py suffix runs through `python FILE` just as well);
a file without a cookie is UTF-8, as for Python.

`source_text` gives (text, "") or (None, why not): the reason is what a rubric criterion that
could not read the file says.
"""

from __future__ import annotations

import io
import re
import tokenize

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|\Z)")  # no alternative to backtrack into


def source_text(data: bytes) -> tuple[str | None, str]:
    """(the text, "") or (None, the reason it is not text Python would read)."""
    if b"\0" in data:  # git calls it binary; Python refuses source holding a NUL byte
        return None, "binary (NUL bytes)"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return None, f"not readable as Python reads it: {exc.msg}"
    try:
        text = data.decode(encoding)  # utf-8-sig drops the BOM
    except UnicodeDecodeError as exc:
        return None, f"not valid {_named(encoding)} (byte {exc.start})"
    except LookupError:  # a codec that is no text encoding (rot13): Python refuses it too
        return None, f"declares {encoding}, which is not a text encoding"
    return text, ""


def _named(encoding: str) -> str:
    return "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding


def source_lines(text: str) -> list[str]:
    """The lines of text with their ends, split where Python splits them (\\n, \\r\\n, \\r)."""
    if "\r" not in text:  # the common case, at str.split's speed
        lines = text.split("\n")
        return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    return [line for line in _LINE.findall(text) if line]
