from .engine import Engine, run
