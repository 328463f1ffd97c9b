"""How much of NumPy's public API jitflow compiles, side by side with JAX.

Lists NumPy's public entry points in four groups: the ufuncs (each once, by its
canonical name) and the ufunc methods reduce / accumulate / outer / at / reduceat; the
top-level functions of `numpy` (leaving out classes and dtypes, file and other input
and output, printing and formatting, datetime, configuration and error state, testing
helpers and deprecated names); `numpy.linalg`; `numpy.fft`. Each entry is called with
one ordinary recipe of arguments (small float64 arrays, integer arrays for integer
functions, square matrices for linalg): its arrays are the compiled function's inputs,
everything else (shapes, axes, dtypes, callables) is closed over.

An entry counts as compiled by jitflow when `jitflow.function(lambda *a: np.name(*a,
...))` returns NumPy's own result: the same structure, shapes and dtypes, and values to
rtol 1e-6 (floats, NaN equal to NaN; atol 1e-9 of the largest value, for results that
cancel to zero) or exactly (integers, bools). Plain `np.name` is
what users write; `jitflow.numpy.name` is called instead where NumPy's signature lacks
the keyword a traced call needs (`size=` with the true size for nonzero, unique, ...;
`length=`, `strip_zeros=False`, `trim_leading_zeros=False`), and where np.name fails
but NumPy does not dispatch it to jitflow at all (np.asarray); the table says how many
compiled through plain np. JAX is measured the same way with `jax.jit` of
`jax.numpy.name` (64-bit mode on); for JAX only the values must match, and dtype
differences are listed apart. Answers that are dtypes, types or strings (result_type,
typename, einsum_path), which no compiled function can return, are taken while the
function is traced. Results defined up to an order or a sign (eig, eigh, svd, roots,
unique_values) are put in one order and sign before comparing. Native code is built
before the first call returns, so what is counted is what jitflow compiled, not its
interpreter.

    python benchmarks/api_coverage.py [--failures]

--failures also prints each entry jitflow fails, then each JAX fails, with the error,
one line each, grouped by kind (raises, wrong value, dtype, shape, structure).
"""
import copy
import functools
import sys
import warnings

import jax
import jax.numpy as jax_numpy
import numpy as np

import jitflow
import jitflow.numpy as jfnp

jax.config.update("jax_enable_x64", True)  # float64 and int64, as NumPy's

# The first call of a new signature would otherwise run on the interpreter while native
# code is built in the background; build first, so each call runs the compiled code.
jitflow.config.background_compile = False

# --- the entry points ---------------------------------------------------------------------

UFUNC_METHODS = ["add.reduce", "add.accumulate", "add.outer", "add.at", "add.reduceat"]

# Top-level callables left out, by why. Classes and dtypes (np.ndarray, np.float64,
# np.errstate, np.vectorize, ...) and ufuncs are left out by their type.
EXCLUDED = {
    "input and output": [
        "load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt",
        "fromfile", "fromregex", "fromstring", "frombuffer", "fromiter", "from_dlpack"],
    "printing and formatting": [
        "array2string", "array_repr", "array_str", "format_float_positional",
        "format_float_scientific", "set_printoptions", "get_printoptions",
        "printoptions", "base_repr", "binary_repr", "info"],
    "datetime": ["busday_count", "busday_offset", "is_busday", "datetime_as_string",
                 "datetime_data"],
    "configuration and error state": [
        "seterr", "geterr", "seterrcall", "geterrcall", "setbufsize", "getbufsize",
        "show_config", "show_runtime", "get_include"],
    "testing": ["test"],
    # row_stack warns DeprecationWarning; the matrix subclass PendingDeprecationWarning.
    "deprecated": ["row_stack", "asmatrix", "bmat"],
    # Python-level machinery (object-dtype ufuncs, iterators), not array computations.
    "python objects": ["frompyfunc", "nested_iters"],
}
# isnat takes datetime64 / timedelta64 values only, left out with the datetime functions.
EXCLUDED_UFUNCS = ["isnat"]


def ufunc_names():
    """Each ufunc of the numpy namespace once, by its canonical name (np.abs and
    np.absolute are one ufunc, `absolute`)."""
    names = {obj.__name__ for obj in vars(np).values() if isinstance(obj, np.ufunc)}
    return sorted(names - set(EXCLUDED_UFUNCS))


def function_names():
    """numpy's public top-level callables that are neither ufuncs nor classes, less the
    EXCLUDED ones; a function with two names (concat, concatenate) counts once, by the
    name it was defined with."""
    excluded = {name for names in EXCLUDED.values() for name in names}
    names = set()
    for name in dir(np):
        obj = getattr(np, name)
        if (name.startswith("_") or name in excluded or not callable(obj)
                or isinstance(obj, (np.ufunc, type))):
            continue
        canonical = getattr(obj, "__name__", name)
        names.add(canonical if getattr(np, canonical, None) is obj else name)
    return sorted(names)


def submodule_names(module, prefix):
    return [f"{prefix}.{name}" for name in module.__all__
            if not isinstance(getattr(module, name), type)]  # LinAlgError


def entry_groups():
    return {
        "ufuncs": ufunc_names() + UFUNC_METHODS,
        "numpy": function_names(),
        "numpy.linalg": submodule_names(np.linalg, "linalg"),
        "numpy.fft": submodule_names(np.fft, "fft"),
    }


# --- recipes ------------------------------------------------------------------------------

class Constant:
    """An array argument closed over rather than passed in: what the function needs
    known while tracing (reduceat's indices)."""

    def __init__(self, value):
        self.value = value


def is_array_argument(value):
    """Arrays, and (nested) lists or tuples of arrays, are the compiled function's
    inputs; anything else is static and closed over."""
    if isinstance(value, np.ndarray):
        return True
    return (isinstance(value, (list, tuple)) and len(value) > 0
            and all(is_array_argument(item) for item in value))


class Call:
    """The arguments an entry is called with, and how to compare what it returns."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        self.traced_kwargs = {}  # jitflow.numpy's and jax.numpy's extra keywords (size=)
        self.jax_kwargs = {}  # JAX's own (inplace=False, jnp.triu for np.triu)
        self.mutates = False  # returns None and writes into its first argument
        self.values = True  # False: undefined values (np.empty), compare shapes, dtypes
        self.canonical = None  # applied to every result before comparing

    def traced(self, **kwargs):
        self.traced_kwargs.update(kwargs)
        return self

    def mutating(self, **jax_kwargs):
        self.mutates = True
        self.jax_kwargs.update(jax_kwargs)
        return self

    def for_jax(self, **kwargs):
        self.jax_kwargs.update(kwargs)
        return self

    def shape_only(self):
        self.values = False
        return self

    def compared_as(self, canonical):
        self.canonical = canonical
        return self

    def input_keys(self):
        positions = [i for i, arg in enumerate(self.args) if is_array_argument(arg)]
        names = [name for name, arg in self.kwargs.items() if is_array_argument(arg)]
        return positions + names

    def inputs(self):
        """Fresh copies of the array arguments: in-place functions write into them."""
        return [copy.deepcopy(self.args[key] if isinstance(key, int) else self.kwargs[key])
                for key in self.input_keys()]

    def program(self, function, extra_kwargs):
        """fn(*inputs) calling `function` with the inputs in their places; an in-place
        function's result is the array it wrote into."""
        keys = self.input_keys()

        def program(*inputs):
            args = [arg.value if isinstance(arg, Constant) else arg for arg in self.args]
            kwargs = {**self.kwargs, **extra_kwargs}
            for key, value in zip(keys, inputs):
                if isinstance(key, int):
                    args[key] = value
                else:
                    kwargs[key] = value
            result = function(*args, **kwargs)
            return args[0] if self.mutates and result is None else result
        return program


call = Call

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
Y = rng.standard_normal((3, 4))
V = rng.standard_normal(4)
W = rng.standard_normal(4)
W3 = rng.uniform(0.5, 2.0, 3)  # weights along an axis of length 3
POSITIVE = rng.uniform(0.5, 2.0, (3, 4))  # log, sqrt, powers
UNIT = rng.uniform(-0.9, 0.9, (3, 4))  # arcsin, arccos, arctanh
Z = X + 1j * Y
MASK = X > 0
MASK2 = Y > 0
INTS = rng.integers(1, 20, (3, 4))
INTS2 = rng.integers(1, 20, (3, 4))
SHIFTS = rng.integers(0, 5, (3, 4))
T3 = rng.standard_normal((2, 3, 4))
M43 = rng.standard_normal((4, 3))
CROSS_A, CROSS_B = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
# Well conditioned square matrices: a diagonal that dominates, and a positive definite one.
SQUARE = rng.standard_normal((4, 4)) + 4 * np.eye(4)
SPD = SQUARE @ SQUARE.T + np.eye(4)
# Distinct complex eigenvalues (a rotation block), so NumPy's eig is complex as well.
NONSYMMETRIC = np.diag([1.0, 2.0, 3.0, 4.0]) + 0.1 * rng.standard_normal((4, 4))
NONSYMMETRIC[:2, :2] = [[1.0, -2.0], [2.0, 1.0]]
TENSOR = (rng.standard_normal((6, 6)) + 6 * np.eye(6)).reshape(2, 3, 6)
WITH_NAN = np.where(rng.random((3, 4)) < 0.25, np.nan, X)
WITH_NAN[:, 0] = X[:, 0]  # no all-NaN slice along either axis
WITH_INF = X.copy()
WITH_INF[0, :3] = [np.inf, -np.inf, np.nan]
SORTED = np.sort(rng.standard_normal(6))
FLAT_INDEX = np.array([0, 5, 11])
ROWS, COLS = np.array([0, 2, 1]), np.array([3, 0, 1])
COLUMN_PER_ROW = COLS[:, None]
KEYS = (np.array([1, 0, 1, 0, 2, 2]), np.array([3, 3, 1, 2, 0, 1]))
SPECTRUM = np.fft.rfft(X)  # (3, 3) complex: the half spectrum of 4 real points
SAMPLES = rng.standard_normal((6, 2))
X6, Y6 = np.linspace(0.0, 1.0, 6), rng.standard_normal(6)
LEADING_TRAILING_ZEROS = np.array([0.0, 0.0, 1.5, 0.0, 2.0, 0.0])
SET_A, SET_B = np.array([5, 1, 3, 5, 7]), np.array([3, 4, 5, 6])
BYTES = np.array([[3, 255], [16, 7]], dtype=np.uint8)


def count_of(values):
    """The true size= of a value-dependent result."""
    return int(np.size(values))


def canonical_eig(result):
    """eig's eigenvalues in one order and its vectors with one phase (the largest
    component real and positive): LAPACK builds may order them and pick each vector's
    phase differently, both correct."""
    values, vectors = (np.asarray(part) for part in result)
    order = np.lexsort((values.imag, values.real))
    vectors = vectors[:, order]
    pivot = vectors[np.abs(vectors).argmax(axis=0), np.arange(vectors.shape[1])]
    return values[order], vectors / (pivot / np.abs(pivot))


def pivot_signs(matrix, axis):
    """The sign of each column's (axis=0) or row's (axis=1) largest component."""
    pivots = np.abs(matrix).argmax(axis=axis, keepdims=True)
    return np.sign(np.take_along_axis(matrix, pivots, axis=axis))


def canonical_eigh(result):
    """Eigenvectors are defined up to sign: make each one's largest component positive."""
    values, vectors = (np.asarray(part) for part in result)
    return values, vectors * pivot_signs(vectors, axis=0)


def canonical_svd(result):
    """Singular vectors are defined up to a sign that a column of u and the row of vh
    share: u's by its largest component; vh's rows past u's (a basis of the null space)
    each by its own."""
    u, s, vh = (np.array(part) for part in result)
    signs = pivot_signs(u, axis=0)
    vh[:s.size] *= signs.T
    vh[s.size:] *= pivot_signs(vh[s.size:], axis=1)
    return u * signs, s, vh


def trimmed_remainder(result):
    """polydiv's remainder less its leading zeros as NumPy finds them (np.isclose to 0,
    rtol 1e-14): NumPy drops them, a shape that depends on the values; jitflow and JAX,
    traced, keep them."""
    quotient, remainder = (np.asarray(part) for part in result)
    while remainder.size > 1 and np.isclose(remainder[0], 0, rtol=1e-14):
        remainder = remainder[1:]
    return quotient, remainder


UNARY_FLOAT = [
    "absolute", "arcsinh", "arctan", "cbrt", "ceil", "conjugate", "cos", "cosh", "deg2rad",
    "degrees", "exp", "exp2", "expm1", "fabs", "floor", "frexp", "isfinite", "isinf",
    "isnan", "modf", "negative", "positive", "rad2deg", "radians", "reciprocal", "rint",
    "sign", "signbit", "sin", "sinh", "spacing", "square", "tan", "tanh", "trunc"]
BINARY_FLOAT = [
    "add", "arctan2", "copysign", "divide", "divmod", "equal", "floor_divide", "fmax",
    "fmin", "fmod", "greater", "greater_equal", "heaviside", "hypot", "less", "less_equal",
    "logaddexp", "logaddexp2", "maximum", "minimum", "multiply", "nextafter", "not_equal",
    "remainder", "subtract"]
BINARY_INT = ["bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm"]

RECIPES = {
    **{name: lambda: call(X) for name in UNARY_FLOAT},
    **{name: lambda: call(X, Y) for name in BINARY_FLOAT},
    **{name: lambda: call(INTS, INTS2) for name in BINARY_INT},
    **{name: lambda: call(POSITIVE) for name in ["log", "log10", "log1p", "log2", "sqrt"]},
    **{name: lambda: call(UNIT) for name in ["arccos", "arcsin", "arctanh"]},
    "arccosh": lambda: call(POSITIVE + 1),
    "bitwise_count": lambda: call(INTS),
    "float_power": lambda: call(POSITIVE, Y),
    "invert": lambda: call(INTS),
    "ldexp": lambda: call(X, SHIFTS),
    "left_shift": lambda: call(INTS, SHIFTS),
    "logical_and": lambda: call(MASK, MASK2),
    "logical_not": lambda: call(MASK),
    "logical_or": lambda: call(MASK, MASK2),
    "logical_xor": lambda: call(MASK, MASK2),
    "matmul": lambda: call(X, M43),
    "matvec": lambda: call(X, V),
    "power": lambda: call(POSITIVE, Y),
    "right_shift": lambda: call(INTS, SHIFTS),
    "vecdot": lambda: call(X, Y),
    "vecmat": lambda: call(W3, X),
    "add.reduce": lambda: call(X, axis=0),
    "add.accumulate": lambda: call(X, axis=1),
    "add.outer": lambda: call(V, W),
    "add.at": lambda: call(V, np.array([0, 2, 0]), np.array([1.0, 2.0, 3.0])
                           ).mutating(inplace=False),
    "add.reduceat": lambda: call(X, Constant(np.array([0, 2])), axis=1),

    "all": lambda: call(MASK, axis=0),
    "allclose": lambda: call(X, X + 1e-12),
    "amax": lambda: call(X, axis=0),
    "amin": lambda: call(X, axis=1),
    "angle": lambda: call(Z),
    "any": lambda: call(MASK, axis=1),
    "append": lambda: call(V, W),
    "apply_along_axis": lambda: call(lambda row: row.max() - row.min(), 1, X),
    "apply_over_axes": lambda: call(lambda a, axis: a.sum(axis), X, [0, 1]),
    "arange": lambda: call(0.0, 3.0, 0.5),
    "argmax": lambda: call(X, axis=1),
    "argmin": lambda: call(X, axis=0),
    "argpartition": lambda: call(V, 2),
    "argsort": lambda: call(X, axis=1),
    "argwhere": lambda: call(MASK).traced(size=int(MASK.sum())),
    "around": lambda: call(X, 2),
    "array": lambda: call([V, W]),
    "array_equal": lambda: call(X, X.copy()),
    "array_equiv": lambda: call(np.tile(V, (3, 1)), V),
    "array_split": lambda: call(V, 3),
    "asanyarray": lambda: call(X),
    "asarray": lambda: call(X),
    "asarray_chkfinite": lambda: call(X),
    "ascontiguousarray": lambda: call(X),
    "asfortranarray": lambda: call(X),
    "astype": lambda: call(X, np.float32),
    "atleast_1d": lambda: call(V),
    "atleast_2d": lambda: call(V),
    "atleast_3d": lambda: call(X),
    "average": lambda: call(X, axis=0, weights=W3),
    "bartlett": lambda: call(5),
    "bincount": lambda: call(INTS.ravel()).traced(length=int(INTS.max()) + 1),
    "blackman": lambda: call(5),
    "block": lambda: call([[X, Y]]),
    "broadcast_arrays": lambda: call(X, V),
    "broadcast_shapes": lambda: call((3, 1), (1, 4)),
    "broadcast_to": lambda: call(V, (3, 4)),
    "can_cast": lambda: call(X, np.float32),
    "choose": lambda: call(MASK.astype(np.int64), [X, Y]),
    "clip": lambda: call(X, -0.5, 0.5),
    "column_stack": lambda: call([V, W]),
    "common_type": lambda: call(X, Y),
    "compress": lambda: call(MASK[:, 0], X, axis=0).traced(size=int(MASK[:, 0].sum())),
    "concatenate": lambda: call([X, Y], axis=0),
    "convolve": lambda: call(V, W),
    "copy": lambda: call(X),
    "copyto": lambda: call(X, Y).mutating(),
    "corrcoef": lambda: call(X),
    "correlate": lambda: call(V, W),
    "count_nonzero": lambda: call(MASK, axis=0),
    "cov": lambda: call(X),
    "cross": lambda: call(CROSS_A, CROSS_B),
    "cumprod": lambda: call(X, axis=1),
    "cumsum": lambda: call(X, axis=0),
    "cumulative_prod": lambda: call(X, axis=1),
    "cumulative_sum": lambda: call(X, axis=1),
    "delete": lambda: call(X, 1, axis=1),
    "diag": lambda: call(V),
    "diag_indices": lambda: call(4),
    "diag_indices_from": lambda: call(SQUARE),
    "diagflat": lambda: call(V),
    "diagonal": lambda: call(X),
    "diff": lambda: call(X, axis=1),
    "digitize": lambda: call(X, np.array([-1.0, 0.0, 1.0])),
    "dot": lambda: call(X, V),
    "dsplit": lambda: call(T3, 2),
    "dstack": lambda: call([X, Y]),
    "ediff1d": lambda: call(V),
    "einsum": lambda: call("ij,kj->ik", X, Y),
    "einsum_path": lambda: call("ij,kj->ik", X, Y),
    "empty": lambda: call((3, 4)).shape_only(),
    "empty_like": lambda: call(X).shape_only(),
    "expand_dims": lambda: call(V, 0),
    "extract": lambda: call(MASK, X).traced(size=int(MASK.sum())),
    "eye": lambda: call(4),
    "fill_diagonal": lambda: call(SQUARE, 0.0).mutating(inplace=False),
    "fix": lambda: call(X),
    "flatnonzero": lambda: call(MASK).traced(size=int(MASK.sum())),
    "flip": lambda: call(X, axis=1),
    "fliplr": lambda: call(X),
    "flipud": lambda: call(X),
    "fromfunction": lambda: call(lambda i, j: i + 2 * j, (3, 4)),
    "full": lambda: call((3, 4), 2.5),
    "full_like": lambda: call(X, 2.5),
    "geomspace": lambda: call(POSITIVE[0], POSITIVE[1] * 10, 5),
    "gradient": lambda: call(X),
    "hamming": lambda: call(5),
    "hanning": lambda: call(5),
    "histogram": lambda: call(X, bins=5),
    "histogram2d": lambda: call(V, W, bins=3),
    "histogram_bin_edges": lambda: call(X, bins=5),
    "histogramdd": lambda: call(SAMPLES, bins=3),
    "hsplit": lambda: call(X, 2),
    "hstack": lambda: call([X, Y]),
    "i0": lambda: call(X),
    "identity": lambda: call(4),
    "imag": lambda: call(Z),
    "indices": lambda: call((3, 4)),
    "inner": lambda: call(X, Y),
    "insert": lambda: call(V, 1, 5.0),
    "interp": lambda: call(np.array([0.5, 1.5, 2.9]), np.arange(4.0), V),
    "intersect1d": lambda: call(SET_A, SET_B).traced(
        size=count_of(np.intersect1d(SET_A, SET_B))),
    "isclose": lambda: call(X, Y),
    "iscomplex": lambda: call(Z),
    "iscomplexobj": lambda: call(Z),
    "isdtype": lambda: call(np.float64, "real floating"),
    "isfortran": lambda: call(X),
    "isin": lambda: call(INTS, INTS2[0]),
    "isneginf": lambda: call(WITH_INF),
    "isposinf": lambda: call(WITH_INF),
    "isreal": lambda: call(Z),
    "isrealobj": lambda: call(X),
    "isscalar": lambda: call(X),
    "issubdtype": lambda: call(np.float64, np.floating),
    "iterable": lambda: call(X),
    "ix_": lambda: call(ROWS, COLS),
    "kaiser": lambda: call(5, 2.0),
    "kron": lambda: call(X, Y),
    "lexsort": lambda: call(KEYS),
    "linspace": lambda: call(V, W, 5),
    "logspace": lambda: call(V, W, 5),
    "mask_indices": lambda: call(4, mask_func=np.triu).for_jax(mask_func=jax_numpy.triu,
                                                               size=10),
    "matrix_transpose": lambda: call(X),
    "max": lambda: call(X, axis=1),
    "may_share_memory": lambda: call(X, Y),
    "mean": lambda: call(X, axis=0),
    "median": lambda: call(X, axis=1),
    "meshgrid": lambda: call(V, W3),
    "min": lambda: call(X, axis=0),
    "min_scalar_type": lambda: call(X),
    "mintypecode": lambda: call(["f", "d"]),
    "moveaxis": lambda: call(T3, 0, -1),
    "nan_to_num": lambda: call(WITH_INF),
    "nanargmax": lambda: call(WITH_NAN, axis=1),
    "nanargmin": lambda: call(WITH_NAN, axis=0),
    "nancumprod": lambda: call(WITH_NAN, axis=1),
    "nancumsum": lambda: call(WITH_NAN, axis=0),
    "nanmax": lambda: call(WITH_NAN, axis=1),
    "nanmean": lambda: call(WITH_NAN, axis=0),
    "nanmedian": lambda: call(WITH_NAN, axis=1),
    "nanmin": lambda: call(WITH_NAN, axis=0),
    "nanpercentile": lambda: call(WITH_NAN, 75, axis=1),
    "nanprod": lambda: call(WITH_NAN, axis=1),
    "nanquantile": lambda: call(WITH_NAN, 0.25, axis=0),
    "nanstd": lambda: call(WITH_NAN, axis=1),
    "nansum": lambda: call(WITH_NAN, axis=0),
    "nanvar": lambda: call(WITH_NAN, axis=1),
    "ndim": lambda: call(X),
    "nonzero": lambda: call(MASK).traced(size=int(MASK.sum())),
    "ones": lambda: call((3, 4)),
    "ones_like": lambda: call(X),
    "outer": lambda: call(V, W),
    "packbits": lambda: call(MASK, axis=1),
    "pad": lambda: call(X, 1),
    "partition": lambda: call(V, 2),
    "percentile": lambda: call(X, 75, axis=0),
    "piecewise": lambda: call(X, [MASK, ~MASK], [lambda t: 2 * t, lambda t: -t]),
    "place": lambda: call(X, MASK, np.array([1.0, 2.0])).mutating(inplace=False),
    "poly": lambda: call(V),
    "polyadd": lambda: call(V, W3),
    "polyder": lambda: call(V),
    "polydiv": lambda: call(V, W3[:2]).traced(trim_leading_zeros=False).compared_as(
        trimmed_remainder),
    "polyfit": lambda: call(X6, Y6, 2),
    "polyint": lambda: call(V),
    "polymul": lambda: call(V, W3),
    "polysub": lambda: call(V, W3),
    "polyval": lambda: call(V, X),
    "prod": lambda: call(X, axis=1),
    "promote_types": lambda: call(np.float32, np.int64),
    "ptp": lambda: call(X, axis=1),
    "put": lambda: call(X, np.array([0, 5]), np.array([1.0, 2.0])).mutating(inplace=False),
    "put_along_axis": lambda: call(X, COLUMN_PER_ROW, np.array([[1.0], [2.0], [3.0]]),
                                   axis=1).mutating(inplace=False),
    "putmask": lambda: call(X, MASK, Y).mutating(),
    "quantile": lambda: call(X, 0.25, axis=1),
    "ravel": lambda: call(X),
    "ravel_multi_index": lambda: call((ROWS, COLS), (3, 4)),
    "real": lambda: call(Z),
    "real_if_close": lambda: call(Z),
    "repeat": lambda: call(X, 2, axis=1),
    "require": lambda: call(X, np.float64, ["C"]),
    "reshape": lambda: call(X, (4, 3)),
    "resize": lambda: call(V, (3, 3)),
    "result_type": lambda: call(X, np.float32),
    "roll": lambda: call(X, 1, axis=1),
    "rollaxis": lambda: call(T3, 2),
    # Roots are eigenvalues of the companion matrix, in the order LAPACK finds them.
    "roots": lambda: call(V).traced(strip_zeros=False).compared_as(np.sort_complex),
    "rot90": lambda: call(X),
    "round": lambda: call(X, 2),
    "searchsorted": lambda: call(SORTED, X),
    "select": lambda: call([MASK, MASK2], [X, Y], 0.0),
    "setdiff1d": lambda: call(SET_A, SET_B).traced(
        size=count_of(np.setdiff1d(SET_A, SET_B))),
    "setxor1d": lambda: call(SET_A, SET_B).traced(
        size=count_of(np.setxor1d(SET_A, SET_B))),
    "shape": lambda: call(X),
    "shares_memory": lambda: call(X, Y),
    "sinc": lambda: call(X),
    "size": lambda: call(X),
    "sort": lambda: call(X, axis=1),
    "sort_complex": lambda: call(V),
    "split": lambda: call(V, 2),
    "squeeze": lambda: call(X[None]),
    "stack": lambda: call([X, Y], axis=1),
    "std": lambda: call(X, axis=0),
    "sum": lambda: call(X, axis=1),
    "swapaxes": lambda: call(X, 0, 1),
    "take": lambda: call(X, np.array([0, 3, 1]), axis=1),
    "take_along_axis": lambda: call(X, np.argsort(X, axis=1), axis=1),
    "tensordot": lambda: call(X, M43, 1),
    "tile": lambda: call(V, (2, 1)),
    "trace": lambda: call(X),
    "transpose": lambda: call(X),
    "trapezoid": lambda: call(X, axis=1),
    "tri": lambda: call(3, 4),
    "tril": lambda: call(X),
    "tril_indices": lambda: call(4),
    "tril_indices_from": lambda: call(SQUARE),
    "trim_zeros": lambda: call(LEADING_TRAILING_ZEROS).traced(size=3),
    "triu": lambda: call(X),
    "triu_indices": lambda: call(4),
    "triu_indices_from": lambda: call(SQUARE),
    "typename": lambda: call("d"),
    "union1d": lambda: call(SET_A, SET_B).traced(
        size=count_of(np.union1d(SET_A, SET_B))),
    "unique": lambda: call(INTS).traced(size=count_of(np.unique(INTS))),
    "unique_all": lambda: call(INTS).traced(size=count_of(np.unique(INTS))),
    "unique_counts": lambda: call(INTS).traced(size=count_of(np.unique(INTS))),
    "unique_inverse": lambda: call(INTS).traced(size=count_of(np.unique(INTS))),
    # NumPy 2.3+ leaves unique_values' order unspecified (a hash table's).
    "unique_values": lambda: call(INTS).traced(size=count_of(np.unique(INTS))).compared_as(
        np.sort),
    "unpackbits": lambda: call(BYTES, axis=1),
    "unravel_index": lambda: call(FLAT_INDEX, (3, 4)),
    "unstack": lambda: call(X),
    "unwrap": lambda: call(np.linspace(0.0, 12.0, 7)),
    "vander": lambda: call(V),
    "var": lambda: call(X, axis=1),
    "vdot": lambda: call(V, W),
    "vsplit": lambda: call(X, 3),
    "vstack": lambda: call([X, Y]),
    "where": lambda: call(MASK, X, Y),
    "zeros": lambda: call((3, 4)),
    "zeros_like": lambda: call(X),

    "linalg.cholesky": lambda: call(SPD),
    "linalg.cond": lambda: call(SQUARE),
    "linalg.cross": lambda: call(CROSS_A, CROSS_B),
    "linalg.det": lambda: call(SQUARE),
    "linalg.diagonal": lambda: call(X),
    "linalg.eig": lambda: call(NONSYMMETRIC).compared_as(canonical_eig),
    "linalg.eigh": lambda: call(SPD).compared_as(canonical_eigh),
    "linalg.eigvals": lambda: call(NONSYMMETRIC).compared_as(np.sort_complex),
    "linalg.eigvalsh": lambda: call(SPD),
    "linalg.inv": lambda: call(SQUARE),
    "linalg.lstsq": lambda: call(SAMPLES, Y6),
    "linalg.matmul": lambda: call(X, M43),
    "linalg.matrix_norm": lambda: call(X),
    "linalg.matrix_power": lambda: call(SQUARE, 3),
    "linalg.matrix_rank": lambda: call(X),
    "linalg.matrix_transpose": lambda: call(X),
    "linalg.multi_dot": lambda: call([X, M43, X]),
    "linalg.norm": lambda: call(X),
    "linalg.outer": lambda: call(V, W),
    "linalg.pinv": lambda: call(X),
    "linalg.qr": lambda: call(SQUARE),
    "linalg.slogdet": lambda: call(SQUARE),
    "linalg.solve": lambda: call(SQUARE, V),
    "linalg.svd": lambda: call(X).compared_as(canonical_svd),
    "linalg.svdvals": lambda: call(X),
    "linalg.tensordot": lambda: call(X, M43, axes=1),
    "linalg.tensorinv": lambda: call(TENSOR, ind=2),
    "linalg.tensorsolve": lambda: call(TENSOR, X[:2, :3]),
    "linalg.trace": lambda: call(X),
    "linalg.vecdot": lambda: call(X, Y),
    "linalg.vector_norm": lambda: call(X),

    **{f"fft.{name}": lambda: call(X) for name in [
        "fft", "fft2", "fftn", "rfft", "rfft2", "rfftn", "ihfft", "fftshift", "ifftshift"]},
    **{f"fft.{name}": lambda: call(Z) for name in ["ifft", "ifft2", "ifftn"]},
    **{f"fft.{name}": lambda: call(SPECTRUM) for name in [
        "irfft", "irfft2", "irfftn", "hfft"]},
    "fft.fftfreq": lambda: call(8, 0.1),
    "fft.rfftfreq": lambda: call(8, 0.1),
}


# --- comparing results --------------------------------------------------------------------

class Mismatch(Exception):
    """A result that differs from NumPy's; kind is 'structure', 'shape', 'dtype' or
    'value'."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


ARRAY_LIKE = (np.ndarray, np.generic, bool, int, float, complex)


def compare(expected, got, check_dtype, check_values, where="result"):
    """Raise Mismatch where `got` differs from NumPy's `expected`: the same nesting of
    tuples and lists (either kind), shapes, dtypes (if check_dtype) and values (if
    check_values)."""
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            raise Mismatch("structure", f"{where}: {len(expected)} items expected, "
                                        f"got {type(got).__name__}")
        for i, (want, have) in enumerate(zip(expected, got)):
            compare(want, have, check_dtype, check_values, f"{where}[{i}]")
        return
    if not isinstance(expected, ARRAY_LIKE):  # a dtype, a type, a string
        if type(got) is not type(expected) or got != expected:
            raise Mismatch("value", f"{where}: {expected!r} expected, got {got!r}")
        return
    want, have = np.asarray(expected), np.asarray(got)
    if have.shape != want.shape:
        raise Mismatch("shape", f"{where}: shape {want.shape} expected, got {have.shape}")
    if check_dtype and have.dtype != want.dtype:
        raise Mismatch("dtype", f"{where}: {want.dtype} expected, got {have.dtype}")
    if check_values:
        compare_values(want, have, where)


def compare_values(want, have, where):
    try:
        if want.dtype.kind in "fc":
            # rtol, plus an atol far below the values' scale: a result that cancels to
            # zero (an FFT bin, a residual) differs by rounding only.
            finite = np.abs(want[np.isfinite(want)])
            atol = 1e-9 * finite.max() if finite.size else 0.0
            np.testing.assert_allclose(have, want, rtol=1e-6, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(have, want)
    except AssertionError as error:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        detail = next((line for line in lines if line.startswith("Mismatched")), lines[0])
        raise Mismatch("value", f"{where}: {detail}") from None


def dtypes_of(result):
    if isinstance(result, (tuple, list)):
        return [dtype for item in result for dtype in dtypes_of(item)]
    if isinstance(result, ARRAY_LIKE) or hasattr(result, "dtype"):  # JAX's arrays too
        return [np.asarray(result).dtype]
    return []


# --- running an entry ---------------------------------------------------------------------

def resolve(module, name):
    """module.linalg.solve for 'linalg.solve', module.add.reduce for 'add.reduce'."""
    return functools.reduce(getattr, name.split("."), module)


def one_line(error):
    text = " ".join(str(error).split())
    text = f"{type(error).__name__}: {text}" if not isinstance(error, Mismatch) else text
    return text if len(text) <= 200 else text[:197] + "..."


def canonical(recipe, result):
    if recipe.canonical is None:
        return result
    return recipe.canonical(result)


def answers_statically(result):
    """Whether NumPy's result holds a dtype, a type or a string (result_type,
    einsum_path, typename, ...)."""
    if isinstance(result, (tuple, list)):
        return any(answers_statically(item) for item in result)
    return not isinstance(result, ARRAY_LIKE)


def compiled_call(compile, program, inputs, aside):
    """compile(program)(*inputs). Neither jitflow nor jax.jit can return a dtype, a type
    or a string: with `aside`, such an answer, computed while the function is traced
    (where code uses it, to pick a dtype), is kept aside and the function returns 0."""
    if not aside:
        return compile(program)(*inputs)
    kept = []

    def traced(*arrays):
        kept.append(program(*arrays))
        return 0
    compile(traced)(*inputs)
    return kept[-1]


def run_numpy(name, recipe):
    return recipe.program(resolve(np, name), {})(*recipe.inputs())


def run_jitflow(namespace, name, recipe, aside):
    program = recipe.program(resolve(namespace, name), recipe.traced_kwargs)
    return compiled_call(jitflow.function, program, recipe.inputs(), aside)


def run_jax(name, recipe, aside):
    program = recipe.program(resolve(jax_numpy, name),
                             {**recipe.traced_kwargs, **recipe.jax_kwargs})
    return compiled_call(jax.jit, program, recipe.inputs(), aside)


def dispatched(name):
    """Whether NumPy hands a call of np.name on a traced value to jitflow (ufuncs
    through __array_ufunc__, most functions through __array_function__)."""
    function = resolve(np, name)
    owner = resolve(np, name.rsplit(".", 1)[0]) if "." in name else None
    return (isinstance(function, np.ufunc) or isinstance(owner, np.ufunc)  # add.reduce
            or type(function).__name__ == "_ArrayFunctionDispatcher")


def defines(namespace, name):
    try:
        resolve(namespace, name)
    except AttributeError:
        return False
    return True


def outcome(run, recipe, expected, check_dtype):
    """(None or the failure's (kind, one line), the result)."""
    try:
        got = canonical(recipe, run())
        compare(expected, got, check_dtype, recipe.values)
    except Mismatch as mismatch:
        return (f"wrong {mismatch.kind}", one_line(mismatch)), None
    except Exception as error:  # noqa: BLE001 - any failure is a result to report
        return ("raises", one_line(error)), None
    return None, got


def jitflow_outcome(name, recipe, expected, aside):
    """(failure or None, namespace it compiled through). Plain np.name, as users write
    it; jitflow.numpy.name where NumPy's signature lacks the keyword (size=), and where
    np.name fails but NumPy does not dispatch it (np.asarray converts its argument
    itself: no library's traced value can reach its own asarray through it)."""
    def through(namespace):
        return outcome(lambda: run_jitflow(namespace, name, recipe, aside), recipe,
                       expected, check_dtype=True)[0]
    if recipe.traced_kwargs:
        return through(jfnp), "jitflow.numpy"
    failure = through(np)
    if failure is None or dispatched(name) or not defines(jfnp, name):
        return failure, "np"
    return through(jfnp), "jitflow.numpy"


def measure(name):
    """{'numpy': its error or None, 'jitflow': failure or None, 'route': the namespace
    jitflow was called through, 'jax': failure or None, 'jax_dtypes': JAX's dtypes where
    they differ from NumPy's}."""
    if name not in RECIPES:
        return {"numpy": "no recipe"}
    recipe = RECIPES[name]()
    try:
        expected = canonical(recipe, run_numpy(name, recipe))
    except Exception as error:  # noqa: BLE001 - a recipe NumPy itself refuses
        return {"numpy": one_line(error)}
    aside = answers_statically(expected)
    jitflow_failure, route = jitflow_outcome(name, recipe, expected, aside)
    jax_failure, jax_got = outcome(lambda: run_jax(name, recipe, aside), recipe, expected,
                                   check_dtype=False)
    want, got = dtypes_of(expected), dtypes_of(jax_got)
    jax_dtypes = None
    if jax_failure is None and got != want:
        jax_dtypes = f"{', '.join(map(str, want))} -> {', '.join(map(str, got))}"
    return {"numpy": None, "jitflow": jitflow_failure, "route": route, "jax": jax_failure,
            "jax_dtypes": jax_dtypes}


# --- the report ---------------------------------------------------------------------------

def print_table(groups, results):
    """Entries, those compiled by jitflow (of which through plain np.name) and by JAX."""
    print(f"\n{'group':14} {'entries':>8} {'jitflow':>8} {'(np.)':>6} {'JAX':>6}")
    totals = [0, 0, 0, 0]
    for group, names in groups.items():
        compiled = [name for name in names if results[name].get("jitflow", "") is None]
        row = [len(names), len(compiled),
               sum(results[name]["route"] == "np" for name in compiled),
               sum(results[name].get("jax", "") is None for name in names)]
        totals = [total + count for total, count in zip(totals, row)]
        print(f"{group:14} {row[0]:8} {row[1]:8} {row[2]:6} {row[3]:6}")
    print(f"{'total':14} {totals[0]:8} {totals[1]:8} {totals[2]:6} {totals[3]:6}")


def print_recipe_problems(results):
    broken = {name: result["numpy"] for name, result in results.items() if result["numpy"]}
    if broken:
        print("\nRecipes NumPy itself does not run (not counted as compiled):")
        for name, error in broken.items():
            print(f"  {name}: {error}")


def print_jax_dtypes(results):
    differing = {name: result["jax_dtypes"] for name, result in results.items()
                 if result.get("jax_dtypes")}
    if differing:
        print(f"\nJAX matched NumPy's values in another dtype ({len(differing)}):")
        for name, dtypes in differing.items():
            print(f"  {name}: {dtypes}")


def print_routes(results):
    routed = [name for name, result in results.items()
              if result.get("route") == "jitflow.numpy" and result["jitflow"] is None]
    print(f"\nCompiled by jitflow through jitflow.numpy.name ({len(routed)}; size= and "
          f"the like, or np.name that NumPy does not dispatch): {', '.join(routed)}")


def print_failures(results, library):
    failed = {name: result[library] for name, result in results.items()
              if result["numpy"] is None and result[library] is not None}
    print(f"\n{library} fails {len(failed)} entries:")
    for kind in sorted({kind for kind, _ in failed.values()}):
        print(f"  {kind}:")
        for name, (failure_kind, message) in sorted(failed.items()):
            if failure_kind == kind:
                print(f"    {name}: {message}")


def main():
    groups = entry_groups()
    for group, names in groups.items():
        print(f"{group}: {len(names)} entries")
    print(f"total: {sum(map(len, groups.values()))} entries")
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's and JAX's notes on the recipes
        # A native build that fails falls back to the interpreter with this warning: not
        # compiled, so it must fail the entry.
        warnings.simplefilter("error", jitflow.CompileWarning)
        for names in groups.values():
            for name in names:
                results[name] = measure(name)
    print_table(groups, results)
    print_recipe_problems(results)
    print_jax_dtypes(results)
    print_routes(results)
    if "--failures" in sys.argv[1:]:
        print_failures(results, "jitflow")
        print_failures(results, "jax")


if __name__ == "__main__":
    main()
