import app.util.helpers as h
from app import start
from . import core
from .util import helpers
from .core.engine import Engine as E


@h.retry
def main(argv):
    start({})
    core.run({}, verbose=True)
    helpers.fmt(1, width=4)
    h.fmt(2)
    E("cli").run_step(1)
    unknown_thing.method()
    return 0


if __name__ == "__main__":
    main([])
