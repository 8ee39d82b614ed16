"""Product catalog and stock bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator


class UnknownProduct(KeyError):
    """Raised when a SKU is not in the catalog."""


class OutOfStock(Exception):
    """Raised when a reservation asks for more units than are available."""

    def __init__(self, sku: str, requested: int, available: int) -> None:
        super().__init__(f"{sku}: requested {requested}, only {available} available")
        self.sku = sku
        self.requested = requested
        self.available = available


@dataclass
class Product:
    """A sellable item. ``price_cents`` is the unit price in integer cents."""

    sku: str
    name: str
    price_cents: int
    stock: int = 0
    active: bool = True
    tags: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.price_cents < 0:
            raise ValueError(f"{self.sku}: price must not be negative")
        if self.stock < 0:
            raise ValueError(f"{self.sku}: stock must not be negative")


def is_in_stock(product: Product, quantity: int) -> bool:
    """Return True when ``quantity`` units of ``product`` can be sold now."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    return product.active and product.stock >= quantity


class Catalog:
    """In-memory catalog keyed by SKU."""

    def __init__(self, products: Iterable[Product] = ()) -> None:
        self._products: dict[str, Product] = {}
        for product in products:
            self.add(product)

    def __len__(self) -> int:
        return len(self._products)

    def __iter__(self) -> Iterator[Product]:
        return iter(self._products.values())

    def __contains__(self, sku: object) -> bool:
        return sku in self._products

    def add(self, product: Product) -> None:
        """Add or replace a product."""
        self._products[product.sku] = product

    def get(self, sku: str) -> Product:
        """Return the product for ``sku`` or raise :class:`UnknownProduct`."""
        try:
            return self._products[sku]
        except KeyError:
            raise UnknownProduct(sku) from None

    def remove(self, sku: str) -> Product:
        """Remove and return the product for ``sku``."""
        product = self.get(sku)
        del self._products[sku]
        return product

    def search(self, text: str) -> list[Product]:
        """Case-insensitive substring search over name and tags."""
        needle = text.lower()
        return [
            p
            for p in self._products.values()
            if needle in p.name.lower() or any(needle in t.lower() for t in p.tags)
        ]

    def reserve(self, sku: str, quantity: int) -> Product:
        """Take ``quantity`` units of ``sku`` out of stock.

        Raises :class:`OutOfStock` when not enough units are available; stock
        is left untouched in that case.
        """
        product = self.get(sku)
        if not is_in_stock(product, quantity):
            raise OutOfStock(sku, quantity, product.stock)
        product.stock -= quantity
        return product

    def release(self, sku: str, quantity: int) -> None:
        """Put ``quantity`` units of ``sku`` back into stock (e.g. after a refund)."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self.get(sku).stock += quantity
