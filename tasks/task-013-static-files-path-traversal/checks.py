"""resolve_static: nothing outside root (.., sibling prefix, symlinks); legit paths still served."""

from ci_eval.checks import add_hidden_tests, main, run_tests

HIDDEN = add_hidden_tests("test_static_traversal.py")
OUTSIDE = ["dotdot", "nested-dotdot", "sibling-prefix", "leading-slash-sibling", "symlinked-dir",
           "symlinked-file"]

main(
    lambda: run_tests(
        fail_to_pass=[f"{HIDDEN}::test_outside_root_is_forbidden[{case}]" for case in OUTSIDE],
        pass_to_pass=[
            f"{HIDDEN}::test_absolute_path_is_forbidden",
            f"{HIDDEN}::test_legitimate_paths",
            f"{HIDDEN}::test_missing_file_still_not_found",
            "tests/test_static.py::test_serves_file",
            "tests/test_static.py::test_missing_file",
        ],
        restore=["tests/test_static.py"],
    )
)
