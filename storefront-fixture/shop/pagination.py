"""Pagination helpers. Pages are 1-based (CONTRIBUTING.md, "Pagination")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Sequence, TypeVar

T = TypeVar("T")

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    page: int
    size: int
    total: int

    @property
    def pages(self) -> int:
        """Number of pages; at least 1 so an empty result still has page 1."""
        return max(1, -(-self.total // self.size))

    @property
    def has_next(self) -> bool:
        return self.page < self.pages

    @property
    def has_previous(self) -> bool:
        return self.page > 1


def clamp_size(size: int | None) -> int:
    """Return a page size within ``1..MAX_PAGE_SIZE`` (default when None)."""
    if size is None:
        return DEFAULT_PAGE_SIZE
    return max(1, min(size, MAX_PAGE_SIZE))


def page_offset(page: int, size: int) -> int:
    """Return the row offset of 1-based ``page`` with ``size`` rows per page."""
    if page < 1:
        raise ValueError("page numbers start at 1")
    if size < 1:
        raise ValueError("page size must be positive")
    return (page - 1) * size


def paginate(items: Sequence[T], page: int, size: int) -> Page[T]:
    """Return page ``page`` (1-based) of ``items``."""
    start = page_offset(page, size)
    return Page(items=list(items[start : start + size]), page=page, size=size, total=len(items))
