"""Comparing jitflow with NumPy, the reference: same dtype, same shape, same values.

NaN compares equal to NaN, infinities must match in sign, and exact comparisons tell -0.0
from 0.0. Approximate comparisons are for results NumPy itself computes differently
depending on memory layout or SIMD path (transcendental functions, float reductions).

Traced functions are checked on both backends (the `backend` fixture, conftest.py):

- The interpreter runs NumPy's own functions on the traced graph, so its results are held
  to the comparison each test states: exact, unless NumPy itself varies with layout.
- Native code computes everything itself. Arithmetic, comparisons, casts, indexing and
  shape operations are IEEE-exact there too and are compared bit for bit, signed zeros
  and NaN positions included. Two kinds of result may differ from NumPy's by rounding:
  * transcendental functions (exp, log, log1p, expm1, tanh, logistic, sin, cos, tan and
    float pow): codegen/math/mathlib.py is within 4 ulp of the exact value and NumPy's own
    SIMD loops are a few ulp off too (NumPy's float32 exp(1) is 1 ulp off, ours is
    correctly rounded), so applied to exact inputs a result may lie up to NATIVE_ULPS = 8
    representable floats from NumPy's (`native_tolerance`); NaN, infinities and the sign
    of zero must still match;
  * float reductions and contractions, which add in a different order than NumPy's
    pairwise sums and BLAS: the tests bound them by n roundings of the sum of magnitudes,
    n * eps * sum(|x|) (sum(|x| |y|) for a contraction), n the number of terms. A max
    or min reduction is exact, but which of 0.0 and -0.0 it keeps depends on the order
    it meets them, for NumPy too (zero_sign=False).
  Both bounds hold for one operation on exact inputs; programs that feed rounded results
  into further operations are compared as test_compositions.py explains.
"""
import inspect
import warnings

import numpy as np
from hypothesis import given, settings

import jitflow
from jitflow import pytree

BACKENDS = ("interpreter", "native")
NATIVE_ULPS = 8
# Every new signature costs native code an LLVM compile (10-40 ms): its variant of a
# property test draws 1/NATIVE_SHARE of the profile's examples (20 of 'ci's 40, 500 of
# 'thorough's 1000).
NATIVE_SHARE = 2
THOROUGH_EXAMPLES = 1000  # the thorough profile's

# The kinds of error jitflow must raise exactly when NumPy does.
ERROR_KINDS = (TypeError, ValueError, IndexError, ArithmeticError)


def numpy_outcome(fn, *args, **kwargs):
    """(result, None) when NumPy computes fn(*args), (None, error) when it raises.

    Floating-point warnings are silenced: jitflow gives the IEEE result without them.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs), None
        except ERROR_KINDS as error:
            return None, error


def error_kinds(error):
    """The error classes (of ERROR_KINDS) `error` belongs to, for pytest.raises."""
    return tuple(kind for kind in ERROR_KINDS if isinstance(error, kind))


def ulps(dtype, n=8):
    """A relative tolerance of n units in the last place of a float dtype (0 otherwise)."""
    dtype = np.dtype(dtype)
    return n * float(np.finfo(dtype).eps) if dtype.kind == "f" else 0.0


def assert_same(actual, expected, *, rtol=0.0, atol=0.0, ulps=0, zero_sign=True,
                what=""):
    """actual has expected's dtype and shape, and its values.

    Exact unless rtol, atol or ulps is given; then non-finite values must still match
    exactly, and a finite value is close enough when within atol + rtol * |expected| or
    within `ulps` representable floats of it. zero_sign=False allows 0.0 for -0.0 where
    NumPy leaves the sign unspecified (max of 0.0 and -0.0 in a reduction depends on the
    order NumPy visits the elements).
    """
    actual, expected = np.asarray(actual), np.asarray(expected)
    label = f"{what}: " if what else ""
    assert actual.dtype == expected.dtype, \
        f"{label}dtype {actual.dtype}, NumPy gives {expected.dtype}"
    assert actual.shape == expected.shape, \
        f"{label}shape {actual.shape}, NumPy gives {expected.shape}"
    if expected.dtype.kind != "f":
        np.testing.assert_array_equal(actual, expected, err_msg=label)
        return
    if not np.any(rtol) and not np.any(atol) and not ulps:
        np.testing.assert_array_equal(actual, expected, err_msg=label)
    else:
        with np.errstate(invalid="ignore"):  # inf - inf, 0 * inf where not finite
            bound = np.broadcast_to(atol + rtol * np.abs(expected.astype(np.float64)),
                                    expected.shape).reshape(-1)
        actual, expected = actual.reshape(-1), expected.reshape(-1)  # 0-d too: a message
        finite = np.isfinite(expected)
        np.testing.assert_array_equal(actual[~finite], expected[~finite], err_msg=label)
        with np.errstate(invalid="ignore"):
            error = np.abs(actual.astype(np.float64) - expected)
        close = error <= bound
        if ulps:
            close |= ulp_distance(actual, expected) <= ulps
        bad = finite & ~close
        assert not bad.any(), (f"{label}{actual[bad]} differ from NumPy's "
                               f"{expected[bad]} by more than {bound[bad]}"
                               + (f" or {ulps} ulp" if ulps else ""))
    if zero_sign:  # where both are zero (within a tolerance, one may not be)
        zeros = (expected == 0) & (actual == 0)
        np.testing.assert_array_equal(np.signbit(actual[zeros]),
                                      np.signbit(expected[zeros]),
                                      err_msg=f"{label}sign of zero differs from NumPy")


def ulp_distance(actual, expected):
    """How many representable floats lie between actual and expected, elementwise: their
    bit patterns mapped to integers in the order of the values (-0.0 and 0.0 both to 0),
    subtracted as Python ints so that nothing overflows."""
    itype = np.dtype(f"i{expected.dtype.itemsize}")

    def ordinal(x):
        bits = np.ascontiguousarray(x, expected.dtype).view(itype).astype(object)
        return np.where(bits < 0, int(np.iinfo(itype).min) - bits, bits)
    return np.abs(ordinal(actual) - ordinal(expected)).astype(float)


def native_tolerance(tolerance, transcendental):
    """The comparison for a traced result: `tolerance` (a dict of assert_same's keywords)
    on the interpreter; on native code a transcendental function's result may also be
    NATIVE_ULPS from NumPy's (see the module docstring)."""
    if transcendental and jitflow.config.backend == "native":
        return dict(tolerance, ulps=NATIVE_ULPS)
    return tolerance


def given_per_backend(*strategies, ci_examples=None, **named_strategies):
    """@given for a test that runs on each backend (through the `backend` fixture, which
    the test may also take as an argument): the interpreter draws the profile's examples,
    native code 1/NATIVE_SHARE of them. `ci_examples` caps the interpreter's below the
    thorough profile, for a test whose every example compiles and differentiates anew."""
    def decorate(test):
        interpreter_examples = settings.default.max_examples
        if ci_examples is not None and interpreter_examples < THOROUGH_EXAMPLES:
            interpreter_examples = min(ci_examples, interpreter_examples)
        interpreter = settings(max_examples=interpreter_examples)(
            given(*strategies, **named_strategies)(test))
        examples = max(1, interpreter_examples // NATIVE_SHARE)
        native = settings(max_examples=examples)(
            given(*strategies, **named_strategies)(test))
        signature = inspect.signature(interpreter)
        takes_backend = "backend" in signature.parameters
        if not takes_backend:
            signature = signature.replace(parameters=[
                *signature.parameters.values(),
                inspect.Parameter("backend", inspect.Parameter.KEYWORD_ONLY)])

        def run(**arguments):
            backend = arguments["backend"] if takes_backend else arguments.pop("backend")
            (native if backend == "native" else interpreter)(**arguments)
        run.__signature__ = signature
        for name in ("__name__", "__qualname__", "__doc__", "__module__"):
            setattr(run, name, getattr(test, name))
        return run
    return decorate


def run_traced(fn, *args):
    """fn(*args) traced by jitflow.function and run, after checking that the traced graph
    declares the dtype and shape that running it gives (a mismatch would be a silent
    wrong answer for a backend that trusts the declared types)."""
    compiled = jitflow.function(fn)
    result = compiled(*args)
    graph = compiled.trace(*args)
    outputs = pytree.flatten(result)[0]  # (a complex result: its real leaves, as traced)
    for declared, value in zip(graph.out_types, outputs, strict=True):
        value = np.asarray(value)
        assert (declared.dtype, declared.shape) == (value.dtype, value.shape), \
            f"the traced graph declares {declared} but computes {value.dtype}{value.shape}"
    return result


def products_underflow(x, y, dtype):
    """Whether some product x[i, l] * y[l, j] is nonzero but below the dtype's smallest
    normal number. Then the sign of a zero result is rounding too: OpenBLAS's fused
    multiply-add keeps the sign of a product that underflows (-0.0), NumPy's own loop
    adds the rounded -0.0 to +0.0 and gets +0.0."""
    if np.dtype(dtype).kind != "f":
        return False
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    x, y = (x[None, :] if x.ndim == 1 else x), (y[:, None] if y.ndim == 1 else y)
    with np.errstate(divide="ignore"):
        exponents = (np.log2(np.abs(x))[..., :, :, None] +
                     np.log2(np.abs(y))[..., None, :, :])
    return bool(np.any(np.isfinite(exponents) &
                       (exponents < np.log2(np.finfo(dtype).tiny))))
