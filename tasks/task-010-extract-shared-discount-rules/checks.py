"""Refactor: pricing.discounted_total holds the rules, Cart.total and invoice_total delegate to it,
and every amount is unchanged (characterisation tests against the pre-refactor behaviour: a fixed
grid of amounts plus 1500 fixed-seed carts with several lines, quantities and half cents, so a
rewrite that is right only on the grid, e.g. float rates, fails). The delegation probe tries
several tier/coupon combinations, so delegating for some inputs only is caught. Invoice lines keep
every shape they were accepted in (prices as strings or ints, lines as a generator) and codes
stay case-sensitive: a refactor that narrows types, iterates the lines twice or folds case
changes what is charged."""

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
bad = []
for tier, coupon in [("gold", "WELCOME10"), ("standard", None), ("silver", "FREESHIP"),
                     ("platinum", "BOGUS")]:
    lines = [("desk", Decimal("120.00"), 1), ("pen", Decimal("2.35"), 3)]
    cart = billing.cart.Cart(tier)
    for sku, price, qty in lines:
        cart.add(sku, price, qty)
    if cart.total(coupon) != SENTINEL:
        bad.append(f"Cart.total ({tier}, {coupon})")
    if billing.invoice.invoice_total(lines, tier, coupon) != SENTINEL:
        bad.append(f"invoice_total ({tier}, {coupon})")
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
            f"{HIDDEN}::test_random_amounts_unchanged",
            f"{HIDDEN}::test_invoice_lines_keep_every_accepted_shape",
            f"{HIDDEN}::test_codes_stay_case_sensitive",
        ],
        restore=["tests/test_billing.py"],
    ),
)
