"""Text for a 100-column terminal: tables whose first column (task ids) is cut to fit, lines
wrapped or cut. A cut task id keeps its `task-NNN` prefix, which alone names the task for every
command that takes one (`ci-eval show task-019 1`)."""

from __future__ import annotations

import textwrap

WIDTH = 100
MIN_FIRST = 20  # a cut task id keeps task-NNN- and some of its name
MIN_OTHER = 12


def fit_table(rows: list[list], headers: list[str], width: int = WIDTH) -> str:
    """tabulate's "simple" table; while wider than `width`, the column with the most to spare
    is cut (its cells end in "…"), never below its header, MIN_FIRST characters for the first
    column (task ids) or MIN_OTHER for the others. The JSON output has every cell whole."""
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
