"""jitflow.numpy against NumPy: every function eagerly on ndarrays and traced through
@jitflow.function, same values and dtypes; and NumPy's own functions on traced values."""
import math

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from jitflow.ir.types import SUPPORTED_DTYPES

from fidelity import (NATIVE_ULPS, assert_same, error_kinds, given_per_backend,
                      native_tolerance, numpy_outcome, run_traced, ulps)
from strategies import CORE_DTYPES, DTYPES, FLOAT_DTYPES, arrays, broadcastable_pair, shapes


# Traced graphs run on the interpreter and on native code (conftest.py).
pytestmark = pytest.mark.usefixtures("backend")


def check(name, operands, kwargs=None, *, reference=None, rtol=0.0, atol=0.0,
          zero_sign=True, native=None):
    """jitflow.numpy.<name>(*operands, **kwargs), eagerly and traced (operands as the
    function's arguments, kwargs static), against NumPy's function of the same name (or
    `reference`): same values and dtype, or the same kind of error. Traced on native
    code, the result is held to `native` (assert_same's rtol, atol and ulps, see
    fidelity.py) where given, else to rtol and atol too."""
    kwargs = kwargs or {}
    function = getattr(jnp, name)
    expected, error = numpy_outcome(reference or getattr(np, name), *operands, **kwargs)

    def traced(*arguments):
        return function(*arguments, **kwargs)
    if error is None and np.asarray(expected).dtype not in SUPPORTED_DTYPES:
        error = TypeError(f"NumPy gives {np.asarray(expected).dtype}")
    if error is not None:
        with pytest.raises(error_kinds(error)):
            with np.errstate(all="ignore"):
                function(*operands, **kwargs)
        with pytest.raises(error_kinds(error)):
            run_traced(traced, *operands)
        return
    tolerance = dict(rtol=rtol, atol=atol, zero_sign=zero_sign)
    with np.errstate(all="ignore"):  # eagerly NumPy warns, as NumPy does
        assert_same(function(*operands, **kwargs), expected, what=f"{name} eagerly",
                    **tolerance)
    if native is not None and jitflow.config.backend == "native":
        tolerance = dict(native, zero_sign=zero_sign)
    assert_same(run_traced(traced, *operands), expected, what=f"{name} traced",
                **tolerance)


# --- strategies ---------------------------------------------------------------------------

def any_array(data, shape=None, dtypes=DTYPES, **element_options):
    shape = data.draw(shapes(), label="shape") if shape is None else shape
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    return data.draw(arrays(dtype, shape, **element_options), label="array")


def moderate_floats(dtype, special=True):
    """Finite values of a size whose sums cannot overflow, and the special values."""
    finite = st.floats(-1e3, 1e3, width=8 * np.dtype(dtype).itemsize)
    if not special:
        return finite
    return finite | st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf])


def moderate_array(data, shape=None, dtypes=DTYPES, special=True):
    shape = data.draw(shapes(), label="shape") if shape is None else shape
    dtype = np.dtype(data.draw(st.sampled_from(dtypes), label="dtype"))
    if dtype.kind != "f":
        return data.draw(arrays(dtype, shape, min_value=-1000, max_value=1000))
    return data.draw(hnp.arrays(dtype, shape, elements=moderate_floats(dtype, special)))


def axis_argument(data, ndim, *, tuples=True):
    """None, an axis (possibly negative), or a tuple of distinct axes in any order."""
    options = [st.none()]
    if ndim:
        options.append(st.integers(-ndim, ndim - 1))
        if tuples:
            options.append(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)
                           .map(lambda axes: tuple(a - ndim if a % 2 else a for a in axes)))
    return data.draw(st.one_of(*options), label="axis")


def _count(shape, axis):
    if axis is None:
        return math.prod(shape)
    axes = axis if isinstance(axis, tuple) else (axis,)
    return math.prod(shape[a] for a in axes)


def _scale(x, power=1):
    """The largest finite magnitude in x, to the power: what rounding errors scale with."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    finite = x[np.isfinite(x)]
    return float(finite.max()) ** power if finite.size else 0.0


def _magnitude_sum(x, kwargs):
    """sum(|x|) over the reduced axes, of the values cast to the sum's dtype: what the
    rounding errors of a sum scale with."""
    x = np.asarray(x).astype(kwargs.get("dtype") or x.dtype).astype(np.float64)
    total = np.sum(np.abs(x), axis=kwargs["axis"], keepdims=kwargs["keepdims"])
    return np.nan_to_num(total, posinf=0.0)


def _eps(dtype):
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).eps) if dtype.kind == "f" else 0.0


# --- reductions and statistics ------------------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any"])
@given_per_backend(data=st.data())
def test_reductions(name, data):
    x = moderate_array(data)
    kwargs = {"axis": axis_argument(data, x.ndim), "keepdims": data.draw(st.booleans())}
    if name in ("sum", "prod") and data.draw(st.booleans(), label="with dtype"):
        kwargs["dtype"] = data.draw(st.sampled_from(DTYPES), label="dtype=")
        if kwargs["dtype"].kind in "bi" and x.dtype.kind == "f":
            x = np.where(np.isfinite(x), x, 1).astype(x.dtype)  # NaN to int: undefined
    n = _count(x.shape, kwargs["axis"])
    result_eps = _eps(kwargs.get("dtype", x.dtype))
    atol = {"sum": n * result_eps * _scale(x), "prod": n * result_eps * _scale(x, n)}
    # Native code sums in C order: n roundings of the sum of magnitudes.
    native = {"sum": {"atol": n * result_eps * _magnitude_sum(x, kwargs)}}
    # Which of 0.0 and -0.0 a max returns depends on the order NumPy visits them.
    check(name, [x], kwargs, atol=atol.get(name, 0.0), native=native.get(name),
          zero_sign=name not in ("max", "min"))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given_per_backend(data=st.data())
def test_arg_reductions(name, data):
    x = any_array(data)
    check(name, [x], {"axis": axis_argument(data, x.ndim, tuples=False),
                      "keepdims": data.draw(st.booleans())})


@pytest.mark.parametrize("name", ["mean", "var", "std"])
@given_per_backend(data=st.data())
def test_statistics(name, data):
    x = moderate_array(data)
    kwargs = {"axis": axis_argument(data, x.ndim), "keepdims": data.draw(st.booleans())}
    if name != "mean":
        kwargs["ddof"] = data.draw(st.integers(0, 2), label="ddof")
    if data.draw(st.booleans(), label="with dtype"):
        kwargs["dtype"] = data.draw(st.sampled_from(FLOAT_DTYPES), label="dtype=")
    n = max(_count(x.shape, kwargs["axis"]), 1)
    eps = _eps(kwargs.get("dtype") or np.result_type(x.dtype, np.float32))
    error = 8 * n * eps * _scale(x, 1 if name == "mean" else 2)
    check(name, [x], kwargs, rtol=8 * n * eps,
          atol=math.sqrt(error) if name == "std" else error, zero_sign=False)


@given_per_backend(data=st.data())
def test_cumsum(data):
    x = any_array(data)
    kwargs = {"axis": data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
              if x.ndim else None}
    if data.draw(st.booleans(), label="with dtype"):
        kwargs["dtype"] = data.draw(st.sampled_from(DTYPES), label="dtype=")
        if kwargs["dtype"].kind in "bi" and x.dtype.kind == "f":
            x = np.where(np.abs(x) < 2**30, x, 1).astype(x.dtype)  # NaN to int: undefined
    check("cumsum", [x], kwargs)


# --- elementwise helpers ------------------------------------------------------------------

@given_per_backend(data=st.data())
def test_clip(data):
    x = any_array(data)
    bounds = []
    for _ in range(2):
        kind = data.draw(st.sampled_from(["none", "python", "array"]), label="bound")
        if kind == "none":
            bounds.append(None)
        elif kind == "python":
            bounds.append(data.draw(st.integers(-5, 5) | st.floats(-5, 5), label="bound"))
        else:
            trailing = data.draw(st.integers(0, x.ndim), label="bound axes")
            bounds.append(any_array(data, shape=x.shape[trailing:]))
    # Array bounds are arguments of the traced function, the others constants in it.
    dynamic = [x] + [b for b in bounds if isinstance(b, np.ndarray)]

    def clip_jnp(x, *array_bounds):
        supplied = iter(array_bounds)
        lo, hi = (next(supplied) if isinstance(b, np.ndarray) else b for b in bounds)
        return jnp.clip(x, lo, hi)
    expected, error = numpy_outcome(np.clip, x, *bounds)
    if error is not None or expected.dtype not in SUPPORTED_DTYPES:
        with pytest.raises(error_kinds(error) if error else TypeError):
            run_traced(clip_jnp, *dynamic)
        return
    # Where a zero ties with a zero bound of the other sign, NumPy's clip keeps x's zero
    # if both bounds are single values and otherwise takes hi's; for a single-element
    # result which rule applies depends on the operands' layout, so only there the sign
    # of zero is left open (test_clip_signed_zero_ties pins both rules down).
    exact_zeros = not (expected.size == 1 and None not in bounds)
    with np.errstate(all="ignore"):
        assert_same(jnp.clip(x, *bounds), expected, zero_sign=exact_zeros,
                    what="clip eagerly")
    assert_same(run_traced(clip_jnp, *dynamic), expected, zero_sign=exact_zeros,
                what="clip traced")


@pytest.mark.parametrize("bounds", ["scalars", "arrays"])
def test_clip_signed_zero_ties(bounds):
    zeros = np.array([-0.0, 0.0], np.float32)
    x = np.repeat(zeros, 4)              # every combination of signs of x, lo and hi
    lo = np.tile(np.repeat(zeros, 2), 2)
    hi = np.tile(zeros, 4)
    for i in range(8):
        if bounds == "scalars":
            args = (x[i:i + 1].repeat(3), lo[i], hi[i])  # single values: x's zero stays
        else:
            args = (x, lo, hi)                            # arrays: ties give hi's zero
        expected = np.clip(*args)
        assert_same(jnp.clip(*args), expected, what="clip eagerly")
        assert_same(jitflow.function(jnp.clip)(*args), expected, what="clip traced")


@given_per_backend(data=st.data())
def test_where(data):
    c_shape, x_shape, y_shape = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=3, max_dims=3, max_side=3), label="shapes").input_shapes
    condition = any_array(data, c_shape)  # any dtype: non-zero is true, as in NumPy
    check("where", [condition, any_array(data, x_shape), any_array(data, y_shape)])


@pytest.mark.parametrize("name", ["relu", "isfinite", "square"])
@given_per_backend(data=st.data())
def test_unary_helpers(name, data):
    reference = {"relu": lambda x: np.maximum(x, 0)}.get(name)
    check(name, [any_array(data)], reference=reference)


UFUNCS = {"negative": 1, "absolute": 1, "exp": 1, "sqrt": 1, "floor": 1, "add": 2,
          "subtract": 2, "multiply": 2, "divide": 2, "power": 2, "maximum": 2,
          "equal": 2, "less": 2, "logical_and": 2, "bitwise_or": 2}


@pytest.mark.parametrize("name", sorted(UFUNCS))
@given_per_backend(data=st.data())
def test_ufunc_dtype_argument(name, data):
    """dtype= picks NumPy's loop with that output: operands are cast to it first."""
    pair = data.draw(broadcastable_pair(), label="shapes")
    operands = [any_array(data, shape, min_value=-100, max_value=100)
                for shape in pair[:UFUNCS[name]]]
    if name == "power":
        operands[1] = np.abs(operands[1])  # integers to negative powers raise
    check(name, operands, {"dtype": data.draw(st.sampled_from(DTYPES), label="dtype=")},
          rtol=ulps(np.float32, 4),
          native={"ulps": NATIVE_ULPS} if name in ("exp", "power") else {})


def test_where_needs_three_arguments():
    x = np.arange(3.0)
    with pytest.raises(TypeError, match="where"):
        run_traced(lambda x: jnp.where(x), x)


# --- softmax and friends: stable, and equal to a float64 NumPy reference ------------------

def _logsumexp_reference(x, axis=None, keepdims=False):
    """In float64, peak taken out (an infinite peak is not), in the dtype of exp(x)."""
    dtype = np.exp(np.zeros((), np.asarray(x).dtype)).dtype
    x = np.asarray(x, dtype=np.float64)
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    total = np.sum(np.exp(x - peak), axis=axis, keepdims=True)
    result = np.log(total) + peak
    result = result if keepdims else np.squeeze(result, axis=axis)
    return result.astype(dtype)[()]


def _softmax_reference(x, axis=-1):
    dtype = np.exp(np.zeros((), np.asarray(x).dtype)).dtype
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(dtype)


def _log_softmax_reference(x, axis=-1):
    dtype = np.exp(np.zeros((), np.asarray(x).dtype)).dtype
    lse = _logsumexp_reference(x, axis=axis, keepdims=True).astype(np.float64)
    return (np.asarray(x, dtype=np.float64) - lse).astype(dtype)


def logits(data):
    """Ordinary logits, logits far beyond exp's range (+-1000), and -inf (masked out)."""
    shape = data.draw(shapes(min_dims=1, min_side=1), label="shape")
    dtype = np.dtype(data.draw(st.sampled_from(["float32", "float64", "int32"])))
    if dtype.kind == "i":
        return data.draw(arrays(dtype, shape, min_value=-1000, max_value=1000))
    values = st.one_of(st.floats(-30, 30, width=dtype.itemsize * 8),
                       st.sampled_from([1000.0, -1000.0, -math.inf]))
    return data.draw(hnp.arrays(dtype, shape, elements=values), label="logits")


@pytest.mark.parametrize("name, reference", [
    ("logsumexp", _logsumexp_reference), ("softmax", _softmax_reference),
    ("log_softmax", _log_softmax_reference)])
@given_per_backend(data=st.data())
def test_softmax_family(name, reference, data):
    x = logits(data)
    if name == "logsumexp":
        kwargs = {"axis": axis_argument(data, x.ndim), "keepdims": data.draw(st.booleans())}
    else:
        kwargs = {"axis": data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")}
    dtype = np.exp(np.zeros((), x.dtype)).dtype
    # Rounding errors grow with the size of the logits (x - peak) and log of the count.
    atol = 16 * _eps(dtype) * (_scale(x) + math.log(max(x.size, 1)) + 1)
    check(name, [x], kwargs, reference=reference, rtol=64 * _eps(dtype), atol=atol,
          zero_sign=False)


def test_softmax_family_is_stable_for_large_and_masked_logits():
    x = np.array([[1000.0, 1000.0, -np.inf], [-1000.0, 0.0, 1000.0]], dtype=np.float32)
    expected = {
        "logsumexp": np.array([1000 + np.log(2), 1000], dtype=np.float32),
        "softmax": np.array([[0.5, 0.5, 0], [0, 0, 1]], dtype=np.float32),
        "log_softmax": np.array([[-np.log(2), -np.log(2), -np.inf], [-2000, -1000, 0]],
                                dtype=np.float32)}
    for name, values in expected.items():
        function = getattr(jnp, name)
        assert_same(function(x, axis=1), values, rtol=1e-6, atol=1e-30, zero_sign=False,
                    what=f"{name} eagerly")
        assert_same(run_traced(lambda x: function(x, axis=1), x), values, rtol=1e-6,
                    atol=1e-30, zero_sign=False, what=f"{name} traced")
    all_masked = np.full((2,), -np.inf)
    assert run_traced(lambda x: jnp.logsumexp(x), all_masked) == -np.inf


# --- shapes -------------------------------------------------------------------------------

@given_per_backend(data=st.data())
def test_reshape_and_ravel(data):
    x = any_array(data)
    check("ravel", [x])
    # The same elements in another shape, with or without one -1, or a shape that does
    # not fit (NumPy's ValueError).
    candidates = [(-1,), x.shape[::-1], x.shape[:1] + (-1,)]
    shape = data.draw(st.sampled_from(candidates) | shapes(max_dims=2).map(
        lambda s: s + (-1,)) | shapes(max_dims=2), label="new shape")
    check("reshape", [x], {"shape": shape})


@given_per_backend(data=st.data())
def test_transpose_swapaxes_moveaxis(data):
    x = any_array(data)
    axes = data.draw(st.none() | st.permutations(range(x.ndim)).map(
        lambda p: tuple(a - x.ndim if a % 2 else a for a in p)), label="axes")
    check("transpose", [x], {"axes": axes})
    if x.ndim:
        axis = st.integers(-x.ndim, x.ndim - 1)
        check("swapaxes", [x], {"axis1": data.draw(axis), "axis2": data.draw(axis)})
        count = data.draw(st.integers(1, x.ndim), label="moved")
        source = data.draw(st.lists(axis, min_size=count, max_size=count), label="source")
        dest = data.draw(st.lists(axis, min_size=count, max_size=count), label="dest")
        if count == 1 and data.draw(st.booleans()):
            source, dest = source[0], dest[0]
        check("moveaxis", [x], {"source": source, "destination": dest})


@given_per_backend(data=st.data())
def test_squeeze_and_expand_dims(data):
    x = any_array(data, data.draw(shapes(max_side=2), label="shape"))
    check("squeeze", [x], {"axis": axis_argument(data, x.ndim)})
    axes = st.integers(-x.ndim - 1, x.ndim)
    axis = data.draw(axes | st.lists(st.integers(-x.ndim - 2, x.ndim + 1), max_size=2)
                     .map(tuple), label="new axes")
    check("expand_dims", [x], {"axis": axis})


@given_per_backend(data=st.data())
def test_broadcast_to(data):
    x = any_array(data)
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    shape = tuple(lead) + tuple(data.draw(st.integers(0, 3)) if d == 1 else d
                                for d in x.shape)
    check("broadcast_to", [x], {"shape": data.draw(st.sampled_from([shape, shape[::-1]]))})


@pytest.mark.parametrize("name", ["concatenate", "stack"])
@given_per_backend(data=st.data())
def test_concatenate_and_stack(name, data):
    shape = data.draw(shapes(min_dims=1 if name == "concatenate" else 0), label="shape")
    ndim = len(shape) + (name == "stack")
    axis = data.draw(st.integers(-ndim, ndim - 1) |
                     (st.none() if name == "concatenate" else st.nothing()), label="axis")
    xs = []
    for _ in range(data.draw(st.integers(1, 3), label="count")):
        own = shape
        if name == "concatenate" and axis is not None:
            own = shape[:axis % ndim] + (data.draw(st.integers(0, 3)),) + \
                shape[axis % ndim + 1:]
        xs.append(any_array(data, own))

    def reference(*xs, axis):
        return getattr(np, name)(xs, axis=axis)

    def jnp_function(*xs, axis):
        return getattr(jnp, name)(list(xs), axis=axis)
    expected, error = numpy_outcome(reference, *xs, axis=axis)
    if error is not None:
        with pytest.raises(error_kinds(error)):
            run_traced(lambda *xs: jnp_function(*xs, axis=axis), *xs)
        return
    assert_same(jnp_function(*xs, axis=axis), expected, what=f"{name} eagerly")
    assert_same(run_traced(lambda *xs: jnp_function(*xs, axis=axis), *xs), expected,
                what=f"{name} traced")


@given_per_backend(data=st.data())
def test_pad(data):
    x = any_array(data, data.draw(shapes(min_dims=1), label="shape"))
    widths = data.draw(st.one_of(
        st.integers(0, 2),
        st.tuples(st.integers(0, 2), st.integers(0, 2)),
        st.tuples(*[st.tuples(st.integers(0, 2), st.integers(0, 2)) for _ in x.shape])),
        label="pad_width")
    value = data.draw(arrays(x.dtype, ()), label="constant_values").item()
    check("pad", [x], {"pad_width": widths, "constant_values": value})


@given_per_backend(data=st.data())
def test_take(data):
    x = any_array(data, data.draw(shapes(min_dims=1, min_side=1), label="shape"))
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1), label="axis")
    length = x.size if axis is None else x.shape[axis]
    indices = data.draw(hnp.arrays(np.int64, shapes(max_dims=2, max_side=3),
                                   elements=st.integers(-length, length - 1)))
    if data.draw(st.booleans(), label="indices as a list"):
        indices = indices.tolist()
        check("take", [x], {"indices": indices, "axis": axis})
    else:
        check("take", [x, indices], {"axis": axis})


@pytest.mark.parametrize("shape, indices, axis", [((0, 0), 0, 1), ((0, 2), [5, -9], 1),
                                                  ((2, 0, 3), [[7]], 2)])
def test_take_from_nothing_checks_no_index(shape, indices, axis, backend):
    # With no element before the axis NumPy takes nothing and checks no index.
    x = np.zeros(shape, np.float32)
    expected = np.take(x, indices, axis=axis)
    assert_same(jnp.take(x, indices, axis=axis), expected)
    assert_same(run_traced(lambda x: jnp.take(x, indices, axis=axis), x), expected)


# --- contractions -------------------------------------------------------------------------

# NumPy hands float contractions to BLAS, whose NaN, inf and signed-zero results depend
# on the path it takes (np.dot(nan, False) is 0.0 by BLAS scal, NaN by np.multiply):
# contractions are compared on finite values, zero signs unchecked.

def contraction_operands(data, shape_x, shape_y):
    return (moderate_array(data, shape_x, special=False),
            moderate_array(data, shape_y, special=False))


def _contraction_atol(x, y, k):
    dtype = np.result_type(x, y)
    return k * _eps(dtype) * _scale(x) * _scale(y) * 4


@given_per_backend(data=st.data())
def test_matmul(data):
    (batch_x, batch_y) = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=2, max_side=3), label="batch shapes").input_shapes
    n, k, m = (data.draw(st.integers(0, 3), label=name) for name in "nkm")
    shape_x = data.draw(st.sampled_from([batch_x + (n, k), (k,)]), label="shape x")
    shape_y = data.draw(st.sampled_from([batch_y + (k, m), (k,)]), label="shape y")
    x, y = contraction_operands(data, shape_x, shape_y)
    check("matmul", [x, y], atol=_contraction_atol(x, y, k), zero_sign=False)


@pytest.mark.parametrize("name", ["dot", "inner", "outer"])
@given_per_backend(data=st.data())
def test_dot_inner_outer(name, data):
    k = data.draw(st.integers(0, 3), label="k")
    shape_x = data.draw(shapes(max_dims=3), label="shape x")
    shape_x = shape_x[:-1] + (k,) if shape_x else shape_x
    shape_y = data.draw(shapes(max_dims=3), label="shape y")
    if name == "dot" and len(shape_y) >= 2:
        shape_y = shape_y[:-2] + (k, shape_y[-1])
    elif shape_y:
        shape_y = shape_y[:-1] + (k,)
    x, y = contraction_operands(data, shape_x, shape_y)
    check(name, [x, y], atol=_contraction_atol(x, y, max(k, 1)), zero_sign=False)


@given_per_backend(data=st.data())
def test_tensordot(data):
    shared = data.draw(st.lists(st.integers(0, 3), max_size=2), label="shared sizes")
    free_x = data.draw(shapes(max_dims=2), label="free x")
    free_y = data.draw(shapes(max_dims=2), label="free y")
    x = moderate_array(data, free_x + tuple(shared), special=False)
    if data.draw(st.booleans(), label="integer axes"):
        y = moderate_array(data, tuple(shared) + free_y, special=False)
        axes = len(shared)
    else:  # the shared axes at shuffled positions of y, named by (negative) axes
        order = data.draw(st.permutations(range(len(shared) + len(free_y))))
        dims = list(shared) + list(free_y)
        y = moderate_array(data, tuple(dims[i] for i in order), special=False)
        axes_y = [order.index(i) for i in range(len(shared))]
        axes = (list(range(len(free_x), x.ndim)), [a - y.ndim if a % 2 else a
                                                   for a in axes_y])
    check("tensordot", [x, y], {"axes": axes},
          atol=_contraction_atol(x, y, max(math.prod(shared), 1)), zero_sign=False)


# --- creation -----------------------------------------------------------------------------

def _creation(name, *args, **kwargs):
    """A creation function eagerly and inside a traced function, against NumPy."""
    expected, error = numpy_outcome(getattr(np, name), *args, **kwargs)
    function = getattr(jnp, name)
    if error is not None:
        with pytest.raises(error_kinds(error)):
            function(*args, **kwargs)
        with pytest.raises(error_kinds(error)):
            run_traced(lambda: function(*args, **kwargs))
        return
    assert_same(function(*args, **kwargs), expected, what=f"{name} eagerly")
    assert_same(run_traced(lambda: function(*args, **kwargs)), expected,
                what=f"{name} traced")


numbers = st.integers(-5, 5) | st.floats(-5, 5).map(lambda v: round(v, 2))


@given_per_backend(start=numbers, stop=numbers | st.none(), step=numbers,
                   dtype=st.none() | st.sampled_from(CORE_DTYPES))
def test_arange(start, stop, step, dtype):
    if step == 0:
        with pytest.raises(ZeroDivisionError):
            jnp.arange(start, stop, step)
        return
    _creation("arange", start, stop, step, dtype=dtype)


@given_per_backend(start=numbers, stop=numbers, num=st.integers(-1, 6),
                   endpoint=st.booleans(), dtype=st.none() | st.sampled_from(CORE_DTYPES))
def test_linspace(start, stop, num, endpoint, dtype):
    _creation("linspace", start, stop, num, endpoint=endpoint, dtype=dtype)


@given_per_backend(shape=shapes() | st.integers(0, 3),
                   fill=st.integers(-3, 3) | st.floats(-3, 3) | st.booleans(),
                   dtype=st.none() | st.sampled_from(DTYPES))
def test_full_zeros_ones(shape, fill, dtype):
    _creation("full", shape, fill, dtype=dtype)
    _creation("zeros", shape, **({"dtype": dtype} if dtype else {}))
    _creation("ones", shape, **({"dtype": dtype} if dtype else {}))


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "full_like"])
@given_per_backend(data=st.data())
def test_like(name, data):
    x = any_array(data, dtypes=CORE_DTYPES)
    # (negative fills into unsigned dtypes are casts NumPy leaves undefined)
    kwargs = {"dtype": data.draw(st.none() | st.sampled_from(CORE_DTYPES), label="dtype")}
    if data.draw(st.booleans(), label="with shape"):
        kwargs["shape"] = data.draw(shapes(), label="shape=")
    if name == "full_like":
        kwargs["fill_value"] = data.draw(st.integers(-3, 3) | st.floats(-3, 3))
    check(name, [x], kwargs)


# --- NumPy's own functions on traced values -----------------------------------------------

def test_numpy_functions_on_traced_values():
    x = np.array([[-1.5, 0.0, 2.0], [3.0, -0.0, np.nan]], dtype=np.float32)
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)

    def exp(x):  # transcendental: native code may round it differently (fidelity.py)
        return np.exp(x)
    cases = [
        exp,
        lambda x: np.sum(x, axis=0),
        lambda x: np.concatenate([x, x]),
        lambda x: np.where(x > 0, x, 0),
        lambda x: np.add.reduce(x),
        lambda x: np.maximum.reduce(x, axis=1),
        lambda x: a + x,                     # ndarray + tracer: NumPy defers to the tracer
        lambda x: a * x - np.float32(1),
        lambda x: np.float32(2) * x,         # NumPy scalar * tracer
        lambda x: np.mean(x, axis=1, keepdims=True),
        lambda x: np.transpose(x),
        lambda x: np.stack([x, x], axis=-1),
        lambda x: np.matmul(x, a),
        lambda x: np.clip(x, -1, 1),
        lambda x: np.reshape(x, -1),
    ]
    for case in cases:
        with np.errstate(all="ignore"):
            expected = case(x)
        assert_same(run_traced(case, x), expected,
                    **native_tolerance({}, transcendental=case is exp))


def test_unsupported_numpy_function_on_traced_value_names_it():
    x = np.eye(2)
    with pytest.raises(TypeError, match="numpy.nanpercentile of complex values"):
        run_traced(lambda x: np.nanpercentile(x[0] * 1j, 5), x)
    with pytest.raises(TypeError, match="numpy.isnat"):
        run_traced(lambda x: np.isnat(x), x)
    with pytest.raises(TypeError, match="numpy.maximum.accumulate"):
        run_traced(lambda x: np.maximum.accumulate(x), x)


def test_clip_ignores_python_int_bounds_past_the_dtype_on_the_harmless_side(backend):
    a = np.arange(3, dtype=np.int32)
    for low, high in [(0, 2**40), (-2**40, 1), (-2**40, 2**40)]:
        expected = np.clip(a, low, high)
        assert_same(run_traced(lambda a: np.clip(a, low, high), a), expected)
    with pytest.raises(OverflowError, match="int32"):
        run_traced(lambda a: np.clip(a, 2**40, 5), a)


@pytest.mark.parametrize("low, high", [(0, 2**40), (-2**40, 1), (-2**31 - 1, 2**31),
                                       (2**40, 5), (0, -2**40), (-1, None), (None, 2**33)])
def test_clip_by_python_int_arguments_past_the_dtype(low, high, backend):
    # Passed in, the ints are known only at run time: a bound past the harmless end is
    # still ignored (it raised OverflowError), one past the other end raises.
    a = np.arange(-3, 4, dtype=np.int32).reshape(7, 1).repeat(9, axis=1)
    expected, error = numpy_outcome(np.clip, a, low, high)
    compiled = jitflow.function(lambda a, low, high: np.clip(a, low, high))
    if error is not None:
        with pytest.raises(OverflowError, match="int32"):
            compiled(a, low, high)
    else:
        assert_same(compiled(a, low, high), expected)


@pytest.mark.parametrize("bound", [2**31, 2**40, 200, 127, 126, -5])
def test_clip_ignores_a_python_int_bound_that_a_wider_other_bound_would_pass(bound, backend):
    # NumPy drops a Python int at or past the end of the array's own dtype (int8 here),
    # even where the other bound widens the result (int32: 128 is above int8's end)
    a = np.array([0, 100, -100], np.int8)
    low = np.array(128, np.int32)
    expected = np.clip(a, low, bound)
    assert_same(run_traced(lambda a, low: np.clip(a, low, bound), a, low), expected,
                what="a constant bound")
    passed_in = jitflow.function(lambda a, low, high: np.clip(a, low, high))
    assert_same(passed_in(a, low, bound), expected, what="a bound passed in")
    upside_down = jitflow.function(lambda a, high, low: np.clip(a, low, high))
    expected = np.clip(a, -bound, np.array(-200, np.int32))
    assert_same(upside_down(a, np.array(-200, np.int32), -bound), expected,
                what="a lower bound passed in")


@pytest.mark.parametrize("low, high", [(2**31, -0.0), (-2**31 - 1, 3.5), (-0.5, 2**31),
                                       (-0.5, 4), (np.float32(-0.5), 2**40)])
def test_clip_of_ints_by_a_python_int_passed_in_and_a_float(low, high, backend):
    # the clip is computed in floats: an ignored int bound becomes an infinite one (it
    # failed to trace, looking for the end of a float dtype; found by the program fuzzer)
    a = np.array([0, 7, -9], np.int32)
    compiled = jitflow.function(lambda a, low, high: np.clip(a, low, high))
    assert_same(compiled(a, low, high), np.clip(a, low, high))


@pytest.mark.parametrize("value, error", [(np.inf, OverflowError), (np.nan, ValueError)])
def test_pad_values_that_do_not_fit_the_dtype_raise_at_trace_time(value, error):
    with pytest.raises(error, match="test_numpy.py"):
        jitflow.function(lambda a: np.pad(a, 1, constant_values=value))(np.arange(3))


def test_broadcast_to_its_own_shape_makes_a_python_number_an_array(backend):
    # a weak Python int would overflow int32 where NumPy's int64 array promotes
    f = jitflow.function(lambda x, y: jnp.broadcast_to(y, ()) + x)
    expected = np.broadcast_to(2**31, ()) + np.int32(0)
    assert_same(f(np.int32(0), 2**31), expected, what="int32 + broadcast_to(2**31, ())")
