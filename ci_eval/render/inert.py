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
