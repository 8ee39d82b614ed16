"""Users, password hashing and role checks.

Passwords are hashed with PBKDF2-HMAC-SHA256 and a per-user random salt
(CONTRIBUTING.md, "Passwords"). Hashes are compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

PBKDF2_ITERATIONS = 200_000
SALT_BYTES = 16

ROLE_CUSTOMER = "customer"
ROLE_SUPPORT = "support"
ROLE_ADMIN = "admin"

# A role implies every role listed after it.
_ROLE_IMPLIES: dict[str, set[str]] = {
    ROLE_ADMIN: {ROLE_ADMIN, ROLE_SUPPORT, ROLE_CUSTOMER},
    ROLE_SUPPORT: {ROLE_SUPPORT, ROLE_CUSTOMER},
    ROLE_CUSTOMER: {ROLE_CUSTOMER},
}


class PermissionDenied(Exception):
    """The current user may not perform the requested action."""


@dataclass
class User:
    user_id: int
    email: str
    password_hash: str = ""
    salt: str = ""
    roles: set[str] = field(default_factory=lambda: {ROLE_CUSTOMER})

    def has_role(self, role: str) -> bool:
        return any(role in _ROLE_IMPLIES.get(r, {r}) for r in self.roles)


def new_salt() -> str:
    """Return a fresh random salt as hex."""
    return secrets.token_hex(SALT_BYTES)


def hash_password(password: str, salt: str) -> str:
    """Return the hex PBKDF2-HMAC-SHA256 digest of ``password`` with ``salt``."""
    digest = hashlib.pbkdf2_hmac(
        "sha256", password.encode("utf-8"), bytes.fromhex(salt), PBKDF2_ITERATIONS
    )
    return digest.hex()


def set_password(user: User, password: str) -> None:
    """Give ``user`` a new salt and store the hash of ``password``."""
    if len(password) < 8:
        raise ValueError("password must be at least 8 characters")
    user.salt = new_salt()
    user.password_hash = hash_password(password, user.salt)


def verify_password(user: User, password: str) -> bool:
    """Return True when ``password`` matches the stored hash."""
    if not user.password_hash or not user.salt:
        return False
    candidate = hash_password(password, user.salt)
    return hmac.compare_digest(candidate, user.password_hash)


def require_role(user: User | None, role: str) -> User:
    """Return ``user`` if it has ``role``; raise :class:`PermissionDenied` otherwise."""
    if user is None:
        raise PermissionDenied("authentication required")
    if not user.has_role(role):
        raise PermissionDenied(f"user {user.user_id} lacks role {role!r}")
    return user


def require_owner_or_role(user: User | None, owner_id: int, role: str) -> User:
    """Allow the resource owner, or anyone holding ``role``."""
    if user is not None and user.user_id == owner_id:
        return user
    return require_role(user, role)
