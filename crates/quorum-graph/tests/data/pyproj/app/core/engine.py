class Base:
    def setup(self):
        return True


class Engine(Base):
    def __init__(self, name, retries=3):
        self.name = name
        self.retries = retries

    def run_step(self, step):
        self.setup()
        self.helper()
        return Engine.make()

    @staticmethod
    def make():
        return 1

    @classmethod
    def create(cls, name):
        return cls(name)

    def helper(self):
        return self.retries


def run(config, verbose=False):
    engine = Engine("main")

    def inner(x):
        return x + 1

    engine.run_step(inner(1))
    return Engine.create("again")
