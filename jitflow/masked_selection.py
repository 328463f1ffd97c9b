"""x[mask] for a traced boolean mask, in the statements NumPy code writes it in:
`x[mask] += v`, `x[mask] *= v`, `x[mask] = y[mask]`, `x[mask] = np.exp(y[mask]) * 2`.

How many elements a traced mask selects is known only at run time, so the selection
cannot be an array of the trace. These statements never need it as one: Python runs
`x[mask] += v` as `s = x[mask]; s += v; x[mask] = s`, and each element of s is computed
from the element of x (and of y[mask], with the same mask) at its own position. So
x[mask] gives a MaskedSelection that keeps x's whole value; an in-place operator gives
another (the operation done on the whole array, each element cast back to x's dtype as
NumPy's in-place operator does), so does an elementwise operator or ufunc of
selections at one mask (and of values that broadcast to any selection), and assigning
one back at the same mask is a `where`. Anything else done with it raises the
BooleanIndexError that names the line.
"""
import operator

import numpy as np

from . import ops, writes
from .errors import BooleanIndexError, at_user_line, user_location
from .ir.graph import Lit
from .trace import Tracer, constant_type


class MaskedSelection:
    """x[mask]: `values` has x's shape and dtype, `mask` the leading axes of x;
    `made_at` the user's line that selected."""
    __slots__ = ("values", "mask", "made_at")

    def __init__(self, values, mask, made_at):
        self.values, self.mask, self.made_at = values, mask, made_at

    def same_positions(self, mask, shape):
        """Whether x[mask] = self assigns each element where it was taken from."""
        return _same_mask(mask, self.mask) and \
            tuple(self.values.shape[:mask.ndim]) == tuple(shape[:mask.ndim])

    def assigned_at(self, x, mask):
        """x with x[mask] = self (writes.py asks the value's type for this)."""
        return _assigned(x, mask, self)

    def _inplace(self, operation, other, ufunc):
        other = _operand(self, other, ufunc)
        target = writes.mark_array(writes.copy(self.values))
        return MaskedSelection(writes.inplace(target, operation, other, ufunc), self.mask,
                               self.made_at)

    def _elementwise(self, fn, name, *operands):
        """fn(*operands) of selections at this mask and values that broadcast to any
        selection: each element from the elements at its position, a selection too."""
        result = fn(*[_operand(self, o, name) for o in operands])
        if tuple(result.shape) != tuple(self.values.shape):
            raise selection_error(self.mask, self.made_at)
        return MaskedSelection(result, self.mask, self.made_at)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs or ufunc.nout != 1:
            raise selection_error(self.mask, self.made_at)
        return self._elementwise(lambda *args: ufunc(*args), ufunc.__name__, *inputs)

    def _refuse(self, *args, **kwargs):
        raise selection_error(self.mask, self.made_at)


def select(x, mask):
    """x[mask] for the traced boolean `mask`."""
    if writes.selects_nothing(x, mask):
        return ops.zeros((0,) + tuple(x.shape[mask.ndim:]), x.dtype)
    if mask.ndim > x.ndim or mask.shape != x.shape[:mask.ndim]:
        raise IndexError(at_user_line(
            f"boolean index of shape {mask.shape} does not match the indexed array of "
            f"shape {x.shape}"))
    return MaskedSelection(writes.copy(x), mask, user_location())


def _assigned(x, mask, selection):
    """x with x[mask] = selection, as NumPy assigns: cast to x's dtype."""
    if not selection.same_positions(mask, x.shape):
        raise selection_error(mask, selection.made_at)
    mask = ops.reshape(mask, mask.shape + (1,) * (x.ndim - mask.ndim))
    value = selection.values
    if value.dtype != x.dtype:
        value = ops.cast(value, x.dtype)
    return ops.where(mask, ops.broadcast_to(value, x.shape), x)


def _operand(selection, other, ufunc):
    """`other` of `selection op= other` as an operand over the whole array: the values
    of a selection at the same mask, or a value that broadcasts to any selection."""
    if other is selection:
        return selection.values
    if isinstance(other, MaskedSelection):
        if not other.same_positions(selection.mask, selection.values.shape):
            raise selection_error(selection.mask, selection.made_at)
        return other.values
    shape = constant_type(other).shape
    kept = selection.values.ndim - selection.mask.ndim  # the axes after the mask's
    if len(shape) > kept and any(size != 1 for size in shape[:len(shape) - kept]):
        raise ValueError(at_user_line(
            f"'{ufunc}' of a traced boolean selection with an array of shape {shape}: "
            f"how many elements the mask selects is known only at run time, so use one "
            f"value, or the same selection of an array of the same shape (y[mask])"))
    if len(shape) > kept:
        other = ops.reshape(other, shape[len(shape) - kept:])
    return other


def _same_mask(a, b):
    """Whether the masks are one value: the same, or computed alike from the same
    operands (`y[x > 0] = z[x > 0]` computes `x > 0` twice)."""
    if a._var is b._var:
        return True
    if a._builder is not b._builder:
        return False
    made = {out: node for node in a._builder.nodes for out in node.outputs
            if out is a._var or out is b._var}
    node_a, node_b = made.get(a._var), made.get(b._var)
    return node_a is not None and node_b is not None and not node_a.subgraphs and \
        node_a.prim is node_b.prim and node_a.params_key() == node_b.params_key() and \
        len(node_a.inputs) == len(node_b.inputs) and \
        all(_same_operand(u, v) for u, v in zip(node_a.inputs, node_b.inputs))


def _same_operand(u, v):
    if isinstance(u, Lit) and isinstance(v, Lit):
        return u.key() == v.key()
    return u is v


def selection_error(mask, made_at=None):
    where = f" (selected at {made_at})" if made_at else ""
    return BooleanIndexError(at_user_line(
        f"boolean mask indexing of a traced value (mask {mask.type}){where} has a shape that "
        f"depends on the data, which tracing cannot know. The selection can be written "
        f"to (x[mask] = v, x[mask] += v, x[mask] = y[mask] with the same mask, or an "
        f"elementwise expression of such selections), not used as an array; use "
        f"jitflow.numpy.where(mask, x, 0) to keep the shape, or reduce with "
        f"jitflow.numpy.sum(jitflow.numpy.where(mask, x, 0))"))


def _install_operators():
    """Elementwise operators and in-place ones work; every other operator and NumPy
    protocol refuses."""
    inplace = {"__iadd__": "add", "__isub__": "subtract", "__imul__": "multiply",
               "__itruediv__": "divide", "__ifloordiv__": "floor_divide",
               "__imod__": "remainder", "__ipow__": "power", "__iand__": "bitwise_and",
               "__ior__": "bitwise_or", "__ixor__": "bitwise_xor"}
    for dunder, name in inplace.items():
        ufunc = {"divide": "true_divide"}.get(name, name)
        setattr(MaskedSelection, dunder,
                lambda self, other, op=getattr(ops, name), ufunc=ufunc:
                self._inplace(op, other, ufunc))
    binary = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or",
              "xor"]
    for name in binary + ["lt", "le", "gt", "ge", "eq", "ne"]:
        op = getattr(operator, f"{name}_" if name in ("and", "or") else name)
        setattr(MaskedSelection, f"__{name}__",
                lambda self, other, op=op, name=name:
                self._elementwise(op, name, self, other))
        if name in binary:
            setattr(MaskedSelection, f"__r{name}__",
                    lambda self, other, op=op, name=name:
                    self._elementwise(op, name, other, self))
    for name in ("neg", "pos", "abs", "invert"):
        op = getattr(operator, name)
        setattr(MaskedSelection, f"__{name}__",
                lambda self, op=op, name=name: self._elementwise(op, name, self))
    refused = ["__matmul__", "__rmatmul__", "__getitem__", "__setitem__", "__len__",
               "__iter__", "__bool__", "__float__", "__int__", "__index__",
               "__complex__", "__array__", "__array_function__"]
    for dunder in refused:
        setattr(MaskedSelection, dunder, MaskedSelection._refuse)
    MaskedSelection.__getattr__ = lambda self, name: self._refuse()
    MaskedSelection.__hash__ = None


_install_operators()


def is_traced_mask(index):
    """Whether `index` is a traced boolean mask alone (x[mask], x[(mask,)])."""
    if isinstance(index, tuple) and len(index) == 1:
        index = index[0]
    return isinstance(index, Tracer) and index.dtype == np.bool_
