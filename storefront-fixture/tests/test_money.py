import pytest

from shop.money import InvalidAmount, format_cents, parse_amount, split_evenly


def test_format_cents():
    assert format_cents(0) == "$0.00"
    assert format_cents(5) == "$0.05"
    assert format_cents(123456) == "$1,234.56"
    assert format_cents(-250) == "-$2.50"


@pytest.mark.parametrize(
    "text, cents",
    [("12.50", 1250), ("$1,000", 100000), (" 0.005 ", 1), ("0.1", 10), ("19.99", 1999)],
)
def test_parse_amount(text, cents):
    assert parse_amount(text) == cents


@pytest.mark.parametrize("text", ["", "abc", "NaN", "Infinity"])
def test_parse_amount_rejects_garbage(text):
    with pytest.raises(InvalidAmount):
        parse_amount(text)


def test_split_evenly_sums_exactly():
    assert split_evenly(100, 3) == [34, 33, 33]
    assert sum(split_evenly(1999, 7)) == 1999
