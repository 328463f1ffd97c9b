"""Every registered primitive against NumPy, from one table.

For each primitive, hypothesis draws operands (0-d, size-0 and size-1 axes, broadcasting
pairs, all five dtypes, NaN/inf/-0.0, Python scalars) and static parameters, and checks:

  (a) the type rule predicts the dtype and shape of NumPy's eager result, or raises the
      kind of error NumPy raises (TypeError too where NumPy's result dtype is one jitflow
      does not support, such as float16 for exp of bool);
  (b) the primitive run eagerly, and traced by jitflow.function and run, gives NumPy's
      values and dtype, whether its operands are function arguments or constants;
  (c) Python scalars are weakly typed (NEP 50): float32 array + 2.0 is float32.

A primitive missing from CASES fails the test, so new primitives cannot be forgotten.
"""
import contextlib
import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
from jitflow.ir.primitive import REGISTRY
from jitflow.ir.types import SUPPORTED_DTYPES, type_of_value
from jitflow.trace import bind

from fidelity import (assert_same, error_kinds, given_per_backend, native_tolerance,
                      numpy_outcome, run_traced, ulps)
from strategies import DTYPES, arrays, broadcastable_pair, shapes


# Traced graphs run on the interpreter and on native code (conftest.py).
pytestmark = pytest.mark.usefixtures("backend")


@dataclass
class Case:
    """How to test one primitive.

    draw(data) -> (operands, params); reference(*operands, **params) is NumPy's own
    computation. Exact comparison unless `ulps` (relative, in units of the result's
    epsilon) or `atol(operands, params)` is given. `ulps` marks the transcendental
    functions, which native code may round up to NATIVE_ULPS differently (fidelity.py).
    """
    draw: Callable
    reference: Callable
    ulps: int = 0
    atol: Optional[Callable] = None
    zero_sign: bool = True
    fix: Callable = field(default=lambda *operands: operands)


# --- operands -----------------------------------------------------------------------------

SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, math.nan, math.inf, -math.inf]

# Python scalars, weakly typed under NEP 50 (bool is not weak, but is a Python scalar
# NumPy accepts, so it is drawn too). Ints stay small: NumPy raises OverflowError for a
# Python int that does not fit the array's dtype, which depends on the value, not the type.
python_scalars = st.one_of(
    st.booleans(), st.sampled_from([0, 1, -1, 2]), st.integers(-2**15, 2**15),
    st.sampled_from(SPECIAL_FLOATS), st.floats(allow_subnormal=False))


def operand(data, shape, scalars=True):
    """An array of `shape` and any dtype, or (for 0-d) sometimes a Python scalar."""
    if scalars and shape == () and data.draw(st.booleans(), label="python scalar"):
        return data.draw(python_scalars, label="scalar")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    if data.draw(st.integers(0, 4), label="uniform") == 0:
        # One value everywhere, often 0, -0.0, 1, -1 or 2: what algebraic simplification
        # looks for (x * 1 -> x, -0.0 - y -> -y, x ** 2 -> x * x, ...).
        values = SPECIAL_FLOATS if dtype.kind == "f" else [0, 1, -1, 2]
        value = data.draw(st.sampled_from(values), label="value")
        return np.full(shape, value).astype(dtype)
    return data.draw(arrays(dtype, shape), label="array")


def _kind(x):
    return np.asarray(x).dtype.kind


def _replace(x, mask, value):
    """x with `value` where mask holds; a Python scalar stays a Python scalar."""
    if isinstance(x, np.ndarray):
        return np.where(mask, np.asarray(value, x.dtype), x)
    return type(x)(value) if mask else x


# --- elementwise --------------------------------------------------------------------------

def elementwise(ufunc, nin, **options):
    def draw(data):
        if nin == 1:
            shape_list = [data.draw(shapes(), label="shape")]
        elif nin == 2:
            shape_list = list(data.draw(broadcastable_pair(), label="shapes"))
        else:
            shape_list = list(data.draw(hnp.mutually_broadcastable_shapes(
                num_shapes=nin, max_dims=3, max_side=4), label="shapes").input_shapes)
        # A scalar stands in for a 0-d operand, or for any operand: it broadcasts.
        return [operand(data, () if data.draw(st.integers(0, 4)) == 0 else shape)
                for shape in shape_list], {}
    return Case(draw, ufunc, **options)


def _int_division_fix(x, y):
    """Integer division by zero warns and gives 0 in NumPy, and MIN // -1 overflows:
    NumPy's own results there are an artifact, not a contract. Keep away from both."""
    if _kind(x) in "bi" and _kind(y) in "bi":
        y = _replace(y, np.equal(y, 0), 1)
        if isinstance(x, np.ndarray) and x.dtype.kind == "i":
            x = _replace(x, x == np.iinfo(x.dtype).min, 0)
    return x, y


def _int_power_fix(x, y):
    """NumPy raises for integers to negative integer powers: draw exponents >= 0."""
    if _kind(x) in "biu" and _kind(y) in "biu":
        y = _replace(y, np.less(y, 0), 0)
    return x, y


def _bool_as_float32(x):
    """signbit's primitive takes no bool (NumPy's loop for it is float16's)."""
    return (np.asarray(x).astype(np.float32) if np.asarray(x).dtype == np.bool_ else x,)


def _logistic_reference(x):
    """1 / (1 + exp(-x)) in the dtype NumPy gives exp(x)."""
    dtype = np.exp(x).dtype
    x = np.asarray(x).astype(dtype)
    return (1 / (1 + np.exp(-x))).astype(dtype)[()]


def _tiny(operands, params):
    """The smallest normal float: tolerance for results that underflow to subnormals."""
    return float(np.finfo(np.float32).tiny)


CASES = {
    "neg": elementwise(np.negative, 1),
    "abs": elementwise(np.absolute, 1),
    "sign": elementwise(np.sign, 1),
    "exp": elementwise(np.exp, 1, ulps=4),
    "log": elementwise(np.log, 1, ulps=4),
    "log1p": elementwise(np.log1p, 1, ulps=4),
    "expm1": elementwise(np.expm1, 1, ulps=4),
    "sqrt": elementwise(np.sqrt, 1),  # correctly rounded in IEEE 754
    "sin": elementwise(np.sin, 1, ulps=4),
    "cos": elementwise(np.cos, 1, ulps=4),
    "tan": elementwise(np.tan, 1, ulps=4),
    "tanh": elementwise(np.tanh, 1, ulps=4),
    "arctan": elementwise(np.arctan, 1, ulps=4),
    "arcsin": elementwise(np.arcsin, 1, ulps=4),
    "arccos": elementwise(np.arccos, 1, ulps=4),
    "arctan2": elementwise(np.arctan2, 2, ulps=4),
    "left_shift": elementwise(np.left_shift, 2),
    "right_shift": elementwise(np.right_shift, 2),
    "ldexp": elementwise(np.ldexp, 2),
    "cbrt": elementwise(np.cbrt, 1, ulps=4),
    "nextafter": elementwise(np.nextafter, 2),
    "floor": elementwise(np.floor, 1),
    "ceil": elementwise(np.ceil, 1),
    "isnan": elementwise(np.isnan, 1),
    "isinf": elementwise(np.isinf, 1),
    "logical_not": elementwise(np.logical_not, 1),
    "invert": elementwise(np.invert, 1),
    "logistic": elementwise(_logistic_reference, 1, ulps=8, atol=_tiny),
    "add": elementwise(np.add, 2),
    "sub": elementwise(np.subtract, 2),
    "mul": elementwise(np.multiply, 2),
    "div": elementwise(np.true_divide, 2),
    "floor_divide": elementwise(np.floor_divide, 2, fix=_int_division_fix),
    "mod": elementwise(np.remainder, 2, fix=_int_division_fix),
    "pow": elementwise(np.power, 2, ulps=4, fix=_int_power_fix),
    "max": elementwise(np.maximum, 2),
    "min": elementwise(np.minimum, 2),
    "eq": elementwise(np.equal, 2),
    "ne": elementwise(np.not_equal, 2),
    "lt": elementwise(np.less, 2),
    "le": elementwise(np.less_equal, 2),
    "gt": elementwise(np.greater, 2),
    "ge": elementwise(np.greater_equal, 2),
    "logical_and": elementwise(np.logical_and, 2),
    "logical_or": elementwise(np.logical_or, 2),
    "logical_xor": elementwise(np.logical_xor, 2),
    "bitwise_and": elementwise(np.bitwise_and, 2),
    "bitwise_or": elementwise(np.bitwise_or, 2),
    "bitwise_xor": elementwise(np.bitwise_xor, 2),
    "fmod": elementwise(np.fmod, 2),
    "copysign": elementwise(np.copysign, 2),
    "signbit": elementwise(np.signbit, 1, fix=_bool_as_float32),
}


def _where_draw(data):
    cond_shape, x_shape, y_shape = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=3, max_dims=3, max_side=4), label="shapes").input_shapes
    cond = data.draw(arrays(np.bool_, cond_shape), label="cond")
    return [cond, operand(data, x_shape), operand(data, y_shape)], {}


CASES["where"] = Case(_where_draw, np.where)


def _cast_draw(data):
    x = operand(data, data.draw(shapes(), label="shape"))
    dtype = data.draw(st.sampled_from(DTYPES), label="to")
    if _kind(x) == "f" and dtype.kind == "i":
        # Casting NaN, inf or an out-of-range float to an integer is undefined in C and
        # platform-dependent in NumPy: keep to values that fit.
        x = _replace(x, ~(np.abs(x) < 2.0**30), 1.0)
    return [x], {"dtype": dtype}


CASES["cast"] = Case(_cast_draw, lambda x, *, dtype: np.asarray(x).astype(dtype))
CASES["stop_gradient"] = elementwise(lambda x: np.array(x, copy=True), 1)


# --- reductions ---------------------------------------------------------------------------

def _reduction_draw(data):
    x = operand(data, data.draw(shapes(), label="shape"), scalars=False)
    axes = data.draw(st.lists(st.integers(0, max(x.ndim - 1, 0)), max_size=x.ndim,
                              unique=True), label="axes") if x.ndim else []
    return [x], {"axes": tuple(sorted(axes)), "keepdims": data.draw(st.booleans())}


def _reduction(fn):
    return lambda x, *, axes, keepdims: fn(x, axis=axes, keepdims=keepdims)


def _reduction_atol(reduce, floor=False):
    """Reduction order is NumPy's business (pairwise, by blocks): allow n roundings of
    the reduction of magnitudes (plus the smallest normal with `floor`: products
    underflow)."""
    def atol(operands, params):
        x = np.asarray(operands[0])
        if x.dtype.kind != "f":
            return 0.0
        count = math.prod(x.shape[a] for a in params["axes"])
        magnitude = reduce(np.abs(x.astype(np.float64)), axis=params["axes"],
                           keepdims=params["keepdims"])
        eps = float(np.finfo(x.dtype).eps)
        return count * eps * np.nan_to_num(magnitude, posinf=0) + \
            (float(np.finfo(x.dtype).tiny) if floor else 0.0)
    return atol


_sum_atol = _reduction_atol(np.sum)
_prod_atol = _reduction_atol(np.prod, floor=True)


CASES["reduce_sum"] = Case(_reduction_draw, _reduction(np.sum), atol=_sum_atol)
CASES["reduce_prod"] = Case(_reduction_draw, _reduction(np.prod), atol=_prod_atol)
# Which of 0.0 and -0.0 a max returns depends on the order NumPy visits them.
CASES["reduce_max"] = Case(_reduction_draw, _reduction(np.max), zero_sign=False)
CASES["reduce_min"] = Case(_reduction_draw, _reduction(np.min), zero_sign=False)


def _arg_reduction_draw(data):
    x = operand(data, data.draw(shapes(), label="shape"), scalars=False)
    axis = data.draw(st.one_of(st.none(), st.integers(0, x.ndim - 1)) if x.ndim
                     else st.none(), label="axis")
    return [x], {"axis": axis, "keepdims": data.draw(st.booleans())}


def _arg_reduction(fn):
    return lambda x, *, axis, keepdims: fn(x, axis=axis, keepdims=keepdims)


CASES["argmax"] = Case(_arg_reduction_draw, _arg_reduction(np.argmax))
CASES["argmin"] = Case(_arg_reduction_draw, _arg_reduction(np.argmin))


def _cumsum_draw(data):
    x = operand(data, data.draw(shapes(min_dims=1), label="shape"), scalars=False)
    return [x], {"axis": data.draw(st.integers(0, x.ndim - 1), label="axis")}


CASES["cumsum"] = Case(_cumsum_draw, lambda x, *, axis: np.cumsum(x, axis=axis))
CASES["cumprod"] = Case(_cumsum_draw, lambda x, *, axis: np.cumprod(x, axis=axis))
# Ties (-0.0 and 0.0, NaNs) keep their order: NumPy's stable sort, to the bit.
CASES["sort"] = Case(_cumsum_draw, lambda x, *, axis: np.sort(x, axis=axis, kind="stable"))
CASES["argsort"] = Case(_cumsum_draw,
                        lambda x, *, axis: np.argsort(x, axis=axis, kind="stable"))


# --- shapes -------------------------------------------------------------------------------

@st.composite
def _same_size_shape(draw, size):
    """A shape of `size` elements: its prime factors (or a 0) spread over some axes."""
    factors, n, p = [], size, 2
    while n > 1 and p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    factors += [n] if n > 1 else []
    ndim = draw(st.integers(1 if size == 0 else 0, 4))
    if ndim == 0:
        ndim = 1 if factors else 0
    dims = [1] * ndim
    for factor in factors:
        dims[draw(st.integers(0, ndim - 1))] *= factor
    if size == 0:
        dims[draw(st.integers(0, ndim - 1))] = 0
        dims = [d if d == 0 or draw(st.booleans()) else draw(st.integers(0, 3))
                for d in dims]
    return tuple(dims)


def _reshape_draw(data):
    x = operand(data, data.draw(shapes(), label="shape"), scalars=False)
    shape = data.draw(st.one_of(_same_size_shape(x.size), shapes()), label="new shape")
    return [x], {"shape": shape}


CASES["reshape"] = Case(_reshape_draw, lambda x, *, shape: np.reshape(x, shape))


def _broadcast_draw(data):
    x = operand(data, data.draw(shapes(), label="shape"), scalars=False)
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2), label="leading axes")
    dims = [data.draw(st.integers(0, 3)) if d == 1 else d for d in x.shape]
    if data.draw(st.integers(0, 9)) == 0:  # sometimes a shape x does not broadcast to
        dims = [data.draw(st.integers(0, 4)) for _ in dims]
    return [x], {"shape": tuple(lead + dims)}


CASES["broadcast_to"] = Case(_broadcast_draw,
                             lambda x, *, shape: np.broadcast_to(x, shape))


def _transpose_draw(data):
    x = operand(data, data.draw(shapes(), label="shape"), scalars=False)
    perm = data.draw(st.permutations(range(x.ndim)), label="perm")
    return [x], {"perm": tuple(perm)}


CASES["transpose"] = Case(_transpose_draw, lambda x, *, perm: np.transpose(x, perm))


def _slice_draw(data):
    x = operand(data, data.draw(shapes(), label="shape"), scalars=False)
    starts, steps, sizes = [], [], []
    for dim in x.shape:
        step = data.draw(st.sampled_from([1, 2, 3, -1, -2]), label="step")
        start = data.draw(st.integers(0, dim - 1), label="start") if dim else 0
        room = 0 if not dim else ((dim - 1 - start) // step if step > 0
                                  else start // -step) + 1
        starts.append(start)
        steps.append(step)
        sizes.append(data.draw(st.integers(0, room), label="size"))
    return [x], {"starts": tuple(starts), "steps": tuple(steps), "sizes": tuple(sizes)}


def _slice_reference(x, *, starts, steps, sizes):
    """The elements start, start + step, ... on every axis, by explicit positions."""
    positions = [start + step * np.arange(size, dtype=np.int64)
                 for start, step, size in zip(starts, steps, sizes)]
    return x[np.ix_(*positions)] if positions else x.copy()


CASES["slice"] = Case(_slice_draw, _slice_reference)


def _gather_draw(data):
    x = operand(data, data.draw(shapes(min_dims=1), label="shape"), scalars=False)
    axis = data.draw(st.integers(0, x.ndim - 1), label="axis")
    count = data.draw(st.integers(1, x.ndim - axis), label="index count")
    index_shapes = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=count, max_dims=2, max_side=3), label="index shapes").input_shapes
    dims = x.shape[axis:axis + count]
    if 0 in dims:  # nothing can be taken from an empty axis: no positions at all
        index_shapes = [(0,)] * count
    indices = []
    for dim, shape in zip(dims, index_shapes):
        dtype = data.draw(st.sampled_from([np.int32, np.int64]), label="index dtype")
        index = data.draw(hnp.arrays(dtype, shape, elements=st.integers(
            -max(dim, 1), max(dim, 1) - 1)), label="index")
        if shape == () and data.draw(st.booleans(), label="python int index"):
            index = int(index)
        indices.append(index)
    return [x, *indices], {"axis": axis}


CASES["gather"] = Case(
    _gather_draw, lambda x, *indices, axis: x[(slice(None),) * axis + tuple(indices)])


def _scatter_add_draw(data):
    (x, *indices), params = _gather_draw(data)
    taken = np.asarray(x)[(slice(None),) * params["axis"] + tuple(indices)]
    updates = operand(data, taken.shape, scalars=False)
    return [updates, *indices], {"axis": params["axis"], "shape": np.shape(x)}


def _scatter_add_reference(updates, *indices, axis, shape):
    out = np.zeros(shape, updates.dtype)
    np.add.at(out, (slice(None),) * axis + tuple(indices), updates)
    return out


CASES["scatter_add"] = Case(_scatter_add_draw, _scatter_add_reference)


def _scatter_draw(data):
    (updates, *indices), params = _scatter_add_draw(data)
    x = operand(data, params["shape"], scalars=False)
    with np.errstate(all="ignore"):  # NaN or inf into ints: the caller casts
        updates = np.asarray(updates).astype(np.asarray(x).dtype)
    return [x, updates, *indices], {"axis": params["axis"],
                                    "unique": data.draw(st.booleans(), label="unique")}


def _scatter_reference(x, updates, *indices, axis, unique):
    out = np.array(x, copy=True)
    out[(slice(None),) * axis + tuple(indices)] = updates
    return out


CASES["scatter"] = Case(_scatter_draw, _scatter_reference)


def _concatenate_draw(data):
    shape = data.draw(shapes(min_dims=1), label="shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    xs = []
    for _ in range(data.draw(st.integers(1, 3), label="count")):
        own = shape[:axis] + (data.draw(st.integers(0, 3)),) + shape[axis + 1:]
        if data.draw(st.integers(0, 9)) == 0:  # sometimes shapes that do not fit
            own = data.draw(shapes(min_dims=1))
        xs.append(operand(data, own, scalars=False))
    return xs, {"axis": axis}


CASES["concatenate"] = Case(_concatenate_draw,
                            lambda *xs, axis: np.concatenate(xs, axis=axis))


def _pad_draw(data):
    x = operand(data, data.draw(shapes(), label="shape"), scalars=False)
    widths = tuple(data.draw(st.tuples(st.integers(0, 2), st.integers(0, 2)))
                   for _ in x.shape)
    # A constant of the array's own kind: NumPy converts it with the array's dtype.
    value = data.draw(arrays(x.dtype, ()), label="value").item()
    return [x], {"widths": widths, "value": value}


def _pad_reference(x, *, widths, value):
    # np.pad rejects the empty pad widths of a 0-d array; there is nothing to pad.
    return np.pad(x, widths, constant_values=value) if x.ndim else x.copy()


CASES["pad"] = Case(_pad_draw, _pad_reference)


# --- contraction --------------------------------------------------------------------------

def _matmul_draw(data):
    batch_x, batch_y = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=2, max_side=3), label="batch shapes").input_shapes
    n, k, m = (data.draw(st.integers(0, 3), label=name) for name in "nkm")
    k_y = k if data.draw(st.integers(0, 9)) else data.draw(st.integers(0, 3))
    x = operand(data, batch_x + (n, k), scalars=False)
    y = operand(data, batch_y + (k_y, m), scalars=False)
    return [x, y], {}


def _matmul_atol(operands, params):
    """BLAS chooses the summation order: allow k roundings of sum |x_i| |y_i|."""
    x, y = (np.asarray(v) for v in operands)
    dtype = np.result_type(x, y)
    if dtype.kind != "f":
        return 0.0
    magnitude = np.matmul(np.abs(x.astype(np.float64)), np.abs(y.astype(np.float64)))
    return x.shape[-1] * float(np.finfo(dtype).eps) * np.nan_to_num(magnitude, posinf=0)


CASES["matmul"] = Case(_matmul_draw, np.matmul, atol=_matmul_atol)


# --- creation -----------------------------------------------------------------------------

def _iota_draw(data):
    shape = data.draw(shapes(min_dims=1), label="shape")
    return [], {"shape": shape, "dtype": data.draw(st.sampled_from(DTYPES), label="dtype"),
                "axis": data.draw(st.integers(0, len(shape) - 1), label="axis")}


def _iota_reference(*, shape, dtype, axis):
    """NumPy's arange along `axis`, broadcast over the other axes."""
    counts = np.arange(shape[axis], dtype=dtype)
    return np.broadcast_to(np.expand_dims(counts, [i for i in range(len(shape))
                                                   if i != axis]), shape)


CASES["iota"] = Case(_iota_draw, _iota_reference)


# Primitives run for their effect, with no result to compare, each tested elsewhere.
EFFECTS = {"debug_callback": "tests/test_debug.py"}
# LAPACK's factorizations take float matrices only (jitflow.numpy.linalg converts the
# others) and round differently from NumPy's build of LAPACK; their signs of vectors
# are LAPACK's choice: compared with numpy.linalg, within tolerances, in their own file.
FACTORIZATIONS = dict.fromkeys(["solve", "slogdet", "cholesky", "eigh", "svd", "qr"],
                               "tests/test_linalg_factorizations.py")
FACTORIZATIONS["eig"] = FACTORIZATIONS["complex_solve"] = \
    "tests/complex_values/test_complex_linalg_and_sorting.py"
FACTORIZATIONS.update(dict.fromkeys(["complex_slogdet", "complex_eigh", "complex_eig"],
                                    "tests/complex_values/test_complex_decompositions.py"))
FACTORIZATIONS["complex_svd"] = "tests/complex_values/test_complex_singular_values.py"
FACTORIZATIONS.update(dict.fromkeys(["complex_cholesky", "complex_qr"],
                                    "tests/complex_values/test_complex_factorizations.py"))
# A Python function called from compiled code, whatever it computes.
CALLBACKS = {"pure_callback": "tests/test_pure_callback.py"}
# Two results, equal to NumPy's within an FFT's error bound (not elementwise roundings).
TRANSFORMS = {"dft": "tests/codegen/loops/test_fourier.py"}
# Two results, NumPy's to rounding: its complex multiply may fuse a multiply-add.
COMPLEX_PRODUCTS = {"complex_cumprod": "tests/complex_values/test_complex_statistics.py"}
COMPUTING = sorted(set(REGISTRY) - set(EFFECTS) - set(FACTORIZATIONS) - set(CALLBACKS) -
                   set(TRANSFORMS) - set(COMPLEX_PRODUCTS))


# --- the tests ----------------------------------------------------------------------------

def test_every_primitive_has_a_case():
    assert all(not REGISTRY[name].pure for name in EFFECTS)
    missing = sorted(set(COMPUTING) - set(CASES))
    stale = sorted(set(CASES) - set(REGISTRY))
    assert not missing, f"primitives without an entry in test_ops.CASES: {missing}"
    assert not stale, f"entries in test_ops.CASES for no registered primitive: {stale}"


@pytest.mark.parametrize("name", COMPUTING)
@given_per_backend(data=st.data())
def test_primitive_matches_numpy(name, data):
    assert name in CASES, f"primitive '{name}' has no entry in test_ops.CASES"
    prim, case = REGISTRY[name], CASES[name]
    operands, params = case.draw(data)
    operands = list(case.fix(*operands))
    expected, numpy_error = numpy_outcome(case.reference, *operands, **params)
    unsupported = numpy_error is None and np.asarray(expected).dtype not in SUPPORTED_DTYPES
    # (and nextafter of float16: see its type rule)
    unsupported |= name == "nextafter" and numpy_error is None and \
        np.asarray(expected).dtype == np.float16
    in_types = [type_of_value(v) for v in operands]

    # Which operands are arguments of the traced function, which constants in it.
    is_argument = [data.draw(st.booleans(), label=f"operand {i} is an argument")
                   for i in range(len(operands))]

    def traced(*arguments):
        supplied = iter(arguments)
        return bind(prim, *(next(supplied) if argument else value
                            for value, argument in zip(operands, is_argument)), **params)
    arguments = [v for v, argument in zip(operands, is_argument) if argument]

    if numpy_error is not None or unsupported:
        kinds = error_kinds(numpy_error) if numpy_error is not None else (TypeError,)
        # A Python int that the array's dtype cannot hold (NEP 50) is an error of its
        # value, not its type: the run raises it, the type rule cannot.
        of_value = isinstance(numpy_error, OverflowError) and "Python integer" in \
            str(numpy_error)
        with pytest.raises(kinds) if not of_value else contextlib.nullcontext():  # (a)
            prim.infer_types(*in_types, **params)
        with pytest.raises(kinds):                                    # (b)
            run_traced(traced, *arguments)
        return

    (out_type,) = prim.infer_types(*in_types, **params)               # (a)
    expected = np.asarray(expected)
    assert (out_type.dtype, out_type.shape) == (expected.dtype, expected.shape), \
        f"{name}: type rule gives {out_type}, NumPy gives {expected.dtype}{expected.shape}"

    tolerance = {"rtol": ulps(expected.dtype, case.ulps) if case.ulps else 0.0,
                 "atol": case.atol(operands, params) if case.atol else 0.0,
                 "zero_sign": case.zero_sign}
    with np.errstate(all="ignore"):  # NumPy warns eagerly, as NumPy itself does
        eager = bind(prim, *operands, **params)                       # (b), (c)
    assert_same(eager, expected, what=f"{name} eagerly", **tolerance)
    result = run_traced(traced, *arguments)
    assert_same(result, expected, what=f"{name} traced",
                **native_tolerance(tolerance, transcendental=case.ulps > 0))


# --- NEP 50: Python scalars take the array's dtype ----------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
@pytest.mark.parametrize("scalar", [2, 2.0, 1.5, True])
@pytest.mark.parametrize("name", ["add", "mul", "sub", "div", "pow", "max", "lt"])
def test_python_scalars_are_weak(name, scalar, dtype):
    x = np.arange(1, 4).astype(dtype)
    prim = REGISTRY[name]
    ufunc = CASES[name].reference
    for args in ((x, scalar), (scalar, x)):
        expected, error = numpy_outcome(ufunc, *args)
        if error is not None or expected.dtype not in SUPPORTED_DTYPES:
            with pytest.raises(error_kinds(error) if error else TypeError):
                run_traced(lambda a, b: bind(prim, a, b), *args)
            continue
        as_argument = run_traced(lambda a, b: bind(prim, a, b), *args)
        as_constant = run_traced(lambda a: bind(prim, a, scalar) if args[1] is scalar
                                 else bind(prim, scalar, a), x)
        # Exact on native code, but for pow's rounding (fidelity.py).
        tolerance = native_tolerance({}, transcendental=name == "pow") \
            if jitflow.config.backend == "native" else {"rtol": ulps(expected.dtype, 4)}
        assert_same(as_argument, expected, **tolerance)
        assert_same(as_constant, expected, **tolerance)


# NEP 50 by value: NumPy converts a Python int to the loop's dtype. It raises OverflowError
# when the int does not fit an int32 loop, compares exactly (int32 x < 2**40 is True),
# divides in float64, and converts it to float32 as Python does (through float64: the
# last one rounds twice, to 2**60). As a traced argument the int is known only at run time.
@pytest.mark.parametrize("scalar", [2**31, -2**31 - 1, 2**40, 2**60 + 2**36 + 1])
@pytest.mark.parametrize("name", ["add", "mul", "max", "floor_divide", "bitwise_and", "div",
                                  "lt", "eq", "ge", "logical_and"])
def test_python_ints_beyond_the_array_dtype(name, scalar):
    prim, ufunc = REGISTRY[name], CASES[name].reference
    for x in (np.array([-1, 0, 7], np.int32), np.array([-1.5, 0.0, 2.0**60], np.float32)):
        for scalar_first in (False, True):
            def operands(a, b):
                return (b, a) if scalar_first else (a, b)

            def as_argument(a, b):
                return bind(prim, *operands(a, b))

            def as_constant(a):
                return bind(prim, *operands(a, scalar))
            expected, error = numpy_outcome(ufunc, *operands(x, scalar))
            for run in (lambda: run_traced(as_argument, x, scalar),
                        lambda: run_traced(as_constant, x)):
                if error is not None:
                    with pytest.raises(error_kinds(error)):
                        run()
                else:
                    assert_same(run(), expected)
