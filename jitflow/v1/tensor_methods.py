"""The Tensor's operators, indexing and NumPy protocols, given to it once, at import.

tensor.py knows what a Tensor is; what `t + u`, `t[i]`, `t.astype(d)` or `np.exp(t)` do
on one is to add an operation, and that belongs to the modules built on it (numpy_calls,
ops). This module installs those on the Tensor (so on Variable too), as
jitflow/array_methods.py does on the Tracer, so tensor.py imports neither
(jitflow/v1/__init__ imports this module).
"""
import operator
from types import FunctionType

from . import ops
from .numpy_calls import function_operation, operation, ufunc_operation
from .tensor import Tensor


class TensorMethods:
    """What a Tensor does as an operand; every function and property here becomes the
    Tensor's (install)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ufunc_operation(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return function_operation(func, args, kwargs)

    def __getitem__(self, index):
        return operation("StridedSlice", operator.getitem, (self, index), {})

    def astype(self, dtype):
        return ops.cast(self, dtype)

    @property
    def T(self):
        return ops.transpose(self)


def _binary(op_name, reflected=False):
    function = getattr(ops, op_name)

    def method(self, other):
        return function(other, self) if reflected else function(self, other)
    method.__name__ = op_name
    return method


def _unary(op_name):
    function = getattr(ops, op_name)

    def method(self):
        return function(self)
    method.__name__ = op_name
    return method


# (operator, the op function it adds): those with a reflected form (__radd__), those
# without, and the unary ones
_REFLECTED = [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
              ("truediv", "divide"), ("floordiv", "floordiv"), ("mod", "mod"),
              ("pow", "pow"), ("matmul", "matmul"), ("and", "logical_and"),
              ("or", "logical_or"), ("xor", "logical_xor")]
_COMPARISONS = [("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                ("ge", "greater_equal")]
_UNARY = [("neg", "negative"), ("abs", "abs"), ("invert", "logical_not")]


def install():
    """Give the Tensor every method and property of TensorMethods and its operators."""
    for name, value in vars(TensorMethods).items():
        if isinstance(value, (FunctionType, property)):
            setattr(Tensor, name, value)
    for dunder, op_name in _REFLECTED:
        setattr(Tensor, f"__{dunder}__", _binary(op_name))
        setattr(Tensor, f"__r{dunder}__", _binary(op_name, reflected=True))
    for dunder, op_name in _COMPARISONS:
        setattr(Tensor, f"__{dunder}__", _binary(op_name))
    for dunder, op_name in _UNARY:
        setattr(Tensor, f"__{dunder}__", _unary(op_name))


install()
