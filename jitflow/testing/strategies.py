"""Hypothesis strategies for property-based tests of derivatives.

    from hypothesis import given
    from jitflow.testing import check_grads
    from jitflow.testing.strategies import arrays

    @given(arrays(min_value=0.1, max_value=10))          # log is smooth there
    def test_log_gradient(x):
        check_grads(np.log, (x,))

    @given(arrays(avoid=[0.0], margin=0.2))              # |x| has a kink at 0
    def test_abs_gradient(x):
        check_grads(np.abs, (x,), order=1)
"""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4):
    """Array shapes, 0-d included by default; min_side=0 adds empty arrays."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def arrays(dtype=np.float64, shape=None, *, min_value=-10.0, max_value=10.0, avoid=(),
           margin=0.1, **shape_options):
    """Arrays of `dtype` (float32 or float64) with finite values in [min_value,
    max_value], none of them within `margin` of a point in `avoid` (the singularities,
    kinks and jumps of the function under test). `shape` is a tuple, a strategy, or None
    for shapes(**shape_options)."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"arrays: derivatives need float dtypes, got {dtype}")
    if shape is None:
        shape = shapes(**shape_options)
    width = dtype.itemsize * 8
    values = st.floats(min_value, max_value, allow_nan=False, allow_infinity=False,
                       allow_subnormal=False, width=width)
    if avoid:
        values = values.filter(lambda v: all(abs(v - point) >= margin for point in avoid))
    return hnp.arrays(dtype, shape, elements=values)


@st.composite
def broadcastable_arrays(draw, count=2, dtype=np.float64, max_dims=3, max_side=4,
                         **value_options):
    """`count` arrays whose shapes broadcast together (size-1 and missing axes)."""
    found = draw(hnp.mutually_broadcastable_shapes(num_shapes=count, max_dims=max_dims,
                                                   min_side=1, max_side=max_side))
    return tuple(draw(arrays(dtype, shape, **value_options)) for shape in found.input_shapes)


__all__ = ["shapes", "arrays", "broadcastable_arrays"]
