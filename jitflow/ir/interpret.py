"""The reference interpreter: evaluate a Graph on NumPy values."""
import contextlib
import contextvars

import numpy as np

from .graph import Lit

# np.errstate settings the interpreter runs NumPy under: silent, unless a caller asks
# for more (jitflow.config.debug_nans: nan_check.py), for nested graphs too.
_FLOATING_ERRORS = contextvars.ContextVar("floating_errors", default={"all": "ignore"})


@contextlib.contextmanager
def floating_errors(**settings):
    """Run the interpreter with NumPy's floating-point error handling `settings` (as
    np.errstate takes them) instead of silence; other kinds stay ignored."""
    token = _FLOATING_ERRORS.set({"all": "ignore", **settings})
    try:
        yield
    finally:
        _FLOATING_ERRORS.reset(token)


def eval_graph(graph, args):
    """Evaluate `graph` on concrete inputs; returns the list of output values.

    Weakly typed values are handed to NumPy as Python scalars, so NumPy applies the same
    NEP 50 promotion the type rules predicted. Floating-point warnings are silenced: the
    compiled code gives the same IEEE results without warnings, and so does this
    (unless floating_errors asks otherwise).
    """
    env = {}

    def read(value):
        if isinstance(value, Lit):
            return as_operand(value.value, value.type)
        return env[value]

    for var, arg in zip(graph.inputs, args, strict=True):
        env[var] = as_operand(arg, var.type)
    with np.errstate(**_FLOATING_ERRORS.get()):
        for node in graph.nodes:
            outs = node.prim.evaluate(*map(read, node.inputs), subgraphs=node.subgraphs,
                                      **node.params)
            for var, out in zip(node.outputs, outs, strict=True):
                env[var] = as_operand(out, var.type)
    return [read(v) for v in graph.outputs]


def as_operand(value, type):
    """A weak value as the Python scalar NumPy treats weakly, anything else as an array."""
    if type.weak:
        return np.asarray(value).item()
    return np.asarray(value)
