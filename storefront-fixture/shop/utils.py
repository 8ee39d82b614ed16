"""Small helpers shared across the shop."""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Iterator, Sequence, TypeVar

T = TypeVar("T")

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def average(values: Sequence[float]) -> float:
    """Arithmetic mean of ``values``; 0.0 for an empty sequence.

    Used for review ratings, where "no ratings yet" must not crash a page.
    """
    if not values:
        return 0.0
    return sum(values) / len(values)


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Yield successive lists of at most ``size`` items."""
    if size < 1:
        raise ValueError("size must be positive")
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def slugify(text: str, max_length: int = 60) -> str:
    """Return a URL-safe slug: ``"Café Crème 2kg" -> "cafe-creme-2kg"``."""
    normalized = unicodedata.normalize("NFKD", text)
    ascii_text = normalized.encode("ascii", "ignore").decode("ascii").lower()
    slug = _NON_ALNUM.sub("-", ascii_text).strip("-")
    return slug[:max_length].rstrip("-")


def first(items: Iterable[T], default: T | None = None) -> T | None:
    """Return the first item of ``items`` or ``default`` when empty."""
    for item in items:
        return item
    return default
