"""HTTP-style request handlers.

Each handler receives a :class:`Request` and returns a :class:`Response`.
Every handler checks authorization as its first statement, before it reads
or changes anything (CONTRIBUTING.md, "Handlers").
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from .auth import ROLE_ADMIN, ROLE_CUSTOMER, ROLE_SUPPORT, PermissionDenied, User
from .auth import require_owner_or_role, require_role
from .catalog import Catalog, UnknownProduct
from .money import format_cents
from .orders import OrderNotFound, OrderService, RefundNotAllowed
from .pagination import clamp_size
from .payments import PaymentError
from .repository import Repository

log = logging.getLogger(__name__)


@dataclass
class App:
    """Services shared by all handlers."""

    catalog: Catalog
    orders: OrderService
    repo: Repository


@dataclass
class Request:
    app: App
    user: User | None
    params: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)


@dataclass
class Response:
    status: int
    body: dict[str, Any]

    @classmethod
    def error(cls, status: int, message: str) -> "Response":
        return cls(status, {"error": message})


def _order_json(order) -> dict[str, Any]:
    return {
        "order_id": order.order_id,
        "status": order.status.value,
        "total": format_cents(order.total_cents),
        "refunded": format_cents(order.refunded_cents),
    }


def get_order(request: Request, order_id: str) -> Response:
    """Show one order to its owner or to support staff."""
    require_role(request.user, ROLE_CUSTOMER)
    try:
        order = request.app.orders.get(order_id)
    except OrderNotFound:
        return Response.error(404, "no such order")
    require_owner_or_role(request.user, order.user_id, ROLE_SUPPORT)
    return Response(200, _order_json(order))


def list_orders(request: Request) -> Response:
    """List the current user's orders, one 1-based page at a time."""
    user = require_role(request.user, ROLE_CUSTOMER)
    page = int(request.params.get("page", "1"))
    size = clamp_size(int(request.params["size"]) if "size" in request.params else None)
    rows = request.app.repo.list_orders_page(user.user_id, page, size)
    total = request.app.repo.count_orders(user.user_id)
    return Response(
        200,
        {
            "orders": [{"order_id": r.order_id, "status": r.status} for r in rows],
            "page": page,
            "total": total,
        },
    )


def refund_order(request: Request, order_id: str) -> Response:
    """Refund an order in full or in part (support staff only)."""
    require_role(request.user, ROLE_SUPPORT)
    amount = request.body.get("amount_cents")
    try:
        order = request.app.orders.refund(order_id, int(amount) if amount is not None else None)
    except OrderNotFound:
        return Response.error(404, "no such order")
    except RefundNotAllowed as exc:
        return Response.error(409, str(exc))
    except PaymentError:
        return Response.error(502, "the payment provider rejected the refund")
    return Response(200, _order_json(order))


def delete_product(request: Request, product_id: str) -> Response:
    """Remove a product from the catalog (admins only)."""
    require_role(request.user, ROLE_ADMIN)
    try:
        product = request.app.catalog.remove(product_id)
    except UnknownProduct:
        return Response.error(404, "no such product")
    log.info("product %s deleted", product.sku)
    return Response(200, {"deleted": product.sku})


def update_stock(request: Request, product_id: str) -> Response:
    """Set a product's stock level (admins only)."""
    require_role(request.user, ROLE_ADMIN)
    try:
        product = request.app.catalog.get(product_id)
    except UnknownProduct:
        return Response.error(404, "no such product")
    stock = int(request.body["stock"])
    if stock < 0:
        return Response.error(400, "stock must not be negative")
    product.stock = stock
    return Response(200, {"sku": product.sku, "stock": product.stock})


def dispatch(handler, request: Request, *args: Any) -> Response:
    """Call ``handler`` and turn authorization failures into HTTP errors."""
    try:
        return handler(request, *args)
    except PermissionDenied as exc:
        status = 401 if request.user is None else 403
        log.info("denied %s: %s", handler.__name__, exc)
        return Response.error(status, "not allowed")
