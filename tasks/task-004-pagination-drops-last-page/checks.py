"""Pagination: every item exactly once, page_count rounds up, no empty trailing page."""

from ci_eval.checks import add_hidden_tests, main, run_tests

HIDDEN = add_hidden_tests("test_pagination_hidden.py")

hidden = [f"{HIDDEN}::test_every_item_exactly_once_in_order[{n}]" for n in (1, 2, 3, 4, 7, 10, 25)]
hidden += [
    f"{HIDDEN}::test_page_count[{case}]"
    for case in ("0-10-0", "1-10-1", "10-10-1", "11-10-2", "101-25-5", "100-25-4", "3-1-3")
]
hidden += [f"{HIDDEN}::test_no_empty_trailing_page", f"{HIDDEN}::test_get_page_last_partial",
           f"{HIDDEN}::test_export_101_orders"]

main(
    lambda: run_tests(
        fail_to_pass=["tests/test_export.py::test_export_includes_every_order"],
        pass_to_pass=["tests/test_export.py::test_export_full_pages", *hidden],
        restore=["tests/test_export.py"],
    )
)
