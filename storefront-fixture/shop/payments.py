"""Client for the payment provider's HTTP API.

Every request carries an explicit timeout (CONTRIBUTING.md, "External
calls"); a hung provider must never hang a checkout worker.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import requests

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 10.0  # seconds
DEFAULT_BASE_URL = "https://payments.internal.example.com/v1"


class PaymentError(Exception):
    """The provider declined the request or could not be reached."""


@dataclass(frozen=True)
class ChargeResult:
    charge_id: str
    amount_cents: int


class PaymentsClient:
    """Thin wrapper over the provider's ``/charges`` and ``/refunds`` endpoints."""

    def __init__(
        self,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def _headers(self, idempotency_key: str) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.api_key}",
            "Idempotency-Key": idempotency_key,
        }

    def charge(self, order_id: str, amount_cents: int, token: str) -> ChargeResult:
        """Charge ``amount_cents`` to the card behind ``token``."""
        try:
            response = requests.post(
                f"{self.base_url}/charges",
                json={"amount": amount_cents, "source": token, "reference": order_id},
                headers=self._headers(f"charge-{order_id}"),
                timeout=self.timeout,
            )
        except requests.RequestException as exc:
            raise PaymentError(f"charge for {order_id} failed: {exc}") from exc
        if response.status_code != 200:
            raise PaymentError(f"charge for {order_id} declined: HTTP {response.status_code}")
        body = response.json()
        return ChargeResult(charge_id=body["id"], amount_cents=body["amount"])

    def refund(self, charge_id: str, amount_cents: int) -> str:
        """Refund ``amount_cents`` of ``charge_id``; returns the refund id."""
        try:
            response = requests.post(
                f"{self.base_url}/refunds",
                json={"charge": charge_id, "amount": amount_cents},
                headers=self._headers(f"refund-{charge_id}-{amount_cents}"),
                timeout=self.timeout,
            )
        except requests.RequestException as exc:
            raise PaymentError(f"refund of {charge_id} failed: {exc}") from exc
        if response.status_code != 200:
            log.warning("refund of %s rejected: HTTP %s", charge_id, response.status_code)
            raise PaymentError(f"refund of {charge_id} rejected: HTTP {response.status_code}")
        return response.json()["id"]
