"""Text for a 100-column terminal: tables whose first column (task ids) is cut to fit, lines
wrapped or cut. A cut task id keeps its `task-NNN` prefix, which alone names the task for every
command that takes one (`ci-eval show task-019 1`)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

WIDTH = 100
MIN_FIRST = 20  # a cut task id keeps task-NNN- and some of its name
MIN_OTHER = 12


def simple_table(rows: list[list], headers: Sequence[str], *, header_padding: int = 2) -> str:
    """The table of tabulate's "simple" format with every cell text flush left (tabulate(rows,
    headers, tablefmt="simple", disable_numparse=True), wide-character mode off), drawn here:
    importing tabulate cost every CLI start that prints a table about 25 ms of CPU (it reads its
    own version through importlib.metadata). Columns are two spaces apart and as wide as their
    widest cell, or their header and `header_padding` more; cells are stripped, None is empty, a
    line break in a cell is a space (one line per row); lines end without spaces."""
    heads = [_one_line(h) for h in headers]
    cells = [["" if c is None else _one_line(c).strip() for c in row] for row in rows]
    widths = [max([len(h) + header_padding, *(len(row[i]) for row in cells if i < len(row))])
              for i, h in enumerate(heads)]

    def line(parts) -> str:
        return "  ".join(parts).rstrip()

    return "\n".join([line(h.ljust(w) for h, w in zip(heads, widths)),
                      line("-" * w for w in widths),
                      *(line(c.ljust(w) for c, w in zip(row, widths)) for row in cells)])


def _one_line(value: object) -> str:
    return str(value).replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def fit_table(rows: list[list], headers: list[str], width: int = WIDTH) -> str:
    """simple_table with columns as wide as their widest cell (their header included); while
    wider than `width`, the column with the most to spare is cut (its cells end in "…"), never
    below its header, MIN_FIRST characters for the first column (task ids) or MIN_OTHER for the
    others. The JSON output has every cell whole."""

    def draw(cells: list[list[str]]) -> str:
        return simple_table(cells, headers, header_padding=0)

    def widest(text: str) -> int:
        return max(len(line) for line in text.splitlines())

    cells = [["" if c is None else str(c) for c in r] for r in rows]
    text = draw(cells)
    while cells and widest(text) > width:
        sizes = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
        floors = [max(len(h), MIN_FIRST if i == 0 else MIN_OTHER) for i, h in enumerate(headers)]
        spare = [size - floor for size, floor in zip(sizes, floors)]
        column = max(range(len(headers)), key=spare.__getitem__)
        if spare[column] <= 0:
            break
        keep = sizes[column] - min(widest(text) - width, spare[column])
        cells = [[*r[:column], cut(r[column], keep), *r[column + 1:]] for r in cells]
        text = draw(cells)
    return text


def cut(text: str, width: int = WIDTH) -> str:
    """One line of at most `width` characters."""
    return text if len(text) <= width else text[: width - 1] + "…"


def wrap(text: str, width: int = WIDTH, indent: str = "") -> str:
    """Words wrapped at `width`, continuation lines indented."""
    return textwrap.fill(text, width=width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)
