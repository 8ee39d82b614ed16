"""Checkout: turn a cart into a paid order.

The flow is: validate the cart, reserve stock, compute the final amount
including tax, charge the customer and record the order. If the charge
fails, the reserved stock is released again before the error propagates.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .cart import Cart
from .catalog import Catalog, OutOfStock
from .orders import Order, OrderService
from .payments import PaymentError, PaymentsClient
from .pricing import compute_tax

log = logging.getLogger(__name__)


class CheckoutError(Exception):
    """Checkout could not be completed; the message is safe to show the user."""


@dataclass(frozen=True)
class CheckoutRequest:
    user_id: int
    region: str
    payment_token: str


def _reserve_all(catalog: Catalog, cart: Cart) -> list[tuple[str, int]]:
    """Reserve stock for every cart line, rolling back on the first shortage."""
    reserved: list[tuple[str, int]] = []
    try:
        for line in cart:
            catalog.reserve(line.sku, line.quantity)
            reserved.append((line.sku, line.quantity))
    except OutOfStock:
        _release_all(catalog, reserved)
        raise
    return reserved


def _release_all(catalog: Catalog, reserved: list[tuple[str, int]]) -> None:
    for sku, quantity in reserved:
        catalog.release(sku, quantity)


def checkout(
    cart: Cart,
    request: CheckoutRequest,
    catalog: Catalog,
    payments: PaymentsClient,
    orders: OrderService,
) -> Order:
    """Charge the customer for ``cart`` and return the recorded order."""
    if cart.is_empty:
        raise CheckoutError("your cart is empty")

    try:
        reserved = _reserve_all(catalog, cart)
    except OutOfStock as exc:
        raise CheckoutError(f"not enough stock for {exc.sku}") from exc

    region = request.region
    total = cart.subtotal_cents()
    tax = compute_tax(total, region)
    amount_due = total + tax

    order = orders.create(
        user_id=request.user_id,
        lines=[(line.sku, line.quantity, line.unit_price_cents) for line in cart],
        subtotal_cents=total,
        tax_cents=tax,
    )
    try:
        charge = payments.charge(order.order_id, amount_due, request.payment_token)
    except PaymentError as exc:
        log.error("charge failed for order %s: %s", order.order_id, exc)
        _release_all(catalog, reserved)
        orders.mark_failed(order.order_id)
        raise CheckoutError("payment was declined") from exc

    orders.mark_paid(order.order_id, charge.charge_id)
    cart.clear()
    return order
