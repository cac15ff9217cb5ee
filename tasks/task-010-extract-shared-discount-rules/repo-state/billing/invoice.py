"""Invoices for B2B orders (priced server-side, same rules as the web cart)."""

from decimal import ROUND_HALF_UP, Decimal

TIER_RATES = {"gold": Decimal("0.10"), "silver": Decimal("0.05")}
MAX_RATE = Decimal("0.15")


def invoice_total(lines, tier: str = "standard", coupon: str | None = None) -> Decimal:
    """lines: iterable of (description, unit_price, quantity)."""
    subtotal = Decimal("0")
    for _, unit_price, quantity in lines:
        subtotal += Decimal(unit_price) * quantity
    rate = TIER_RATES.get(tier, Decimal("0"))
    if coupon == "WELCOME10":
        rate = rate + Decimal("0.10")
    if coupon == "FREESHIP" and subtotal < 50:
        subtotal = subtotal - Decimal("4.99")
    if rate > MAX_RATE:
        rate = MAX_RATE
    amount = max(subtotal - subtotal * rate, Decimal("0"))
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
