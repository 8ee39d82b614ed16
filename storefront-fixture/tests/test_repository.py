import pytest

from shop.auth import ROLE_ADMIN, User, set_password
from shop.repository import OrderRow, Repository, connect


@pytest.fixture
def repo():
    conn = connect(":memory:")
    yield Repository(conn)
    conn.close()


def _user(repo, email, roles=None):
    user = User(0, email, roles=roles or {"customer"})
    set_password(user, "password123")
    return repo.add_user(user)


def test_find_user_by_email_is_case_insensitive(repo):
    saved = _user(repo, "Ada@Example.com", {ROLE_ADMIN, "customer"})
    found = repo.find_user_by_email("ADA@example.COM")
    assert found is not None
    assert found.user_id == saved.user_id
    assert found.roles == {ROLE_ADMIN, "customer"}


def test_find_user_by_email_treats_input_as_data(repo):
    _user(repo, "ada@example.com")
    assert repo.find_user_by_email("' OR '1'='1") is None
    assert repo.find_user_by_email("o'brien@example.com") is None


def test_list_orders_pages(repo):
    user = _user(repo, "ada@example.com")
    other = _user(repo, "bob@example.com")
    for i in range(1, 6):
        repo.add_order(OrderRow(f"ord_{i}", user.user_id, 100 * i, "paid", f"2024-01-0{i}"))
    repo.add_order(OrderRow("ord_x", other.user_id, 1, "paid", "2024-02-01"))

    assert repo.count_orders(user.user_id) == 5
    first = repo.list_orders_page(user.user_id, page=1, size=2)
    assert [r.order_id for r in first] == ["ord_5", "ord_4"]
    last = repo.list_orders_page(user.user_id, page=3, size=2)
    assert [r.order_id for r in last] == ["ord_1"]
    assert [r.order_id for r in repo.list_orders(user.user_id, limit=10, offset=4)] == ["ord_1"]
