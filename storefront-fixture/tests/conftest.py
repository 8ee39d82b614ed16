"""Shared fixtures: a small catalog and a fake payment provider."""

from __future__ import annotations

import pytest

from shop.catalog import Catalog, Product
from shop.orders import OrderService
from shop.payments import PaymentsClient


class FakeResponse:
    def __init__(self, status_code: int, payload: dict) -> None:
        self.status_code = status_code
        self._payload = payload

    def json(self) -> dict:
        return self._payload


class FakeProvider:
    """Stands in for ``requests.post``; records every call."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.status_code = 200
        self._next_id = 0

    def __call__(self, url: str, **kwargs):
        self.calls.append({"url": url, **kwargs})
        self._next_id += 1
        kind = "ch" if url.endswith("/charges") else "re"
        amount = kwargs["json"]["amount"]
        return FakeResponse(self.status_code, {"id": f"{kind}_{self._next_id}", "amount": amount})


@pytest.fixture
def provider(monkeypatch) -> FakeProvider:
    fake = FakeProvider()
    monkeypatch.setattr("shop.payments.requests.post", fake)
    return fake


@pytest.fixture
def payments(provider) -> PaymentsClient:
    return PaymentsClient(api_key="test-key", base_url="https://pay.test/v1", timeout=3.0)


@pytest.fixture
def orders(payments) -> OrderService:
    return OrderService(payments)


@pytest.fixture
def catalog() -> Catalog:
    return Catalog(
        [
            Product("MUG-01", "Ceramic mug", price_cents=1250, stock=10, tags=["kitchen"]),
            Product("TEE-M", "T-shirt (M)", price_cents=1999, stock=3, tags=["apparel"]),
            Product("BAG-XL", "Tote bag", price_cents=899, stock=0),
        ]
    )
