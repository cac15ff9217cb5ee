"""add_months clamps to the month's last day; billing_schedule keeps the anchor day (no drift)."""

from ci_eval.checks import add_hidden_tests, main, run_tests

HIDDEN = add_hidden_tests("test_billing_month_end.py")

main(
    lambda: run_tests(
        fail_to_pass=[
            "tests/test_billing.py::test_schedule_month_end",
            f"{HIDDEN}::test_add_months_clamps_to_month_end",
            f"{HIDDEN}::test_add_months_negative",
            f"{HIDDEN}::test_add_months_exhaustive",
            f"{HIDDEN}::test_schedule_keeps_anchor_day",
        ],
        pass_to_pass=[
            "tests/test_billing.py::test_add_months_simple",
            "tests/test_billing.py::test_schedule_mid_month",
        ],
        restore=["tests/test_billing.py"],
    )
)
