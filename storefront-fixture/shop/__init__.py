"""Quorum storefront: a small shop backend used as a review fixture.

The package is deliberately framework-free: handlers receive a plain
``Request`` object and return ``Response`` objects, persistence goes through
``sqlite3`` and the payment provider is reached over HTTP with ``requests``.
"""

from .money import format_cents, parse_amount
from .pricing import apply_discount, compute_tax, order_total
from .catalog import Catalog, Product
from .cart import Cart
from .checkout import checkout
from .orders import Order, OrderService
from .payments import PaymentError, PaymentsClient
from .auth import PermissionDenied, User, hash_password, require_role, verify_password

__all__ = [
    "Cart",
    "Catalog",
    "Order",
    "OrderService",
    "PaymentError",
    "PaymentsClient",
    "PermissionDenied",
    "Product",
    "User",
    "apply_discount",
    "checkout",
    "compute_tax",
    "format_cents",
    "hash_password",
    "order_total",
    "parse_amount",
    "require_role",
    "verify_password",
]

__version__ = "0.4.0"
