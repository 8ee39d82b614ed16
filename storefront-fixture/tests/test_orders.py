import logging

import pytest
import requests

from shop.orders import OrderStatus, RefundNotAllowed
from shop.payments import PaymentError


def _paid_order(orders):
    order = orders.create(user_id=1, lines=[("MUG-01", 2, 1250)], subtotal_cents=2500, tax_cents=200)
    orders.mark_paid(order.order_id, "ch_1")
    return order


def test_full_refund(orders, provider):
    order = _paid_order(orders)
    orders.refund(order.order_id)
    assert order.status is OrderStatus.REFUNDED
    assert order.refunded_cents == 2700
    call = provider.calls[0]
    assert call["url"].endswith("/refunds")
    assert call["json"] == {"charge": "ch_1", "amount": 2700}
    assert call["timeout"] == 3.0


def test_partial_refunds(orders, provider):
    order = _paid_order(orders)
    orders.refund(order.order_id, 700)
    assert order.status is OrderStatus.PAID
    orders.refund(order.order_id, 2000)
    assert order.status is OrderStatus.REFUNDED
    assert len(order.refund_ids) == 2


def test_over_refund_rejected(orders, provider):
    order = _paid_order(orders)
    with pytest.raises(RefundNotAllowed):
        orders.refund(order.order_id, 2701)
    assert provider.calls == []


def test_unpaid_order_cannot_be_refunded(orders):
    order = orders.create(user_id=1, lines=[], subtotal_cents=100, tax_cents=0)
    with pytest.raises(RefundNotAllowed):
        orders.refund(order.order_id)


def test_rejected_refund_is_raised_and_logged(orders, provider, caplog):
    provider.status_code = 500
    order = _paid_order(orders)
    with caplog.at_level(logging.ERROR, logger="shop.orders"):
        with pytest.raises(PaymentError):
            orders.refund(order.order_id)
    assert order.refunded_cents == 0
    assert order.status is OrderStatus.PAID
    assert "refund of 2700 cents failed" in caplog.text


def test_network_error_becomes_payment_error(orders, monkeypatch):
    def boom(*args, **kwargs):
        raise requests.ConnectionError("connection reset")

    monkeypatch.setattr("shop.payments.requests.post", boom)
    order = _paid_order(orders)
    with pytest.raises(PaymentError):
        orders.refund(order.order_id)
    assert order.refund_ids == []
