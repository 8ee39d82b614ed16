"""Money helpers.

All amounts in the shop are integer cents. Conversions from user input go
through :class:`decimal.Decimal` so that no binary floating point ever touches
a price (see CONTRIBUTING.md, "Money").
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENTS_PER_UNIT = 100
CURRENCY_SYMBOL = "$"


class InvalidAmount(ValueError):
    """Raised when a user-supplied amount cannot be parsed."""


def to_decimal(amount_cents: int) -> Decimal:
    """Return ``amount_cents`` as a Decimal number of currency units."""
    return Decimal(amount_cents) / CENTS_PER_UNIT


def format_cents(amount_cents: int, symbol: str = CURRENCY_SYMBOL) -> str:
    """Format integer cents for display, e.g. ``123456 -> "$1,234.56"``.

    Negative amounts (refunds, credits) are shown with a leading minus sign.
    """
    sign = "-" if amount_cents < 0 else ""
    units, cents = divmod(abs(amount_cents), CENTS_PER_UNIT)
    return f"{sign}{symbol}{units:,}.{cents:02d}"


def parse_amount(text: str) -> int:
    """Parse a decimal string such as ``"12.50"`` or ``"$1,000"`` into cents.

    Fractions of a cent are rounded half-up. Raises :class:`InvalidAmount`
    for anything that is not a finite number.
    """
    cleaned = text.strip().replace(CURRENCY_SYMBOL, "").replace(",", "")
    if not cleaned:
        raise InvalidAmount("empty amount")
    try:
        value = Decimal(cleaned)
    except InvalidOperation as exc:
        raise InvalidAmount(f"not a number: {text!r}") from exc
    if not value.is_finite():
        raise InvalidAmount(f"not a finite amount: {text!r}")
    cents = (value * CENTS_PER_UNIT).quantize(Decimal("1"), rounding=ROUND_HALF_UP)
    return int(cents)


def round_cents(value: Decimal) -> int:
    """Round a Decimal number of cents to an integer, half-up."""
    return int(value.quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def split_evenly(amount_cents: int, parts: int) -> list[int]:
    """Split ``amount_cents`` into ``parts`` integer shares that sum exactly.

    The first ``remainder`` shares get one extra cent, so
    ``split_evenly(100, 3) == [34, 33, 33]``.
    """
    if parts <= 0:
        raise ValueError("parts must be positive")
    base, remainder = divmod(amount_cents, parts)
    return [base + 1 if i < remainder else base for i in range(parts)]
