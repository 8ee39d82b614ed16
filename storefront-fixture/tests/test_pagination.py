import pytest

from shop.pagination import MAX_PAGE_SIZE, clamp_size, page_offset, paginate


def test_page_offset_is_one_based():
    assert page_offset(1, 20) == 0
    assert page_offset(2, 20) == 20
    assert page_offset(3, 10) == 20


@pytest.mark.parametrize("page, size", [(0, 10), (-1, 10), (1, 0)])
def test_page_offset_rejects_bad_input(page, size):
    with pytest.raises(ValueError):
        page_offset(page, size)


def test_paginate():
    items = list(range(1, 26))
    first = paginate(items, 1, 10)
    assert first.items == list(range(1, 11))
    assert first.pages == 3 and first.has_next and not first.has_previous
    last = paginate(items, 3, 10)
    assert last.items == [21, 22, 23, 24, 25]
    assert not last.has_next and last.has_previous


def test_paginate_empty():
    page = paginate([], 1, 10)
    assert page.items == [] and page.pages == 1


def test_clamp_size():
    assert clamp_size(None) == 20
    assert clamp_size(0) == 1
    assert clamp_size(10_000) == MAX_PAGE_SIZE
