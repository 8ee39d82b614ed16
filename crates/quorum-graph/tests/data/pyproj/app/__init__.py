"""A small multi-file project for the graph tests: every resolution rule has a use here."""
from .core.engine import run as start
from .util import helpers

__all__ = ["start", "helpers"]
