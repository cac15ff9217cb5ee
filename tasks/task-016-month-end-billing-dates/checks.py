"""add_months clamps to the month's last day; billing_schedule keeps the anchor day (no drift)."""

import shutil
from pathlib import Path

from ci_eval.checks import main, run_tests, task_dir

HIDDEN = "tests/test_billing_month_end.py"
shutil.copy(task_dir() / "hidden_tests" / "test_billing_month_end.py", Path(HIDDEN))

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
