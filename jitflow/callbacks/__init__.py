"""jitflow.pure_callback: call Python from compiled code for what jitflow does not
compile, with results of declared shapes and dtypes.

    def bessel(x):
        return scipy.special.j0(x)          # any Python, on NumPy arrays

    @jitflow.function
    def f(x):
        y = jitflow.pure_callback(bessel, jitflow.ShapeDtypeStruct(x.shape, x.dtype), x)
        return y * 2

The function must be pure (its results depend on its arguments alone): the call may
be dropped when its results are unused, merged with an identical one, or made at
compile time on constant arguments. Native code calls it on the calling thread,
holding the GIL, with copies of the arguments; its results are checked against the
declared ones (TypeError naming the difference). It has no derivative: wrap it in
jitflow.custom_vjp to give it one.
"""
import numpy as np

from ..ir.types import SUPPORTED_DTYPES
from ..ops.host import ResultChecking, pure_callback as _bind
from ..pytree import flatten, unflatten
from ..debug.callbacks import runtime_arguments


class ShapeDtypeStruct:
    """The shape and dtype of a result (an array's own .shape and .dtype do as well)."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(int(d) for d in shape), np.dtype(dtype)

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"


def pure_callback(fn, result_shape_dtypes, *args, **kwargs):
    """fn(*args, **kwargs) on the runtime values of the arrays in args and kwargs
    (pytrees; other leaves are passed as they are); its results, of the shapes and
    dtypes of the leaves of result_shape_dtypes, in that pytree's structure."""
    wanted, _, result_structure = flatten(result_shape_dtypes)
    results = tuple(_declared(leaf) for leaf in wanted)
    one_array = len(wanted) == 1 and wanted[0] is result_shape_dtypes
    values, rebuilt = runtime_arguments(args, kwargs)

    def call(*runtime):
        call_args, call_kwargs = rebuilt(runtime)
        outcome = fn(*call_args, **call_kwargs)
        return [outcome] if one_array else flatten(outcome)[0]
    name = getattr(fn, "__qualname__", None) or repr(fn)
    outs = _bind(ResultChecking(call, results, name), *values)
    return unflatten(result_structure, list(outs))


def _declared(leaf):
    if not hasattr(leaf, "shape") or not hasattr(leaf, "dtype"):
        raise TypeError(f"pure_callback: result_shape_dtypes holds {leaf!r}, which has no "
                        f"shape and dtype (use jitflow.ShapeDtypeStruct(shape, dtype))")
    dtype = np.dtype(leaf.dtype)
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"pure_callback: jitflow has no {dtype} arrays; declare one of "
                        f"{', '.join(sorted(str(d) for d in SUPPORTED_DTYPES))}")
    return tuple(int(d) for d in leaf.shape), dtype


__all__ = ["ShapeDtypeStruct", "pure_callback"]
