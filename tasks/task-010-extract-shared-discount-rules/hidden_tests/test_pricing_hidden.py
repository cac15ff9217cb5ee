from decimal import Decimal

import pytest
from billing.cart import Cart
from billing.invoice import invoice_total
from billing.pricing import discounted_total

TIERS = ["standard", "silver", "gold", "platinum"]
COUPONS = [None, "WELCOME10", "FREESHIP", "BOGUS"]
AMOUNTS = ["0.00", "3.00", "10.05", "10.15", "49.99", "50.00", "123.45", "1000.005"]


def reference(subtotal, tier, coupon):
    # the behaviour before the refactor, written out independently
    from decimal import ROUND_HALF_UP

    rate = {"gold": Decimal("0.10"), "silver": Decimal("0.05")}.get(tier, Decimal(0))
    if coupon == "WELCOME10":
        rate += Decimal("0.10")
    if coupon == "FREESHIP" and subtotal < 50:
        subtotal -= Decimal("4.99")
    rate = min(rate, Decimal("0.15"))
    amount = max(subtotal * (1 - rate), Decimal(0))
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


@pytest.mark.parametrize("tier", TIERS)
def test_cart_and_invoice_unchanged(tier):
    for coupon in COUPONS:
        for amount in AMOUNTS:
            cart = Cart(tier)
            cart.add("item", Decimal(amount))
            want = reference(Decimal(amount), tier, coupon)
            assert cart.total(coupon) == want, (tier, coupon, amount)
            assert invoice_total([("item", Decimal(amount), 1)], tier, coupon) == want


@pytest.mark.parametrize("tier", TIERS)
def test_discounted_total(tier):
    for coupon in COUPONS:
        for amount in AMOUNTS:
            got = discounted_total(Decimal(amount), tier, coupon)
            assert isinstance(got, Decimal)
            assert got == reference(Decimal(amount), tier, coupon), (tier, coupon, amount)
    assert discounted_total(Decimal("10.05"), tier) == reference(Decimal("10.05"), tier, None)


def random_cases(seed, count):
    """Fixed-seed amounts in whole cents and half cents, with several lines and quantities."""
    import random

    rng = random.Random(seed)
    for _ in range(count):
        lines = [(f"item{n}", Decimal(rng.randint(0, 40000)) / rng.choice([100, 200]),
                  rng.randint(1, 5)) for n in range(rng.randint(1, 4))]
        yield lines, rng.choice(TIERS), rng.choice(COUPONS + ["welcome10"])


def test_random_amounts_unchanged():
    for lines, tier, coupon in random_cases(2010, 1500):
        subtotal = sum((price * qty for _, price, qty in lines), Decimal("0"))
        want = reference(subtotal, tier, coupon)
        assert discounted_total(subtotal, tier, coupon) == want, (subtotal, tier, coupon)
        cart = Cart(tier)
        for sku, price, qty in lines:
            cart.add(sku, price, qty)
        assert cart.total(coupon) == want, (lines, tier, coupon)
        assert invoice_total(lines, tier, coupon) == want, (lines, tier, coupon)


def test_invoice_lines_keep_every_accepted_shape():
    """invoice_total took prices as anything Decimal() reads (strings from the order feed,
    ints) and lines as any iterable, a generator included: a refactor must not narrow that."""
    lines = [("a", "19.99", 3), ("b", 5, 2), ("c", Decimal("0.005"), 7)]
    subtotal = sum(Decimal(p) * q for _, p, q in lines)
    for tier in ("gold", "standard"):
        want = reference(subtotal, tier, "WELCOME10")
        assert invoice_total(lines, tier, "WELCOME10") == want, tier
        assert invoice_total(iter(lines), tier, "WELCOME10") == want, f"{tier}, a generator"
        assert invoice_total((line for line in lines), tier, "WELCOME10") == want


def test_codes_stay_case_sensitive():
    """Only the exact codes discount (before the refactor too): "Gold" and "welcome10" do not."""
    cart = Cart("Gold")
    cart.add("x", Decimal("80.00"))
    assert cart.total("welcome10") == Decimal("80.00")
    assert invoice_total([("x", Decimal("80.00"), 1)], "Gold", "welcome10") == Decimal("80.00")
    assert discounted_total(Decimal("30.00"), "SILVER", "freeship") == Decimal("30.00")
