"""Text that came from an agent or from the checks, rendered inert in markdown (pure).

Reasons quote what the agent printed and what its code made the checks say: in a PR comment
the bot posts, `@org/maintainers please merge ![beacon](https://x) [ok](javascript:...)` would
be a team mention, an image fetched from the agent's server and a link. Backslash escapes do not
stop GitHub's mentions (they are found in the rendered text), so such text is shown as a code
span: no mention, link, image, emphasis or HTML is read inside one. The fence is one backtick
longer than the longest run of backticks in the text (CommonMark), padded with a space when the
text starts or ends with a backtick; the text is one line (newlines and other white space
collapsed), cut at a word boundary with an ellipsis past its limit; in a table cell `|` is
escaped as `\\|` (GFM splits cells before it reads code spans, and unescapes `\\|` inside them).
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 (NEL among them), and the Unicode line and paragraph
# separators: each one a line break or a terminal command to some reader of the text
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
# a workflow command (GitHub Actions reads `::error ...`, `::stop-commands::...` and the older
# `##[...]` at the start of a line, white space before them ignored)
_COMMAND = re.compile(r"^\s*(::|##\[)")
LIMIT = 180  # characters of agent text shown, ellipsis included (summaries keep 200 of a reason)
_BACKTICKS = re.compile(r"`+")


def shortened(text: str, limit: int = LIMIT) -> str:
    """One line of at most `limit` characters: cut at the last space in its second half, else
    mid-word, with an ellipsis."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def code_span(text: str, *, limit: int = LIMIT, in_table: bool = False) -> str:
    """`text` as an inert markdown code span ("" for empty text)."""
    flat = shortened(text, limit)
    if not flat:
        return ""
    longest = max((len(run) for run in _BACKTICKS.findall(flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    span = f"{fence}{pad}{flat}{pad}{fence}"
    return span.replace("|", "\\|") if in_table else span


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: str) -> str:
    """Agent- or checks-derived text made safe to print where a CI step reads it: every line
    break is a newline (\\r\\n and \\r included), the other control characters, NEL and
    the Unicode line separators are shown as escapes (\\x1b, \\x85, \\u2028), and a line
    that a workflow would obey as a command (`::error`, `::stop-commands`, `##[`) is shown
    behind "> "."""
    lines = str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(_inert_line(_CONTROLS.sub(_escaped, line)) for line in lines)


def _inert_line(line: str) -> str:
    return f"> {line}" if _COMMAND.match(line) else line


def json_line_breaks(text: str) -> str:
    """JSON text (ensure_ascii=False) with NEL and the Unicode line separators escaped: valid
    JSON either way, but one physical line for every reader."""
    return (text.replace("\u0085", "\\u0085").replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029"))
