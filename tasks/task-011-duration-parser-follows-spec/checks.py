"""parse_duration conforms to docs/duration-spec.md (unchanged): examples, grammar, errors."""

from ci_eval.checks import add_hidden_tests, failed, file_equals, main, passed, run_tests, task_dir

HIDDEN = add_hidden_tests("test_duration_spec.py")
SPEC = "docs/duration-spec.md"


def spec_unchanged():
    result = file_equals(SPEC, task_dir() / "repo-state" / SPEC)
    if not result.ok:
        return failed(f"the spec is the source of truth and must not change: {result.reason}")
    return passed("spec unchanged")


main(
    spec_unchanged,
    lambda: run_tests(
        fail_to_pass=[f"{HIDDEN}::test_valid_examples", f"{HIDDEN}::test_errors"],
        pass_to_pass=[
            f"{HIDDEN}::test_returns_int",
            "tests/test_duration.py::test_hours_and_minutes",
            "tests/test_duration.py::test_seconds",
            "tests/test_duration.py::test_unknown_unit",
        ],
        restore=["tests/test_duration.py"],
    ),
)
