from decimal import Decimal

import pytest

from shop.cart import Cart
from shop.catalog import Product
from shop.pricing import TAX_RATES, UnknownRegion, apply_discount, compute_tax, order_total


def test_tax_rates_are_decimal():
    assert all(isinstance(rate, Decimal) for rate in TAX_RATES.values())


def test_compute_tax_rounds_half_up():
    # 1000 * 0.0725 = 72.5 -> 73
    assert compute_tax(1000, "US-CA") == 73
    assert compute_tax(1999, "DE") == 380  # 379.81
    assert compute_tax(5000, "US-OR") == 0


def test_compute_tax_returns_int():
    assert isinstance(compute_tax(333, "FR"), int)


def test_compute_tax_unknown_region():
    with pytest.raises(UnknownRegion):
        compute_tax(1000, "XX")


def test_compute_tax_rejects_negative():
    with pytest.raises(ValueError):
        compute_tax(-1, "DE")


def test_apply_discount():
    assert apply_discount(1000, 0) == 1000
    assert apply_discount(1000, 15) == 850
    assert apply_discount(999, 10) == 899  # discount 99.9 -> 100
    assert isinstance(apply_discount(1234, 33), int)


@pytest.mark.parametrize("percent", [-1, 91, 100])
def test_apply_discount_bounds(percent):
    with pytest.raises(ValueError):
        apply_discount(1000, percent)


def test_order_total():
    cart = Cart(discount_percent=10)
    cart.add(Product("A", "A", price_cents=1000, stock=5), 2)
    total = order_total(cart, "GB")
    assert total.subtotal_cents == 1800
    assert total.tax_cents == 360
    assert total.total_cents == 2160
