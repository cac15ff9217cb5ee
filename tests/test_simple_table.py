"""render.terminal.simple_table draws what tabulate's "simple" format drew for the CLI's tables
(it replaced tabulate, whose import cost every table-printing start ~25 ms of CPU): checked
against tabulate itself, the oracle, on generated tables of one-line text."""

from __future__ import annotations

import tabulate as tabulate_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.render.terminal import fit_table, simple_table

# One-line text: no control characters (tabulate reads \n and \r as line breaks, \x1b[ as
# invisible colour codes and \x01 as a separating line, none of which the CLI's cells carry).
TEXT = st.text(st.one_of(st.characters(blacklist_categories=("Cc", "Cs")),
                         st.sampled_from(" \u00a0\u2003-…—▁█")), max_size=12)
CELL = st.one_of(TEXT, st.none(), st.integers(-10**6, 10**6), st.booleans(),
                 st.floats(allow_nan=False, allow_infinity=False))


@st.composite
def tables(draw):
    columns = draw(st.integers(1, 5))
    headers = draw(st.lists(TEXT, min_size=columns, max_size=columns))
    rows = draw(st.lists(st.lists(CELL, min_size=columns, max_size=columns), max_size=6))
    return rows, headers


def tabulated(rows, headers, min_padding: int) -> str:
    saved = tabulate_module.MIN_PADDING, tabulate_module.WIDE_CHARS_MODE
    tabulate_module.MIN_PADDING, tabulate_module.WIDE_CHARS_MODE = min_padding, False
    try:
        return tabulate_module.tabulate(rows, headers=headers, tablefmt="simple",
                                        disable_numparse=True)
    finally:
        tabulate_module.MIN_PADDING, tabulate_module.WIDE_CHARS_MODE = saved


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.sampled_from([0, 2]))
def test_simple_table_draws_what_tabulate_drew(table, padding):
    rows, headers = table
    assert simple_table(rows, headers, header_padding=padding) == tabulated(rows, headers, padding)


def test_a_table_of_the_cli_as_tabulate_drew_it():
    rows = [["task-001-fix-the-parser", "pass", "3/5", None], ["task-002-b", "  fail ", 12, True]]
    headers = ["Task", "Status", "Runs", "Last"]
    assert simple_table(rows, headers) == (
        "Task                     Status    Runs    Last\n"
        "-----------------------  --------  ------  ------\n"
        "task-001-fix-the-parser  pass      3/5\n"
        "task-002-b               fail      12      True")
    assert simple_table(rows, headers) == tabulated(rows, headers, 2)


def test_a_line_break_in_a_cell_stays_on_its_row():
    text = simple_table([["task-001-a", "first\nsecond\r\nthird"], ["task-002-b", "ok"]],
                        ["task", "note"])
    assert text.splitlines()[2:] == ["task-001-a  first second third", "task-002-b  ok"]


def test_fit_table_cuts_the_widest_column_to_the_width():
    rows = [["task-001-" + "x" * 120, "pass"]]
    text = fit_table(rows, ["task", "status"], width=60)
    assert max(len(line) for line in text.splitlines()) == 60
    assert text.splitlines()[2].startswith("task-001-xxx") and "…  pass" in text
