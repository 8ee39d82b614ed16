import pytest

from shop.cart import Cart
from shop.checkout import CheckoutError, CheckoutRequest, checkout
from shop.orders import OrderStatus


def test_checkout_charges_total_with_tax(catalog, payments, orders, provider):
    cart = Cart()
    cart.add(catalog.get("MUG-01"), 2)  # 2500
    order = checkout(cart, CheckoutRequest(7, "DE", "tok_visa"), catalog, payments, orders)
    assert order.status is OrderStatus.PAID
    assert order.tax_cents == 475
    assert provider.calls[0]["json"]["amount"] == 2975
    assert provider.calls[0]["timeout"] == 3.0
    assert catalog.get("MUG-01").stock == 8
    assert cart.is_empty


def test_checkout_out_of_stock_reserves_nothing(catalog, payments, orders, provider):
    cart = Cart()
    cart.add(catalog.get("MUG-01"), 1)
    cart.add(catalog.get("TEE-M"), 3)
    catalog.get("TEE-M").stock = 2
    with pytest.raises(CheckoutError):
        checkout(cart, CheckoutRequest(7, "DE", "tok"), catalog, payments, orders)
    assert catalog.get("MUG-01").stock == 10
    assert provider.calls == []


def test_checkout_declined_releases_stock(catalog, payments, orders, provider):
    provider.status_code = 402
    cart = Cart()
    cart.add(catalog.get("TEE-M"), 2)
    with pytest.raises(CheckoutError):
        checkout(cart, CheckoutRequest(7, "US-NY", "tok"), catalog, payments, orders)
    assert catalog.get("TEE-M").stock == 3
    assert orders.for_user(7)[0].status is OrderStatus.FAILED


def test_checkout_empty_cart(catalog, payments, orders):
    with pytest.raises(CheckoutError):
        checkout(Cart(), CheckoutRequest(7, "DE", "tok"), catalog, payments, orders)
