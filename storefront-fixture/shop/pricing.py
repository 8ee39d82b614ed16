"""Tax and discount rules.

Rates are Decimal and every result is rounded to whole cents exactly once,
at the end of the calculation (half-up), so totals are reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - import for type hints only
    from .cart import Cart

TAX_RATES: dict[str, Decimal] = {
    "US-CA": Decimal("0.0725"),
    "US-NY": Decimal("0.04"),
    "US-OR": Decimal("0"),
    "DE": Decimal("0.19"),
    "FR": Decimal("0.20"),
    "GB": Decimal("0.20"),
}

MAX_DISCOUNT_PERCENT = 90


class UnknownRegion(KeyError):
    """Raised when no tax rate is configured for a region."""


@dataclass(frozen=True)
class OrderTotal:
    """Breakdown of an order's amounts, all in integer cents."""

    subtotal_cents: int
    tax_cents: int

    @property
    def total_cents(self) -> int:
        return self.subtotal_cents + self.tax_cents


def _round_half_up(value: Decimal) -> int:
    return int(value.quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def tax_rate(region: str) -> Decimal:
    """Return the configured tax rate for ``region``."""
    try:
        return TAX_RATES[region]
    except KeyError:
        raise UnknownRegion(region) from None


def compute_tax(amount_cents: int, region: str) -> int:
    """Return the tax due on ``amount_cents`` in ``region``, in whole cents."""
    if amount_cents < 0:
        raise ValueError("amount must not be negative")
    return _round_half_up(Decimal(amount_cents) * tax_rate(region))


def apply_discount(amount_cents: int, percent: int) -> int:
    """Return ``amount_cents`` reduced by ``percent`` percent, in whole cents.

    ``percent`` is an integer between 0 and MAX_DISCOUNT_PERCENT.
    """
    if not 0 <= percent <= MAX_DISCOUNT_PERCENT:
        raise ValueError(f"discount must be between 0 and {MAX_DISCOUNT_PERCENT}%")
    discount = Decimal(amount_cents) * Decimal(percent) / Decimal(100)
    return amount_cents - _round_half_up(discount)


def order_total(cart: "Cart", region: str) -> OrderTotal:
    """Compute subtotal and tax for ``cart`` shipped to ``region``."""
    subtotal = cart.subtotal_cents()
    tax = compute_tax(subtotal, region)
    return OrderTotal(subtotal_cents=subtotal, tax_cents=tax)
