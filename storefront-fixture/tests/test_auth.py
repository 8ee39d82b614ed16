import pytest

from shop.auth import (
    PBKDF2_ITERATIONS,
    ROLE_ADMIN,
    ROLE_CUSTOMER,
    ROLE_SUPPORT,
    PermissionDenied,
    User,
    hash_password,
    require_owner_or_role,
    require_role,
    set_password,
    verify_password,
)


def test_hash_is_pbkdf2_sha256():
    import hashlib

    salt = "00" * 16
    expected = hashlib.pbkdf2_hmac("sha256", b"hunter22", bytes(16), PBKDF2_ITERATIONS).hex()
    assert hash_password("hunter22", salt) == expected


def test_set_and_verify_password():
    user = User(1, "a@example.com")
    set_password(user, "correct horse")
    assert verify_password(user, "correct horse")
    assert not verify_password(user, "wrong horse")


def test_salts_differ_per_user():
    a, b = User(1, "a@example.com"), User(2, "b@example.com")
    set_password(a, "same password")
    set_password(b, "same password")
    assert a.password_hash != b.password_hash


def test_short_password_rejected():
    with pytest.raises(ValueError):
        set_password(User(1, "a@example.com"), "short")


def test_user_without_password_never_verifies():
    assert not verify_password(User(1, "a@example.com"), "")


def test_require_role():
    admin = User(1, "root@example.com", roles={ROLE_ADMIN})
    customer = User(2, "c@example.com")
    assert require_role(admin, ROLE_SUPPORT) is admin
    assert require_role(customer, ROLE_CUSTOMER) is customer
    with pytest.raises(PermissionDenied):
        require_role(customer, ROLE_SUPPORT)
    with pytest.raises(PermissionDenied):
        require_role(None, ROLE_CUSTOMER)


def test_require_owner_or_role():
    owner = User(2, "c@example.com")
    other = User(3, "d@example.com")
    assert require_owner_or_role(owner, 2, ROLE_SUPPORT) is owner
    with pytest.raises(PermissionDenied):
        require_owner_or_role(other, 2, ROLE_SUPPORT)
