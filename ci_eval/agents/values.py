"""Checks shared by the ci-eval.yaml readers: every failure is a UserError naming the file and
the field path, with what was expected and what was found."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ci_eval.agents.shell import plain_argv, unclosed_quote
from ci_eval.errors import UserError
from ci_eval.tasks.schema import render

URL_UNSAFE_RE = re.compile(r"[\s\"'\\<>`]")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MODEL_RE = re.compile(r"^[^\s]{1,200}$")


def got(value: Any) -> str:
    """How a found value is shown in a message."""
    if value is None:
        return "nothing (null)"
    return render(value)


def is_number(value: Any) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float))
            and math.isfinite(value))


def positive_number(value: Any, path: Path | str, field: str) -> float:
    if not is_number(value) or value <= 0:
        raise UserError(f"expected a positive number, got {got(value)}", path=path, field=field)
    return float(value)


def non_negative_number(value: Any, path: Path | str, field: str) -> float:
    if not is_number(value) or value < 0:
        raise UserError(f"expected a number >= 0, got {got(value)}", path=path, field=field)
    return float(value)


def whole_number(value: Any, path: Path | str, field: str) -> int:
    """A whole number >= 1 (3.0 is 3; true is not a number)."""
    if not is_number(value) or value < 1 or float(value) != int(value):
        raise UserError(f"expected a whole number >= 1, got {got(value)}", path=path, field=field)
    return int(value)


def model_name(value: Any, path: Path | str, where: str) -> str:
    if not isinstance(value, str) or not MODEL_RE.match(value):
        raise UserError(f"expected a model name (one word), got {got(value)}", path=path,
                        field=where)
    return value


def argument_list(value: Any, path: Path | str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise UserError(f"expected a list of arguments, got {got(value)}", path=path, field=where)
    args = []
    for index, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise UserError(f"expected a string, got {got(item)}", path=path,
                            field=f"{where}[{index}]")
        args.append(str(item))
    return tuple(args)


def bash_script(value: str, path: Path | str | None, where: str) -> str:
    if not value.strip():
        raise UserError("expected a command, got an empty string", path=path, field=where)
    problem = unclosed_quote(value)
    if problem:
        raise UserError(f"cannot split the command like a shell would ({problem})", path=path,
                        field=where)
    return value


def string_command(value: str, path: Path | str | None, where: str) -> tuple[tuple[str, ...], bool]:
    script = bash_script(value, path, where)
    argv = plain_argv(script)
    return (argv, False) if argv else (("bash", "-c", script), True)


def command_value(value: Any, path: Path | str, where: str) -> tuple[tuple[str, ...], bool]:
    """(what to execute, whether it is a bash script) for a `command` value."""
    if isinstance(value, str):
        return string_command(value, path, where)
    if isinstance(value, list):
        if not value:
            raise UserError("expected a command, got an empty list", path=path, field=where)
        argv = argument_list(value, path, where)
        if not argv[0]:
            raise UserError(
                "expected the program name, got an empty string", path=path, field=f"{where}[0]"
            )
        return argv, False
    raise UserError(
        f"expected a command (a string, or a list of strings), got {got(value)}",
        path=path,
        field=where,
    )


def env_names(value: Any, path: Path | str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise UserError(
            f"expected a list of environment variable names, got {got(value)}",
            path=path,
            field=where,
        )
    names: list[str] = []
    for index, item in enumerate(value):
        if not isinstance(item, str) or not ENV_NAME_RE.match(item):
            raise UserError(
                f"expected an environment variable name (letters, digits, '_'), got {got(item)}",
                path=path,
                field=f"{where}[{index}]",
            )
        if item not in names:
            names.append(item)
    return tuple(names)


def base_url(value: Any, path: Path | str, where: str) -> str:
    """An http(s) URL with a host, nothing a shell or TOML string could misread, and no
    credentials in it (a key goes in the tool's key variable, not into argv and records)."""
    expected = "expected an http:// or https:// URL (e.g. http://127.0.0.1:8080/v1)"
    if not isinstance(value, str) or not value or len(value) > 2000 or URL_UNSAFE_RE.search(value):
        raise UserError(f"{expected}, got {got(value)}", path=path, field=where)
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise UserError(f"{expected}, got {got(value)}", path=path, field=where) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"{expected}, got {got(value)}", path=path, field=where)
    if parts.username or parts.password:
        raise UserError("expected a URL without credentials (user:password@): give the key in "
                        "the tool's key variable", path=path, field=where)
    if parts.query or parts.fragment:
        raise UserError(f"expected a base URL without a query or fragment, got {got(value)}",
                        path=path, field=where)
    return value
