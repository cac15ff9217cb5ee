"""Pagination: every order in the export exactly once, in order, for any count and page size.

Behaviour is judged through export_orders (small and large page sizes, counts on both sides of
every multiple); pagination.py's helpers are judged only if they keep their names, so a fix that
restructures them passes. Page sizes up to 1500 in the export, and a property over page sizes up
to a million and counts next to a multiple (hypothesis, fixed examples), catch rounding fudges
that small ones hide; the caller's list must come back as it was given (an export that consumes
its input passes every count check).
"""

from ci_eval.checks import add_hidden_tests, main, run_tests

HIDDEN = add_hidden_tests("test_pagination_hidden.py")

hidden = [f"{HIDDEN}::test_export_every_order_once_in_order[{n}]" for n in (1, 2, 3, 4, 7, 10, 25)]
hidden += [f"{HIDDEN}::test_export_large_pages[{n}]" for n in (200, 999, 1500)]
hidden += [f"{HIDDEN}::test_{name}" for name in (
    "export_101_orders", "export_leaves_the_callers_orders_alone", "page_count_where_kept",
    "page_count_property_where_kept", "iter_pages_where_kept", "get_page_where_kept")]

main(
    lambda: run_tests(
        fail_to_pass=["tests/test_export.py::test_export_includes_every_order"],
        pass_to_pass=["tests/test_export.py::test_export_full_pages", *hidden],
        restore=["tests/test_export.py"],
    )
)
