"""search_users: no SQL injection via q or sort, literal prefix (quotes, %, _, backslash), same results.

`sort` must be exactly one of the three columns: the hidden tests also pass harmless-looking
values (substrings of the allowed names, "id", "1", "name, email"), so a check against a string
or a pattern instead of the three names fails. A fixed-seed fuzz of 400 queries (prefixes of real
names with shuffled case, runs of quote, %, _, backslash, brackets...) is compared with a literal,
case-insensitive prefix match over names that themselves hold those characters. The caller's
connection comes back as it was given (row factory, open transaction): a fix that switches it to
sqlite3.Row or commits for the caller changes the app's other queries."""

from ci_eval.checks import add_hidden_tests, main, run_tests

HIDDEN = add_hidden_tests("test_search_security.py")

main(
    lambda: run_tests(
        fail_to_pass=[
            f"{HIDDEN}::test_injection_through_q_returns_nothing",
            f"{HIDDEN}::test_injection_through_sort_is_rejected",
            f"{HIDDEN}::test_apostrophe",
            f"{HIDDEN}::test_wildcards_are_literal",
        ],
        pass_to_pass=[
            f"{HIDDEN}::test_existing_behaviour",
            f"{HIDDEN}::test_literal_prefix_fuzz",
            f"{HIDDEN}::test_the_callers_connection_is_left_as_it_was",
            "tests/test_search.py::test_prefix",
            "tests/test_search.py::test_case_insensitive",
            "tests/test_search.py::test_sort_descending",
        ],
        restore=["tests/test_search.py", "tests/conftest.py", "conftest.py", "directory/schema.sql"],
        project_config=True,  # the fixtures live in tests/conftest.py, restored above
    )
)
