import unittest

from app.core import Engine, run


def test_run():
    assert run({}) is not None


class EngineTests(unittest.TestCase):
    def test_step(self):
        Engine("t").run_step(0)

    def helper_not_a_test(self):
        pass
