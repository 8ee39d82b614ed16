import pytest

from shop.cart import Cart


def test_add_merges_lines(catalog):
    cart = Cart()
    mug = catalog.get("MUG-01")
    cart.add(mug, 2)
    cart.add(mug)
    assert len(cart) == 1
    assert next(iter(cart)).quantity == 3
    assert cart.subtotal_cents() == 3750


def test_price_captured_when_added(catalog):
    cart = Cart()
    mug = catalog.get("MUG-01")
    cart.add(mug)
    mug.price_cents = 9999
    assert cart.subtotal_cents() == 1250


def test_remove_partial_and_all(catalog):
    cart = Cart()
    cart.add(catalog.get("MUG-01"), 3)
    cart.add(catalog.get("TEE-M"), 1)
    cart.remove("MUG-01", 1)
    assert cart.gross_cents() == 2 * 1250 + 1999
    cart.remove("TEE-M")
    assert cart.gross_cents() == 2500
    cart.remove("NOPE")  # no-op


def test_discount_applies_to_subtotal(catalog):
    cart = Cart(discount_percent=20)
    cart.add(catalog.get("TEE-M"), 1)
    assert cart.subtotal_cents() == 1599  # 1999 - 399.8 -> 1999 - 400


def test_quantity_limits(catalog):
    cart = Cart()
    with pytest.raises(ValueError):
        cart.add(catalog.get("MUG-01"), 0)
    cart.add(catalog.get("MUG-01"), 99)
    with pytest.raises(ValueError):
        cart.add(catalog.get("MUG-01"), 1)
