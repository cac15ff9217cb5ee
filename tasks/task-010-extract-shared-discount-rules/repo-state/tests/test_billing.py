from decimal import Decimal

from billing.cart import Cart
from billing.invoice import invoice_total


def test_cart_standard():
    cart = Cart()
    cart.add("pen", Decimal("2.50"), 4)
    assert cart.total() == Decimal("10.00")


def test_cart_gold_with_coupon_is_capped():
    cart = Cart("gold")
    cart.add("desk", Decimal("200.00"))
    assert cart.total("WELCOME10") == Decimal("170.00")


def test_invoice_silver():
    assert invoice_total([("chair", Decimal("80.00"), 2)], "silver") == Decimal("152.00")
