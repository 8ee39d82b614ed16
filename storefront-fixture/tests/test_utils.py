import pytest

from shop.utils import average, chunked, first, slugify


def test_average():
    assert average([4, 5]) == 4.5
    assert average([3.0]) == 3.0


def test_average_of_nothing_is_zero():
    assert average([]) == 0.0


def test_chunked():
    assert list(chunked(range(5), 2)) == [[0, 1], [2, 3], [4]]
    assert list(chunked([], 3)) == []
    with pytest.raises(ValueError):
        list(chunked([1], 0))


@pytest.mark.parametrize(
    "text, slug",
    [("Café Crème 2kg", "cafe-creme-2kg"), ("  Hello,  World! ", "hello-world"), ("---", "")],
)
def test_slugify(text, slug):
    assert slugify(text) == slug


def test_slugify_max_length():
    assert slugify("a b " * 40, max_length=7) == "a-b-a-b"


def test_first():
    assert first([3, 4]) == 3
    assert first([], default=9) == 9
