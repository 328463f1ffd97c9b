"""The program fuzzer's inputs (test_program_fuzzer.py): arrays of every dtype in
every memory layout, with each dtype's corner values, and Python scalars."""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fuzzer_ops import FUZZ_LITERALS
from strategies import ALL_DTYPES as DTYPES, arrays, elements
from test_compositions import SPECIAL

LAYOUTS = ("contiguous", "reversed", "strided", "transposed", "fortran", "unaligned")


def laid_out(values, layout):
    """An array holding `values` in the memory layout named."""
    if values.ndim == 0:
        return values.copy()
    if layout == "fortran":
        return np.asfortranarray(values)
    if layout == "unaligned" and values.dtype.itemsize > 1:
        buffer = np.zeros(values.nbytes + 1, np.uint8)[1:]
        array = buffer.view(values.dtype).reshape(values.shape)
    elif layout == "reversed":
        array = np.empty_like(values)[(slice(None, None, -1),) * values.ndim]
    elif layout == "strided":
        base = np.empty(tuple(2 * d for d in values.shape), values.dtype)
        array = base[(slice(None, None, 2),) * values.ndim]
    elif layout == "transposed":
        array = np.empty(values.shape[::-1], values.dtype).T
    else:
        array = np.empty_like(values)
    array[...] = values
    return array


FLOAT_CORNERS = SPECIAL + [2.5, -3.0, 0.5, 1e30, -1e-30]


def corner_values_like(x, layout):
    """An input like x (in `layout`) holding the corner cases of its dtype in turn; a
    Python scalar stays itself."""
    if layout == "python":
        return x
    if x.dtype.kind == "f":
        corners = FLOAT_CORNERS + [float(np.finfo(x.dtype).max)]
    elif x.dtype.kind == "b":
        corners = [True, False, False]
    else:
        info = np.iinfo(x.dtype)
        corners = [0, 1, -1, 2, -3, info.min, info.max, info.min + 1]
        corners = [c % (int(info.max) + 1) for c in corners] if info.min == 0 else corners
    with np.errstate(over="ignore"):  # 1e30 as a float16 is inf
        corners = np.array(corners, x.dtype)
    return laid_out(np.resize(corners, x.shape), layout)


def c_contiguous(x):
    return np.array(x, order="C") if isinstance(x, np.ndarray) else x


@st.composite
def input_values(draw, dtype, shape):
    if dtype.kind == "f":
        return draw(hnp.arrays(dtype, shape, elements=st.sampled_from(FLOAT_CORNERS) |
                               elements(dtype)))
    if dtype.kind in "iu":
        small = st.integers(-4 if dtype.kind == "i" else 0, 4)
        return draw(hnp.arrays(dtype, shape, elements=small | elements(dtype)))
    return draw(arrays(dtype, shape))


@st.composite
def inputs(draw):
    """Arrays of shapes that broadcast together, each in a layout, and (sometimes) a
    Python scalar: (inputs, their layouts, "python" for the scalar)."""
    count = draw(st.integers(1, 3))
    # Small arrays mostly; some long enough for vector loops, their remainders and
    # the kernels of larger arrays.
    shapes = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=count, max_dims=3, min_side=0,
        max_side=draw(st.sampled_from([4, 4, 19])))).input_shapes
    arrays, layouts = [], []
    for shape in shapes:
        values = draw(input_values(draw(st.sampled_from(DTYPES)), shape))
        layouts.append(draw(st.sampled_from(LAYOUTS)))
        arrays.append(laid_out(values, layouts[-1]))
    if draw(st.integers(0, 3)) == 0:
        arrays.append(draw(st.sampled_from(FUZZ_LITERALS)))
        layouts.append("python")
    return arrays, layouts
