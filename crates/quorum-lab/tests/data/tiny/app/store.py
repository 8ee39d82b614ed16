import hashlib


def fingerprint(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def mean_price(prices):
    if not prices:
        return 0
    return sum(prices) / len(prices)
