"""Stock levels per SKU."""


class Inventory:
    def __init__(self) -> None:
        self._stock: dict[str, int] = {}

    def add(self, sku: str, quantity: int) -> None:
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self._stock[sku] = self._stock.get(sku, 0) + quantity

    def remove(self, sku: str, quantity: int) -> None:
        have = self._stock.get(sku, 0)
        if quantity > have:
            raise ValueError(f"only {have} of {sku} in stock")
        self._stock[sku] = have - quantity

    def count(self, sku: str) -> int:
        return self._stock.get(sku, 0)
