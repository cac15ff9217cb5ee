"""Strict JSON for the files people edit by hand (baseline.json, metadata.json).

Python's json module accepts what JSON does not: NaN, Infinity and numbers too large for a float
(1e999 becomes inf); and a key given twice silently keeps the last value. Here:

    data = strict_json.loads(text)            # StrictJSONError on a duplicate key (names the key)
    bad = strict_json.first_non_finite(data)  # ("$.tasks.x.pass_rate", nan) or None

JSON syntax errors stay json.JSONDecodeError (with line and column); other ValueErrors of the
parser (an integer with thousands of digits, nesting too deep) become StrictJSONError.

JSON that something hostile wrote (an agent's output, files in its reach) is read with limits:

    data = strict_json.loads_limited(text)        # size, depth, digits, NaN/Infinity, duplicates
    value, end = strict_json.decode_at(text, i)   # the same for one value starting at text[i]

Both raise json.JSONDecodeError or StrictJSONError (both ValueError), never RecursionError:
nesting deeper than the interpreter's recursion limit stops the parser, and what it read is
then checked against max_depth without recursion.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable
from typing import Any

from ci_eval.errors import UserError
from ci_eval.output import UntrustedFile, read_capped

# The largest value each kind of number ci-eval reads may take: a trillion tokens, a million
# dollars, 115 days of one run, a million runs or attempts. Beyond, an agent's report is ignored
# (the field null, a note on the run: agents/preset.py) and a results line is refused (an error
# naming file:line: results/records.py). No aggregate over records can overflow.
NUMBER_LIMITS = {"tokens": 10**12, "cost": 10**6, "seconds": 10**7, "count": 10**6}

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
# Strings (skipped whole) and brackets, for the depth check.
_DEPTH_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')

MAX_CHARS = 16 * 1024 * 1024
MAX_DEPTH = 200
MAX_INT_DIGITS = 40


class StrictJSONError(ValueError):
    """The text parses as Python's JSON but is not acceptable; the message names the problem."""


def loads(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except (json.JSONDecodeError, StrictJSONError):
        raise
    except RecursionError:
        raise StrictJSONError("nested too deeply") from None
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        raise StrictJSONError(" ".join(str(exc).split())) from None


def loads_limited(text: str, *, max_chars: int = MAX_CHARS, max_depth: int = MAX_DEPTH,
                  max_int_digits: int = MAX_INT_DIGITS) -> Any:
    """One JSON document with limits: at most max_chars characters and max_depth nested
    arrays/objects, integers of at most max_int_digits digits, no NaN/Infinity/1e999, no key twice."""
    value, end = decode_at(text, 0, max_chars=max_chars, max_depth=max_depth,
                           max_int_digits=max_int_digits, skip_space=True)
    rest = text[end:]
    if rest.strip():
        raise json.JSONDecodeError("Extra data", text, len(text) - len(rest.lstrip()))
    return value


def decode_at(text: str, index: int, *, max_chars: int = MAX_CHARS, max_depth: int = MAX_DEPTH,
              max_int_digits: int = MAX_INT_DIGITS, skip_space: bool = False) -> tuple[Any, int]:
    """The JSON value starting at text[index] (raw_decode), with the limits of loads_limited
    counted from index (max_chars applies to all of text[index:]); returns (value, index just
    after it). Text after the value is ignored."""
    if skip_space:
        index += len(text[index:]) - len(text[index:].lstrip())
    if len(text) - index > max_chars:
        raise StrictJSONError(f"longer than {max_chars} characters")

    decoder = _limited_decoder(max_int_digits)
    try:
        value, end = decoder.raw_decode(text, index)
    except (json.JSONDecodeError, StrictJSONError):
        raise
    except RecursionError:  # the C scanner stops at the interpreter's recursion limit
        raise StrictJSONError(f"nested deeper than {max_depth} levels") from None
    except ValueError as exc:
        raise StrictJSONError(" ".join(str(exc).split())) from None
    _check_depth(text, index, end, max_depth)  # only what was read: text that fails stays cheap
    return value, end


def load_file(path, *, cap: int, what: str, field: str | None = None) -> Any:
    """The strict JSON content of a file someone else may have written (an artifact, a log):
    never through a symbolic link, only a regular file, at most `cap` bytes, UTF-8. Every
    problem is one UserError naming the path (and `field`), saying it expected `what`."""
    try:
        raw = read_capped(path, cap)
    except UntrustedFile as exc:
        detail = str(exc).split(": ", 1)[-1]
        if "symlink" in detail:
            detail = "is a symbolic link (not followed)"
        elif "cap" in detail:
            detail = f"larger than {_size(cap)}"
        raise UserError(f"{detail}; expected {what}", path=path, field=field) from None
    if raw is None:
        raise UserError(f"cannot read (no such file); expected {what}", path=path, field=field)
    try:
        return loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start})", path=path, field=field) from None
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                        path=path, field=field) from None
    except StrictJSONError as exc:
        raise UserError(f"invalid JSON: {exc}", path=path, field=field) from None


def _size(cap: int) -> str:
    return f"{cap // (1024 * 1024)} MiB" if cap % (1024 * 1024) == 0 else f"{cap} bytes"


def first_non_finite(data: Any) -> tuple[str, float] | None:
    """(JSON path, value) of the first NaN or infinite number in document order, else None."""
    stack: list[tuple[list, Any]] = [([], data)]
    while stack:
        parts, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return json_path(parts), value
        if isinstance(value, dict):
            stack.extend((parts + [k], v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((parts + [i], v) for i, v in reversed(list(enumerate(value))))
    return None


def json_path(parts: Iterable[Any]) -> str:
    """["tags", 2] -> "$.tags[2]"; keys that are not identifiers are quoted: $["a b"]."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.match(str(part)):
            out += f".{part}"
        else:
            out += f"[{json.dumps(str(part), ensure_ascii=False)}]"
    return out


def show_number(value: float) -> str:
    """How a non-finite number is shown in messages: NaN, Infinity, -Infinity (as JSON has it)."""
    return json.dumps(value)


@functools.lru_cache(maxsize=8)
def _limited_decoder(max_int_digits: int) -> json.JSONDecoder:
    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > max_int_digits:
            raise StrictJSONError(f"an integer with more than {max_int_digits} digits")
        return int(digits)

    def parse_float(number: str) -> float:
        if len(number) > max_int_digits + 400:
            raise StrictJSONError(f"a number written with {len(number)} characters")
        value = float(number)
        if not math.isfinite(value):
            raise StrictJSONError(f"a number too large for a float ({number[:20]})")
        return value

    def parse_constant(name: str) -> Any:
        raise StrictJSONError(f"{name} is not JSON")

    return json.JSONDecoder(object_pairs_hook=_unique_keys, parse_int=parse_int,
                            parse_float=parse_float, parse_constant=parse_constant)


def _check_depth(text: str, index: int, end: int, max_depth: int) -> None:
    """StrictJSONError when the JSON value text[index:end] nests deeper than max_depth.
    Linear, and without recursion."""
    depth = 0
    for match in _DEPTH_TOKENS.finditer(text, index, end):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > max_depth:
                raise StrictJSONError(f"nested deeper than {max_depth} levels")
        elif token in "]}":
            depth -= 1
            if depth <= 0:
                return
        elif depth == 0:
            return  # a string at the top level: nothing nests


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    result: dict = {}
    for key, value in pairs:
        if key in result:
            raise StrictJSONError(
                f"duplicate key {json.dumps(key, ensure_ascii=False)} "
                "(each key may appear once per object)"
            )
        result[key] = value
    return result
