"""Whether NumPy would hold a traced value's array in C order.

NumPy's reshape (and ravel) of an array is a view, written through, only where the
array's memory layout allows; elsewhere it is a copy. The layout NumPy gives a result
follows its inputs': ufuncs, casts, reductions, concatenate, `*_like` keep the order of
their operands ("K" order), so `np.exp(x.T)` is Fortran-ordered and its reshape a copy.
A trace cannot know the layout of the arrays it will be called with, so a value computed
from an argument, a closed-over array or a transposed view may not be in C order; only
a value every one of whose sources is known to be C-ordered is. Writes through a
reshape of the others are refused (aliases.py, writes.py) rather than NumPy's choice
guessed.
"""
import weakref

import numpy as np

from ..ir.graph import Lit

# NumPy allocates these results in C order whatever their inputs' layouts
_C_ORDER = frozenset({"matmul", "iota"})
# and this one reorders the axes of its input's memory
_REORDERED = frozenset({"transpose"})

_FACTS = weakref.WeakKeyDictionary()  # builder -> _LayoutFacts


def may_not_be_c_ordered(builder, var):
    """Whether NumPy's array for `var`, a value traced by `builder`, may be in another
    order than C (its reshape then may copy)."""
    return _facts(builder).unknown(builder, var)


def order_not_known(builder, var):
    """NumPy makes `var`'s array in the order of another array, not its operands'
    (`np.zeros_like(x)` takes x's order): the values computed from it follow."""
    if var.type.ndim >= 2:
        _facts(builder).known[var] = True


def _facts(builder):
    facts = _FACTS.get(builder)
    if facts is None:
        facts = _FACTS[builder] = _LayoutFacts()
    return facts


class _LayoutFacts:
    """What is known of one builder's values; SSA values never change, so it grows."""

    def __init__(self):
        self.producer = {}  # Var -> the node that makes it
        self.indexed = 0  # how many of the builder's nodes `producer` covers
        self.known = {}  # Var -> whether its order may not be C

    def unknown(self, builder, var):
        for node in builder.nodes[self.indexed:]:
            for output in node.outputs:
                self.producer[output] = node
        self.indexed = len(builder.nodes)
        pending = [var]
        while pending:  # depth first, without recursion: graphs can be deep
            current = pending[-1]
            if current in self.known:
                pending.pop()
                continue
            missing = self._missing_inputs(current)
            if missing:
                pending.extend(missing)
            else:
                self.known[current] = self._decide(builder, current)
                pending.pop()
        return self.known[var]

    def _missing_inputs(self, var):
        node = self.producer.get(var)
        if node is None or node.prim.name in _C_ORDER | _REORDERED:
            return []
        return [v for v in node.inputs if not isinstance(v, Lit) and v not in self.known]

    def _decide(self, builder, var):
        if var.type.ndim < 2:
            return False  # a 1-d result is contiguous in NumPy
        node = self.producer.get(var)
        if node is None:  # an input: an argument, a closed-over or an outer array
            return _input_may_not_be_c_ordered(builder, var)
        name = node.prim.name
        if name in _C_ORDER:
            return False
        if name in _REORDERED:
            return tuple(node.params["perm"]) != tuple(range(var.type.ndim))
        return any(_unordered_constant(v) if isinstance(v, Lit) else self.known[v]
                   for v in node.inputs)


def _input_may_not_be_c_ordered(builder, var):
    """An argument's layout is the caller's choice at each call; a closed-over array's
    is its own for good (an ndarray's strides never change)."""
    for array, _, closed_var in (builder.closed or {}).values():
        if closed_var is var:
            return not array.flags.c_contiguous
    return True


def _unordered_constant(lit):
    value = lit.value
    return isinstance(value, np.ndarray) and value.ndim >= 2 and \
        not value.flags.c_contiguous
