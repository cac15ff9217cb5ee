"""resolve_static: nothing outside root (.., sibling prefix, symlinks); legit paths still served.

Symlinks are judged by where they lead: relative and absolute links out of root (or to a sibling
folder) are Forbidden, links that stay inside root are served, and a root given through a
symlink or with a trailing slash works, so "forbid every symlink" fails like "forbid every ..".
Chains of links are followed to their end (two hops that each stay inside root but lead out are
Forbidden: a resolver that reads one link per component misses them), and the path is used as
given, already decoded (files named `50%25off.txt` or `%2e%2e/` are served: decoding twice loses
them).
"""

from ci_eval.checks import add_hidden_tests, main, run_tests

HIDDEN = add_hidden_tests("test_static_traversal.py")
OUTSIDE = ["dotdot", "nested-dotdot", "sibling-prefix", "leading-slash-sibling", "symlinked-dir",
           "symlinked-file", "relative-symlink", "symlink-to-sibling", "two-hop-dir-link",
           "two-hop-file-link"]

main(
    lambda: run_tests(
        fail_to_pass=[f"{HIDDEN}::test_outside_root_is_forbidden[{case}]" for case in OUTSIDE],
        pass_to_pass=[
            f"{HIDDEN}::test_absolute_path_is_forbidden",
            f"{HIDDEN}::test_legitimate_paths",
            f"{HIDDEN}::test_missing_file_still_not_found",
            f"{HIDDEN}::test_symlinks_that_stay_inside_root_are_served",
            f"{HIDDEN}::test_names_with_percent_escapes_are_served_as_named",
            f"{HIDDEN}::test_root_given_through_a_symlink_or_with_a_trailing_slash",
            "tests/test_static.py::test_serves_file",
            "tests/test_static.py::test_missing_file",
        ],
        restore=["tests/test_static.py"],
    )
)
