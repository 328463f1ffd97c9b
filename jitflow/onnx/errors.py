"""The errors of ONNX exchange: what a model or a graph holds that cannot cross over."""


class UnsupportedError(NotImplementedError):
    """A graph holds operations the other side cannot express: all of them are named,
    so one error says everything that is missing."""

    def __init__(self, what, names, known):
        self.names = sorted(set(names))
        super().__init__(f"{what}: {', '.join(self.names)} "
                         f"(supported: {', '.join(sorted(known))})")


def unsupported(what, names, known):
    """Raise UnsupportedError when `names` holds any name not in `known`."""
    missing = [name for name in names if name not in known]
    if missing:
        raise UnsupportedError(what, missing, known)
