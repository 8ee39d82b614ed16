"""Persistence over ``sqlite3``.

Every query uses bound parameters (``?`` placeholders); SQL text is never
built from user input (CONTRIBUTING.md, "SQL").
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from .auth import User
from .pagination import page_offset

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    user_id       INTEGER PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    salt          TEXT NOT NULL,
    roles         TEXT NOT NULL DEFAULT 'customer'
);
CREATE TABLE IF NOT EXISTS orders (
    order_id    TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(user_id),
    total_cents INTEGER NOT NULL,
    status      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class OrderRow:
    order_id: str
    user_id: int
    total_cents: int
    status: str
    created_at: str


def connect(path: str = ":memory:") -> sqlite3.Connection:
    """Open a connection and make sure the schema exists."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    conn.executescript(SCHEMA)
    return conn


class Repository:
    """Data access for users and orders."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def add_user(self, user: User) -> User:
        cursor = self.conn.cursor()
        cursor.execute(
            "INSERT INTO users (email, password_hash, salt, roles) VALUES (?, ?, ?, ?)",
            (user.email.lower(), user.password_hash, user.salt, ",".join(sorted(user.roles))),
        )
        self.conn.commit()
        user.user_id = int(cursor.lastrowid or 0)
        return user

    def find_user_by_email(self, email: str) -> User | None:
        """Return the user with ``email`` (case-insensitive) or None."""
        cursor = self.conn.cursor()
        cursor.execute(
            "SELECT user_id, email, password_hash, salt, roles FROM users WHERE email = ?",
            (email.lower(),),
        )
        row = cursor.fetchone()
        if row is None:
            return None
        return User(
            user_id=row["user_id"],
            email=row["email"],
            password_hash=row["password_hash"],
            salt=row["salt"],
            roles=set(row["roles"].split(",")),
        )

    def add_order(self, row: OrderRow) -> None:
        self.conn.execute(
            "INSERT INTO orders (order_id, user_id, total_cents, status, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (row.order_id, row.user_id, row.total_cents, row.status, row.created_at),
        )
        self.conn.commit()

    def list_orders(self, user_id: int, limit: int, offset: int) -> list[OrderRow]:
        """Return ``limit`` orders of ``user_id``, newest first, skipping ``offset``."""
        cursor = self.conn.execute(
            "SELECT order_id, user_id, total_cents, status, created_at FROM orders "
            "WHERE user_id = ? ORDER BY created_at DESC, order_id DESC LIMIT ? OFFSET ?",
            (user_id, limit, offset),
        )
        return [OrderRow(**dict(r)) for r in cursor.fetchall()]

    def list_orders_page(self, user_id: int, page: int, size: int) -> list[OrderRow]:
        """Return 1-based ``page`` of ``user_id``'s orders."""
        return self.list_orders(user_id, limit=size, offset=page_offset(page, size))

    def count_orders(self, user_id: int) -> int:
        row = self.conn.execute(
            "SELECT COUNT(*) FROM orders WHERE user_id = ?", (user_id,)
        ).fetchone()
        return int(row[0])
