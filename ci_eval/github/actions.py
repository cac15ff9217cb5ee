"""The Actions runner's side channels: step outputs ($GITHUB_OUTPUT), the step summary
($GITHUB_STEP_SUMMARY, at most 1 MiB per step) and workflow commands on stdout (::error,
::warning, ::notice annotations; GitHub shows at most 10 error annotations per step).

    set_outputs({"verdict": "fail", "regressed": "2"})   # UserError when GITHUB_OUTPUT is unset
    append_summary(markdown)                               # False when not in Actions
    error("task-003 regressed ...", title="ci-eval")

Values are written with the heredoc syntax (`name<<DELIMITER`), so a value may hold newlines; the
delimiter is random and checked not to occur in the value. Annotation text is escaped as the
runner expects (% CR LF in the message; also : and , in properties), so a task note cannot start
a command of its own.
"""

from __future__ import annotations

import os
import re
import secrets
import sys

from ci_eval.errors import UserError
from ci_eval.output import mask

MAX_SUMMARY_BYTES = 1024 * 1024  # GitHub refuses a step summary over 1 MiB
MAX_ERROR_ANNOTATIONS = 10  # per step; more are dropped by GitHub
OUTPUT_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
SUMMARY_TRUNCATED = "\n\n> ⚠️ Step summary truncated at GitHub's 1 MiB limit.\n"


def set_outputs(values: dict[str, str], *, path: str | None = None) -> None:
    """Append step outputs to $GITHUB_OUTPUT (or `path`)."""
    target = path or os.environ.get("GITHUB_OUTPUT")
    if not target:
        raise UserError("GITHUB_OUTPUT is not set (step outputs can only be written inside a "
                        "GitHub Actions step)", field="--github-output")
    chunks = []
    for name, value in values.items():
        if not OUTPUT_NAME_RE.match(name):
            raise ValueError(f"bad output name {name!r}")
        value = mask(str(value))
        delimiter = f"ci_eval_{secrets.token_hex(8)}"
        while delimiter in value:
            delimiter = f"ci_eval_{secrets.token_hex(8)}"
        chunks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write("".join(chunks))
    except OSError as exc:
        raise UserError(f"cannot write step outputs ({exc.strerror or exc})", path=target,
                        field="GITHUB_OUTPUT") from None


def append_summary(markdown: str, *, path: str | None = None) -> bool:
    """Append to the step summary, keeping the whole file within MAX_SUMMARY_BYTES (the text is
    cut with a visible note). False (nothing written) outside Actions."""
    target = path or os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return False
    try:
        used = os.path.getsize(target) if os.path.exists(target) else 0
    except OSError:
        used = 0
    data = fit_summary(mask(markdown), MAX_SUMMARY_BYTES - used)
    if not data:
        return False
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(data)
    except OSError as exc:
        print(f"ci-eval: warning: cannot write the step summary {target}: "
              f"{exc.strerror or exc}", file=sys.stderr)
        return False
    return True


def fit_summary(markdown: str, room: int) -> str:
    """`markdown` if its UTF-8 fits in `room` bytes, else a cut with SUMMARY_TRUNCATED (whole
    characters only); "" when not even the note fits."""
    if not markdown.endswith("\n"):
        markdown += "\n"
    if len(markdown.encode("utf-8")) <= room:
        return markdown
    keep = room - len(SUMMARY_TRUNCATED.encode("utf-8"))
    if keep <= 0:
        return ""
    cut = markdown.encode("utf-8")[:keep].decode("utf-8", errors="ignore")
    return cut + SUMMARY_TRUNCATED


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | None) -> str:
    """One workflow command line, e.g. `::error title=ci-eval::task-003 regressed`."""
    props = ",".join(f"{key}={escape_property(mask(str(value)))}"
                     for key, value in properties.items() if value is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(mask(message))}"


def error(message: str, *, title: str | None = None) -> None:
    _emit(command("error", message, title=title))


def warning(message: str, *, title: str | None = None) -> None:
    _emit(command("warning", message, title=title))


def notice(message: str, *, title: str | None = None) -> None:
    _emit(command("notice", message, title=title))


def limit_annotations(messages: list[str], limit: int = MAX_ERROR_ANNOTATIONS) -> list[str]:
    """At most `limit` messages: the first limit-1 and one that says how many more there are."""
    if len(messages) <= limit:
        return list(messages)
    rest = len(messages) - (limit - 1)
    return messages[: limit - 1] + [f"... and {rest} more failing task(s): see the step summary"]


def _emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
