import pytest

from shop.catalog import OutOfStock, Product, UnknownProduct, is_in_stock


def test_is_in_stock_boundaries():
    product = Product("X", "X", price_cents=100, stock=3)
    assert is_in_stock(product, 1)
    assert is_in_stock(product, 3)
    assert not is_in_stock(product, 4)


def test_inactive_product_not_in_stock():
    assert not is_in_stock(Product("X", "X", price_cents=100, stock=3, active=False), 1)


def test_reserve_and_release(catalog):
    catalog.reserve("TEE-M", 3)
    assert catalog.get("TEE-M").stock == 0
    with pytest.raises(OutOfStock):
        catalog.reserve("TEE-M", 1)
    catalog.release("TEE-M", 2)
    assert catalog.get("TEE-M").stock == 2


def test_unknown_product(catalog):
    with pytest.raises(UnknownProduct):
        catalog.get("NOPE")


def test_search_matches_name_and_tags(catalog):
    assert [p.sku for p in catalog.search("mug")] == ["MUG-01"]
    assert [p.sku for p in catalog.search("APPAREL")] == ["TEE-M"]
