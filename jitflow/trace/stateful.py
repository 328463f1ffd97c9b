"""Stateful values (jitflow.Variable): read for their value now by every operation."""


class Stateful:
    """An object standing for an array whose value changes over time (jitflow.Variable):
    an operation on it reads the value it holds at that moment, `read()`, which inside a
    trace is a Tracer."""
    __slots__ = ()

    def read(self):
        raise NotImplementedError


def read_stateful(value):
    """`value` with every Stateful in it (itself, or inside lists and tuples, as
    np.concatenate takes them) replaced by the value it holds now."""
    if isinstance(value, Stateful):
        return value.read()
    if type(value) in (list, tuple):
        return type(value)(read_stateful(item) for item in value)
    return value


