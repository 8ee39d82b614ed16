"""Shopping cart.

A cart holds lines of (product, quantity). Prices are captured from the
product when the line is added, so a later catalog price change does not
silently change what the customer saw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .catalog import Product
from .pricing import apply_discount


@dataclass
class CartLine:
    """One line of a cart."""

    sku: str
    name: str
    unit_price_cents: int
    quantity: int

    @property
    def total_cents(self) -> int:
        return self.unit_price_cents * self.quantity


class Cart:
    """A customer's cart. Amounts are integer cents."""

    MAX_QUANTITY_PER_LINE = 99

    def __init__(self, discount_percent: int = 0) -> None:
        self._lines: dict[str, CartLine] = {}
        self.discount_percent = discount_percent

    def __iter__(self) -> Iterator[CartLine]:
        return iter(self._lines.values())

    def __len__(self) -> int:
        return len(self._lines)

    @property
    def is_empty(self) -> bool:
        return not self._lines

    def add(self, product: Product, quantity: int = 1) -> CartLine:
        """Add ``quantity`` units of ``product``; merges with an existing line."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        line = self._lines.get(product.sku)
        if line is None:
            line = CartLine(product.sku, product.name, product.price_cents, 0)
            self._lines[product.sku] = line
        if line.quantity + quantity > self.MAX_QUANTITY_PER_LINE:
            raise ValueError(f"at most {self.MAX_QUANTITY_PER_LINE} units per line")
        line.quantity += quantity
        return line

    def remove(self, sku: str, quantity: int | None = None) -> None:
        """Remove ``quantity`` units of ``sku`` (all of them when None)."""
        line = self._lines.get(sku)
        if line is None:
            return
        if quantity is None or quantity >= line.quantity:
            del self._lines[sku]
        else:
            line.quantity -= quantity

    def clear(self) -> None:
        self._lines.clear()

    def gross_cents(self) -> int:
        """Sum of line totals before any discount."""
        return sum(line.total_cents for line in self._lines.values())

    def subtotal_cents(self) -> int:
        """Line totals after the cart-level discount, before tax."""
        return apply_discount(self.gross_cents(), self.discount_percent)
