"""Text for a 100-column terminal: tables whose first column (task ids) is cut to fit, lines
wrapped or cut. A cut task id keeps its `task-NNN` prefix, which alone names the task for every
command that takes one (`ci-eval show task-019 1`)."""

from __future__ import annotations

import textwrap

WIDTH = 100
MIN_FIRST = 20  # a cut task id keeps task-NNN- and some of its name
MIN_LAST = 12


def fit_table(rows: list[list[str]], headers: list[str], width: int = WIDTH) -> str:
    """tabulate's "simple" table; when wider than `width`, the first column's cells are cut
    (with "…"), never below its header or MIN_FIRST characters, then the last column's (a
    note: the JSON report has it whole)."""
    import tabulate as tabulate_module

    def draw(cells: list[list[str]]) -> str:
        padding = tabulate_module.MIN_PADDING
        tabulate_module.MIN_PADDING = 0  # columns as wide as their widest cell, not 2 more
        try:
            return tabulate_module.tabulate(cells, headers=headers, tablefmt="simple",
                                            disable_numparse=True)
        finally:
            tabulate_module.MIN_PADDING = padding

    def widest(text: str) -> int:
        return max(len(line) for line in text.splitlines())

    text = draw(rows)
    if widest(text) <= width or not rows:
        return text
    first = max(len(str(r[0])) for r in rows)
    keep = max(len(headers[0]), MIN_FIRST, first - (widest(text) - width))
    if keep < first:
        rows = [[cut(str(r[0]), keep), *r[1:]] for r in rows]
        text = draw(rows)
    if widest(text) > width and len(headers) > 1:  # then the last column (a note) is cut
        last = max(len(str(r[-1])) for r in rows)
        keep = max(len(headers[-1]), MIN_LAST, last - (widest(text) - width))
        if keep < last:
            text = draw([[*r[:-1], cut(str(r[-1]), keep)] for r in rows])
    return text


def cut(text: str, width: int = WIDTH) -> str:
    """One line of at most `width` characters."""
    return text if len(text) <= width else text[: width - 1] + "…"


def wrap(text: str, width: int = WIDTH, indent: str = "") -> str:
    """Words wrapped at `width`, continuation lines indented."""
    return textwrap.fill(text, width=width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)
