import functools


def retry(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def fmt(value, *, width=10):
    return str(value).rjust(width)
