"""Shopping cart."""

from decimal import ROUND_HALF_UP, Decimal


class Cart:
    def __init__(self, tier: str = "standard") -> None:
        self.tier = tier
        self.lines: list[tuple[str, Decimal, int]] = []

    def add(self, sku: str, unit_price: Decimal, quantity: int = 1) -> None:
        self.lines.append((sku, Decimal(unit_price), quantity))

    def subtotal(self) -> Decimal:
        return sum((price * qty for _, price, qty in self.lines), Decimal("0"))

    def total(self, coupon: str | None = None) -> Decimal:
        subtotal = self.subtotal()
        rate = Decimal("0")
        if self.tier == "gold":
            rate = Decimal("0.10")
        elif self.tier == "silver":
            rate = Decimal("0.05")
        if coupon == "WELCOME10":
            rate += Decimal("0.10")
        elif coupon == "FREESHIP" and subtotal < Decimal("50"):
            subtotal -= Decimal("4.99")
        rate = min(rate, Decimal("0.15"))  # discounts never stack beyond 15 %
        amount = subtotal * (Decimal("1") - rate)
        if amount < 0:
            amount = Decimal("0")
        return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
