"""Orders and refunds.

Orders are kept in memory by :class:`OrderService`; the repository layer
persists them separately. A refund is only recorded after the payment
provider has confirmed it: a failed refund is logged and re-raised so that
the caller (and the customer) learn about it.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum

from .payments import PaymentError, PaymentsClient

log = logging.getLogger(__name__)


class OrderStatus(str, Enum):
    PENDING = "pending"
    PAID = "paid"
    FAILED = "failed"
    REFUNDED = "refunded"


class OrderNotFound(KeyError):
    """No order with the given id."""


class RefundNotAllowed(Exception):
    """The order is not in a state that can be refunded."""


@dataclass
class Order:
    """A placed order. Amounts are integer cents."""

    order_id: str
    user_id: int
    lines: list[tuple[str, int, int]]  # (sku, quantity, unit_price_cents)
    subtotal_cents: int
    tax_cents: int
    status: OrderStatus = OrderStatus.PENDING
    charge_id: str | None = None
    refund_ids: list[str] = field(default_factory=list)
    refunded_cents: int = 0
    created_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def total_cents(self) -> int:
        return self.subtotal_cents + self.tax_cents

    @property
    def refundable_cents(self) -> int:
        return self.total_cents - self.refunded_cents


class OrderService:
    """Creates orders, tracks their status and issues refunds."""

    def __init__(self, payments: PaymentsClient) -> None:
        self.payments = payments
        self._orders: dict[str, Order] = {}
        self._ids = itertools.count(1)

    def create(
        self,
        user_id: int,
        lines: list[tuple[str, int, int]],
        subtotal_cents: int,
        tax_cents: int,
    ) -> Order:
        order = Order(
            order_id=f"ord_{next(self._ids):06d}",
            user_id=user_id,
            lines=list(lines),
            subtotal_cents=subtotal_cents,
            tax_cents=tax_cents,
        )
        self._orders[order.order_id] = order
        return order

    def get(self, order_id: str) -> Order:
        try:
            return self._orders[order_id]
        except KeyError:
            raise OrderNotFound(order_id) from None

    def for_user(self, user_id: int) -> list[Order]:
        return [o for o in self._orders.values() if o.user_id == user_id]

    def mark_paid(self, order_id: str, charge_id: str) -> None:
        order = self.get(order_id)
        order.status = OrderStatus.PAID
        order.charge_id = charge_id

    def mark_failed(self, order_id: str) -> None:
        self.get(order_id).status = OrderStatus.FAILED

    def refund(self, order_id: str, amount_cents: int | None = None) -> Order:
        """Refund ``amount_cents`` (default: everything still refundable).

        Raises :class:`RefundNotAllowed` for unpaid orders or over-refunds and
        re-raises :class:`PaymentError` when the provider rejects the refund.
        """
        order = self.get(order_id)
        if order.status not in (OrderStatus.PAID, OrderStatus.REFUNDED) or order.charge_id is None:
            raise RefundNotAllowed(f"order {order_id} is {order.status.value}")
        amount = order.refundable_cents if amount_cents is None else amount_cents
        if amount <= 0 or amount > order.refundable_cents:
            raise RefundNotAllowed(f"cannot refund {amount} cents on order {order_id}")

        try:
            refund_id = self.payments.refund(order.charge_id, amount)
        except PaymentError:
            log.exception("refund of %s cents failed for order %s", amount, order_id)
            raise

        order.refund_ids.append(refund_id)
        order.refunded_cents += amount
        if order.refundable_cents == 0:
            order.status = OrderStatus.REFUNDED
        return order
