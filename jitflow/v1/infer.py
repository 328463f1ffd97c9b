"""Static shapes and dtypes of an operation's outputs, found by tracing its compute.

jitflow's types have concrete shapes, so an unknown dimension (None) is traced at two
stand-in sizes: an output dimension that follows the stand-in is unknown, one that stays
put is known. A shape the trace cannot follow (reshape to a fixed size, say) leaves the
output's dimensions unknown; the run, with real sizes, decides. Nothing is computed.
"""
import numpy as np

from ..errors import at_user_line
from ..ir.types import TensorType, type_of_value
from ..trace import GraphBuilder, Tracer
from .tensor import TensorShape

STAND_IN_SIZES = (12, 60)  # divisible by 2, 3, 4 and 6: splits of an unknown dim trace
# Traced too where it fits: a dimension clamped by a slice (x[:5]) is the same at both
# stand-ins, but not at 1.
SMALL_STAND_IN = 1
STAND_IN_RANKS = (0, 1, 2, 3, 4)


def output_types(compute, inputs):
    """([(TensorShape, dtype)] for compute(*values of `inputs`), whether compute returns
    a list (split, unstack: a list even of one Tensor))."""
    shapes = [t.shape for t in inputs]
    if any(s.dims is None for s in shapes):
        return _unknown_rank_types(compute, inputs)
    if all(s.is_fully_defined() for s in shapes):
        types, listed = _trace(compute, inputs, None)
        return [(TensorShape(t.shape), t.dtype) for t in types], listed
    traced, error = [], None
    for size in STAND_IN_SIZES:
        try:
            traced.append(_trace(compute, inputs, size))
        except (ValueError, TypeError, IndexError) as caught:
            error = error or caught
    if not traced:  # the unknown dimensions may be 1 or another input's size
        return _fitting_types(compute, inputs, error)
    listed = traced[0][1]
    if len(traced) == 2 and len(traced[0][0]) != len(traced[1][0]):
        raise ValueError(at_user_line(
            f"the number of outputs depends on an unknown dimension of the input shapes "
            f"{', '.join(str(t.shape) for t in inputs)}; give the number (num=) or a "
            f"known shape"))
    if len(traced) == 1:  # a stand-in did not fit: every dimension is left open
        return [(TensorShape([None] * t.ndim), t.dtype) for t in traced[0][0]], listed
    try:
        small = _trace(compute, inputs, SMALL_STAND_IN)[0]
    except (ValueError, TypeError, IndexError):
        small = None
    if small is not None and len(small) == len(traced[0][0]):
        traced.append((small, listed))
    return [_common(types) for types in zip(*(t[0] for t in traced))], listed


def _common(types):
    """(TensorShape, dtype) of one output traced at several stand-in sizes: a dimension
    that differs between them is unknown, and so is the rank if that differs."""
    if len({t.ndim for t in types}) > 1:
        return TensorShape(None), types[0].dtype
    return TensorShape([dims[0] if len(set(dims)) == 1 else None
                        for dims in zip(*(t.shape for t in types))]), types[0].dtype


def _fitting_types(compute, inputs, error):
    """The types of the first stand-in size that traces (rank known, sizes unknown)."""
    for size in [1] + _known_sizes(inputs):
        try:
            types, listed = _trace(compute, inputs, size)
        except (ValueError, TypeError, IndexError):
            continue
        return [(TensorShape([None] * t.ndim), t.dtype) for t in types], listed
    raise error


def _known_sizes(inputs):
    return sorted({d for t in inputs if t.shape.dims is not None
                   for d in t.shape.dims if d is not None})


def _unknown_rank_types(compute, inputs):
    """An input of unknown rank: the dtypes of the first stand-in shape that traces
    (each rank, filled with 1, with a size another input has, or with a stand-in)."""
    error = None
    for rank in STAND_IN_RANKS:
        for size in [1] + _known_sizes(inputs) + [STAND_IN_SIZES[0]]:
            try:
                types = _trace(compute, inputs, size, rank)
            except (ValueError, TypeError, IndexError) as caught:
                error = error or caught
                continue
            return [(TensorShape(None), t.dtype) for t in types[0]], types[1]
    raise error


def _trace(compute, inputs, size, rank=None):
    with GraphBuilder("graph") as builder:
        tracers = [builder.new_input(_stand_in_type(t, size, rank), t.name) for t in inputs]
        results = compute(*tracers)
    listed = isinstance(results, (list, tuple))
    results = results if listed else [results]
    return [r._var.type if isinstance(r, Tracer) else type_of_value(np.asarray(r))
            for r in results], listed


def _stand_in_type(tensor, size, rank):
    dims = tensor.shape.dims
    if dims is None:
        dims = (None,) * rank
    return TensorType(tuple(size if d is None else d for d in dims), tensor.dtype)
