import pytest

from shop.auth import ROLE_ADMIN, ROLE_SUPPORT, User
from shop.handlers import (
    App,
    Request,
    delete_product,
    dispatch,
    get_order,
    list_orders,
    refund_order,
    update_stock,
)
from shop.repository import OrderRow, Repository, connect


@pytest.fixture
def app(catalog, orders):
    conn = connect(":memory:")
    yield App(catalog=catalog, orders=orders, repo=Repository(conn))
    conn.close()


CUSTOMER = User(1, "c@example.com")
STRANGER = User(2, "s@example.com")
SUPPORT = User(3, "help@example.com", roles={ROLE_SUPPORT})
ADMIN = User(4, "root@example.com", roles={ROLE_ADMIN})


def _paid(app):
    order = app.orders.create(user_id=CUSTOMER.user_id, lines=[], subtotal_cents=1000, tax_cents=0)
    app.orders.mark_paid(order.order_id, "ch_9")
    return order


def test_get_order_owner_and_support(app):
    order = _paid(app)
    assert dispatch(get_order, Request(app, CUSTOMER), order.order_id).status == 200
    assert dispatch(get_order, Request(app, SUPPORT), order.order_id).status == 200
    assert dispatch(get_order, Request(app, STRANGER), order.order_id).status == 403
    assert dispatch(get_order, Request(app, None), order.order_id).status == 401


def test_refund_requires_support(app, provider):
    order = _paid(app)
    denied = dispatch(refund_order, Request(app, CUSTOMER), order.order_id)
    assert denied.status == 403
    assert provider.calls == []
    ok = dispatch(refund_order, Request(app, SUPPORT, body={"amount_cents": 400}), order.order_id)
    assert ok.status == 200
    assert ok.body["refunded"] == "$4.00"


def test_refund_provider_failure_is_reported(app, provider):
    provider.status_code = 503
    order = _paid(app)
    response = dispatch(refund_order, Request(app, SUPPORT), order.order_id)
    assert response.status == 502


def test_delete_product_requires_admin(app):
    assert dispatch(delete_product, Request(app, SUPPORT), "MUG-01").status == 403
    assert "MUG-01" in app.catalog
    assert dispatch(delete_product, Request(app, ADMIN), "MUG-01").status == 200
    assert "MUG-01" not in app.catalog
    assert dispatch(delete_product, Request(app, ADMIN), "MUG-01").status == 404


def test_update_stock_requires_admin(app):
    assert dispatch(update_stock, Request(app, CUSTOMER, body={"stock": 5}), "MUG-01").status == 403
    response = dispatch(update_stock, Request(app, ADMIN, body={"stock": 5}), "MUG-01")
    assert response.body == {"sku": "MUG-01", "stock": 5}


def test_list_orders_pages(app):
    app.repo.conn.execute(
        "INSERT INTO users (user_id, email, password_hash, salt) VALUES (1, 'c@example.com', '', '')"
    )
    for i in range(1, 4):
        app.repo.add_order(OrderRow(f"ord_{i}", 1, 100, "paid", f"2024-01-0{i}"))
    response = dispatch(list_orders, Request(app, CUSTOMER, params={"page": "2", "size": "2"}))
    assert response.status == 200
    assert [o["order_id"] for o in response.body["orders"]] == ["ord_1"]
    assert response.body["total"] == 3
    assert dispatch(list_orders, Request(app, None)).status == 401
