"""Refactor: pricing.discounted_total holds the rules, Cart.total and invoice_total delegate to it,
and every amount is unchanged (characterisation tests against the pre-refactor behaviour)."""

import os
import subprocess
import sys
from pathlib import Path

from ci_eval.checks import add_hidden_tests, failed, main, passed, run_tests

os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
HIDDEN = add_hidden_tests("test_pricing_hidden.py")
TIERS = ["standard", "silver", "gold", "platinum"]

# Replace discounted_total everywhere it is bound (module attribute or `from ... import`), then see
# whether Cart.total and invoice_total still produce the real amount: if they do, they kept a copy.
PROBE = r"""
import sys
from decimal import Decimal
import billing.cart, billing.invoice, billing.pricing
original = billing.pricing.discounted_total
SENTINEL = Decimal("-7.77")
calls = []
def fake(*args, **kwargs):
    calls.append(args)
    return SENTINEL
for module in list(sys.modules.values()):
    name = getattr(module, "__name__", "")
    if not name.startswith("billing"):
        continue
    for attr, value in list(vars(module).items()):
        if value is original:
            setattr(module, attr, fake)
cart = billing.cart.Cart("gold")
cart.add("desk", Decimal("120.00"))
results = {
    "Cart.total": cart.total("WELCOME10"),
    "invoice_total": billing.invoice.invoice_total([("desk", Decimal("120.00"), 1)], "gold", "WELCOME10"),
}
bad = [name for name, value in results.items() if value != SENTINEL]
if bad:
    print("do not use billing.pricing.discounted_total: " + ", ".join(bad))
    sys.exit(1)
"""


def check_delegation():
    if not Path("billing/pricing.py").is_file():
        return failed("billing/pricing.py does not exist")
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=30, check=False)
    if proc.returncode != 0:
        return failed(f"the discount rules are not shared: {(proc.stdout + proc.stderr).strip()[-400:]}")
    return passed("Cart.total and invoice_total delegate to pricing.discounted_total")


main(
    check_delegation,
    lambda: run_tests(
        pass_to_pass=[
            "tests/test_billing.py::test_cart_standard",
            "tests/test_billing.py::test_cart_gold_with_coupon_is_capped",
            "tests/test_billing.py::test_invoice_silver",
            *[f"{HIDDEN}::test_cart_and_invoice_unchanged[{t}]" for t in TIERS],
            *[f"{HIDDEN}::test_discounted_total[{t}]" for t in TIERS],
        ],
        restore=["tests/test_billing.py"],
    ),
)
