r"""parse_duration conforms to docs/duration-spec.md (unchanged): examples, grammar, errors.

Beyond the spec's own examples and error cases, a fixed-seed fuzz compares parse_duration with an
independent scanner of the grammar on 3600 strings (random ones over digits, units, whitespace and
typo characters; well-formed ones built from the grammar), so a parser that rejects exactly the
error shapes the spec lists but still accepts other typos (`1h,30m`) fails. Numbers of any length
are accepted (the fuzz's stay below 1000, so a capped `\d{1,3}` would slip through) and only
ASCII digits are digits (`\d` and str.isdigit() also take other scripts' digits)."""

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
            f"{HIDDEN}::test_reference_agrees_with_the_spec_table",
            f"{HIDDEN}::test_fuzz_against_the_grammar",
            f"{HIDDEN}::test_numbers_of_any_size",
            f"{HIDDEN}::test_digits_are_ascii_digits",
            "tests/test_duration.py::test_hours_and_minutes",
            "tests/test_duration.py::test_seconds",
            "tests/test_duration.py::test_unknown_unit",
        ],
        restore=["tests/test_duration.py"],
    ),
)
