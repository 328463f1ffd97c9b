"""Hypothesis strategies shared by the tests: arrays of every jitflow dtype, with the
special values (NaN, +-inf, -0.0, extremes) NumPy fidelity has to survive."""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# The dtypes jitflow had first: tests parametrized over dtypes use these, so that every
# dtype added does not multiply their run time (targeted tests cover the others).
CORE_DTYPES = [np.dtype(d) for d in ("bool", "int32", "int64", "float32", "float64")]
SMALL_INT_DTYPES = [np.dtype(d) for d in ("int8", "int16", "uint8", "uint16", "uint32",
                                          "uint64")]
DTYPES = CORE_DTYPES[:3] + SMALL_INT_DTYPES + CORE_DTYPES[3:]
# ... and float16, which the fuzzer and tests/test_float16.py draw
ALL_DTYPES = DTYPES + [np.dtype("float16")]
FLOAT_DTYPES = [np.dtype("float32"), np.dtype("float64")]
INT_DTYPES = [np.dtype("int32"), np.dtype("int64")]


def shapes(min_dims=0, max_dims=3, min_side=0, max_side=4):
    """Shapes including 0-d, size-0 and size-1 axes."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def elements(dtype, special=True, min_value=None, max_value=None):
    if dtype.kind == "f":
        return st.floats(min_value=min_value, max_value=max_value,
                         allow_nan=special and min_value is None,
                         allow_infinity=special and min_value is None,
                         # a half's subnormals are float32 normals where it computes
                         # (and hypothesis would filter most draws of halves without)
                         allow_subnormal=dtype.itemsize == 2, width=dtype.itemsize * 8)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        # bounds past the dtype's range are held to it (-100 for a uint8 is 0)
        low = info.min if min_value is None else max(int(min_value), int(info.min))
        high = info.max if max_value is None else min(int(max_value), int(info.max))
        return st.integers(low, high)
    return st.booleans()


def arrays(dtype, shape, **kwargs):
    return hnp.arrays(dtype, shape, elements=elements(np.dtype(dtype), **kwargs))


@st.composite
def broadcastable_pair(draw, max_dims=3):
    """Two shapes that broadcast together (each axis equal, or 1, or missing)."""
    a, b = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=max_dims,
                                                  max_side=4)).input_shapes
    return a, b
