"""How the complex fuzzer (test_complex_fuzzer.py) compares jitflow's result of a
step with NumPy's: exact steps bit for bit, inexact ones within their one-operation
bound (`tolerance`), and non-finite results where NumPy's own loops disagree by what
they do agree on (`compare`)."""
import numpy as np

import fidelity
from complex_fuzzer_ops import (ELEMENTARY, EXTREMES, FFT_OPS, HALF_SPECTRUM_FFTS,
                                INEXACT, LINALG_OPS, LOOSE_ON_NON_FINITE, OPS,
                                POLYNOMIAL_OPS, PRODUCT_OPS, ROUNDED_SUMS, SUM_OPS,
                                fit_points)
from fidelity import NATIVE_ULPS


def _is_complex(value):
    return np.asarray(value).dtype.kind == "c"


def compare(label, result, expected, step, args):
    """jitflow's `result` of `step` (None: an input) against NumPy's: same dtype and
    shape, each part (of a complex result) compared on its own.

    An exact step matches bit for bit, signed zeros and NaN positions included. An
    inexact one on finite operands gets its one-operation bound (`tolerance`) and must
    still put NaN and infinities where NumPy does.

    Where an operand of a multiply, divide or power holds inf or NaN, the parts of a
    non-finite result are not comparable: NumPy's own loops disagree. Its contiguous
    (SIMD) multiply loop gives nan+nanj for np.array([1+inf*1j]) * 2.0 but its loop
    for a complex scalar operand nan+infj for the same product by 2+0j. Which ELEMENTS
    are finite is the same for any order of these operations (inf or NaN in a term
    makes the element non-finite, whichever way it is multiplied), so there each
    element must be finite exactly where NumPy's is, and its finite ones within the
    bound.

    The same holds where finite operands overflow: NumPy's loops multiply with fused
    multiply-adds, fma(ar, br, -ai bi), which give -inf where the plain formula gives
    inf - inf = NaN: (1e20+1e20j)**2 in complex64 is -inf+infj in NumPy, nan+infj in
    jitflow (and would be in NumPy on a CPU without FMA).

    A transform of non-finite values is looser still: pocketfft never multiplies by a
    root of unity that is exactly 0 or 1 (irfft's sin(pi k) terms), the transform's
    matrix products do (by 1.2e-16 for sin(pi), and inf * 0 is NaN anyway), so an
    element NumPy finds finite may be inf or NaN in jitflow. So with products, whose
    BLAS kernels skip an element that is 0 (np.dot([0j], [[0, inf*1j]]) is finite).
    There an element NumPy finds non-finite must be so too, and those both find finite
    must be close."""
    result, expected = np.asarray(result), np.asarray(expected)
    assert result.dtype == expected.dtype, \
        f"{label}: dtype {result.dtype}, NumPy gives {expected.dtype}"
    assert result.shape == expected.shape, \
        f"{label}: shape {result.shape}, NumPy gives {expected.shape}"
    if step is not None and step.op in ELEMENTARY and _is_complex(args[0]):
        result, expected = _signs_of_nan_arguments_open(result, expected, args[0])
    bound, unknown = (None, None) if step is None or step.op not in INEXACT else \
        tolerance(step, args, expected)
    if unknown is not None and unknown.any():
        result, expected = result[~unknown], expected[~unknown]
        bound = {k: (v[~unknown] if np.ndim(v) else v) for k, v in bound.items()}
    overflow = not (_all_finite(expected) and _all_finite(result))
    if step is not None and step.op in LOOSE_ON_NON_FINITE and \
            (overflow or not all(_all_finite(a) for a in args)):
        finite, finite_here = _finite_elements(expected), _finite_elements(result)
        if step.op in FFT_OPS or step.op in PRODUCT_OPS:
            assert not np.any(finite_here & ~finite), \
                f"{label}: finite where NumPy's is not: {result}, {expected}"
            finite &= finite_here
        np.testing.assert_array_equal(finite_here, finite,
                                      err_msg=f"{label}: which elements are finite")
        result, expected = result[finite], expected[finite]
        bound = {k: (v[finite] if np.ndim(v) else v) for k, v in bound.items()}
    if step is not None and step.op in EXTREMES and _in_memory_order(args[0]):
        result, expected = _same_nans(label, result, expected)
        bound = {"zero_sign": False}
    if step is not None and _zero_sign_open(step, args):
        bound = {"zero_sign": False}
    for part, got, want in _parts(result, expected):
        fidelity.assert_same(got, want, what=f"{label} ({part})",
                             **({} if bound is None else bound))


def _zero_sign_open(step, args):
    """Whether NumPy keeps either of 0 and -0: its unstable sort in intersect1d,
    unique's sorted path, and the set functions' unique of a real operand (in its own
    dtype, sorted) before the complex comparison; and its vector loops in max, nanmax
    and the like of a real operand (NumPy's nanmax of [0.0, -0.0] is 0.0, jitflow's
    -0.0, as the program fuzzer allows), and in maximum, minimum, fmax and fmin of real
    operands (NumPy's fmax of float64 -0.0 and 0.0 is -0.0 as scalars, 0.0 in arrays;
    found by this fuzzer). Such a step is a leaf (`programs`)."""
    if step.op in ("intersect1d", "partition_kth") or \
            step.op == "unique" and step.params["sorted_path"]:
        return True  # (partition: NumPy's introselect puts either of a tie at kth)
    if step.op in EXTREMES and not _is_complex(args[0]):
        return True
    if step.op in ("maximum", "minimum", "fmax", "fmin") and \
            not any(map(_is_complex, args)):
        return True
    return step.op in ("setxor1d", "setdiff1d") and not all(map(_is_complex, args))


def _signs_of_nan_arguments_open(result, expected, z):
    """An elementary function of z whose part is NaN takes the signs of its result's
    infinite and zero parts from that NaN's sign bit in glibc (arcsin(inf - nan*1j) is
    nan - inf*1j, of inf + nan*1j nan + inf*1j). NumPy leaves NaN's sign unspecified and
    its operations set it as their loops happen to (x86's inf - inf is -nan), so where
    z has a NaN part only the parts' magnitudes are compared."""
    nan_argument = np.broadcast_to(np.isnan(z.real) | np.isnan(z.imag), expected.shape)
    if not nan_argument.any():
        return result, expected
    return _magnitudes_where(result, nan_argument), _magnitudes_where(expected, nan_argument)


def _magnitudes_where(value, mask):
    magnitudes = np.empty_like(value)  # (1j * inf would be nan + inf*1j)
    magnitudes.real, magnitudes.imag = np.abs(value.real), np.abs(value.imag)
    return np.where(mask, magnitudes, value)


def _in_memory_order(operand):
    """Whether NumPy reduces `operand` in an order other than C order: its memory
    order. Then which of several NaNs a max or min returns (nan+0j or -inf+nanj), or
    which of two equal values differing in a zero's sign, is NumPy's first in memory;
    jitflow's is the first in C order (a known difference, in README)."""
    operand = np.asarray(operand)
    return operand.dtype.kind == "c" and operand.ndim > 1 and not operand.flags.c_contiguous


def _same_nans(label, result, expected):
    """The elements NaN in either part must be so in both; the others are returned."""
    nan_here, nan_there = np.isnan(result), np.isnan(expected)
    np.testing.assert_array_equal(nan_here, nan_there, err_msg=f"{label}: NaN elements")
    return result[~nan_there], expected[~nan_there]


def _all_finite(value):
    value = np.asarray(value)
    return value.dtype.kind not in "fc" or bool(np.all(np.isfinite(value)))


def _finite_elements(value):
    return np.isfinite(value.real) & np.isfinite(value.imag)


def _parts(result, expected):
    if expected.dtype.kind != "c":
        return [("value", result, expected)]
    return [("real part", result.real, expected.real),
            ("imaginary part", result.imag, expected.imag)]


def _magnitude(value):
    """|real| + |imag| in float64 (an upper bound of |z| up to a factor sqrt(2)); 0
    where a part is not finite (its results are compared by class)."""
    value = np.asarray(value)
    with np.errstate(all="ignore"):  # (float64 first: abs of int32's minimum overflows)
        magnitude = np.abs(np.real(value).astype(np.float64)) + \
            np.abs(np.imag(value).astype(np.float64))
    return np.where(np.isfinite(magnitude), magnitude, 0.0)


def tolerance(step, args, expected):
    """How far an inexact step's result may be from NumPy's: assert_same's keywords,
    with atol broadcast to the result's shape (None: exactly, as integer sums), and
    where nothing is known of it (`unknown`).

    Where the bound of a sum, product or transform overflows, so may its partial sums,
    in one order and not the other (sum([3e38, 3e38, -3e38]) in float32 is inf or
    3e38), and their cancellation is unbounded: such elements are not compared. exp's
    bound overflows where e^x does, and there NumPy's value is compared exactly."""
    if expected.dtype.kind not in "fc":
        return None, None
    eps = float(np.finfo(expected.real.dtype).eps)
    if step.op in LINALG_OPS and np.asarray(args[0]).dtype.kind == "c":
        # the gram v v^H is formed in v's precision (+ 3 I then widens complex64 to
        # complex128): its rounding, times the condition number, is the result's error
        eps = max(eps, float(np.finfo(np.asarray(args[0]).real.dtype).eps))
    terms, bound = _bound(step, args, expected)
    with np.errstate(all="ignore"):
        bound = np.broadcast_to(bound, expected.shape)
        sums = step.op in ROUNDED_SUMS or \
            step.op in ("power", "power_operator") and step.params["n"] > 0
        unknown = ~np.isfinite(bound) if sums else np.zeros(expected.shape, bool)
        if step.op == "sign":  # NumPy's |z| overflows there (jitflow's is scaled)
            z = np.asarray(args[0])
            unknown |= np.isfinite(z) & ~np.isfinite(np.abs(z))
        atol = 4 * terms * eps * np.where(np.isfinite(bound), bound, 0.0) + \
            float(np.finfo(expected.real.dtype).tiny)
    # A sum or product whose rounding differs may reach zero from either side (an
    # underflowing product, a fused multiply-add): the sign of its zero is rounding too.
    # exp, abs and angle keep the signs C99 gives them (exp(-inf - 0j) is 0 - 0j).
    zero_sign = step.op in ("exp", "abs", "angle") or step.op in ELEMENTARY
    return {"atol": atol, "ulps": NATIVE_ULPS, "rtol": eps, "zero_sign": zero_sign}, \
        unknown


def _bound(step, args, expected):
    """(number of roundings, magnitude they are relative to) for `step`."""
    magnitudes = [_magnitude(a) for a in args]
    op = step.op
    with np.errstate(all="ignore"):
        if op in ("multiply", "square"):
            return 2, np.multiply(magnitudes[0], magnitudes[-1])
        if op == "divide":
            return 4, np.divide(magnitudes[0], magnitudes[1])
        if op in ("power", "power_operator"):
            n = step.params["n"]
            return 4 * abs(n) + 4, np.power(magnitudes[0], n)
        if op == "exp":  # e^x (cos y + i sin y): each factor a few ulps of e^x
            return NATIVE_ULPS, np.exp(np.real(np.asarray(args[0])).astype(np.float64))
        if op in ("abs", "angle"):  # (relative: the ulps of assert_same)
            return 0, 0.0
        if op in ELEMENTARY:
            return NATIVE_ULPS, _elementary_scale(op, expected)
        if op in SUM_OPS:
            return _sum_bound(step, magnitudes[0], expected)
        if op in PRODUCT_OPS:
            return _product_bound(step, magnitudes)
        if op in LINALG_OPS:
            return _linalg_bound(args[0], expected)
        if op in POLYNOMIAL_OPS:
            return _polynomial_bound(op, magnitudes)
        return _transform_bound(step, magnitudes[0])


def _elementary_scale(op, expected):
    """What an elementary function's rounding is relative to: the result's magnitude
    (a part may be far smaller than the other, as log's real part near |z| = 1); for
    NumPy's log1p, log(1 + z), and expm1, exp(z) - 1, also the 1 their formulas add,
    whose rounding cancels."""
    magnitude = _magnitude(expected)
    return magnitude + 1.0 if op in ("log1p", "expm1") else magnitude


def _sum_bound(step, magnitude, expected):
    axis = step.params["axis"]
    if step.op in ("cumsum", "nancumsum"):
        terms = magnitude.size if axis is None else magnitude.shape[axis]
        return terms, np.cumsum(magnitude, axis=axis)
    if step.op == "cumprod":  # each product two roundings of each part
        terms = magnitude.size if axis is None else magnitude.shape[axis]
        return 4 * terms, np.cumprod(magnitude, axis=axis)
    keepdims = step.params["keepdims"]
    if step.op in ("median", "nanmedian"):  # the mean of two elements at most
        return 2, np.max(magnitude, axis=axis, keepdims=keepdims, initial=0.0)
    terms = magnitude.size // max(expected.size, 1)
    bound = np.sum(magnitude, axis=axis, keepdims=keepdims)
    return terms, bound / max(terms, 1) if step.op == "mean" else bound


def _product_bound(step, magnitudes):
    """The same product of the magnitudes: the sum of the terms' magnitudes."""
    a, b = magnitudes
    terms = {"outer": 1, "vdot": a.size}.get(step.op, a.shape[-1] if a.ndim else 1)
    return 2 * max(terms, 1), OPS[step.op](np, a, b)


def _linalg_bound(x, expected):
    """A backward-stable factorization of a matrix of condition number c gives results
    within about n c eps of the largest: per matrix, the condition number of the gram
    (1 + |v|^2 / 3) times its result's largest magnitude."""
    x = np.asarray(x)
    n = x.shape[-1]
    squares = np.sum(np.abs(x.astype(np.complex128)) ** 2, axis=-1)
    condition = 1 + squares / 3
    largest = _magnitude(expected)
    if largest.ndim > condition.ndim:  # (a vector or matrix per gram)
        axes = tuple(range(condition.ndim, largest.ndim))
        largest = np.max(largest, axis=axes, keepdims=True, initial=0.0)
        condition = condition.reshape(condition.shape + (1,) * len(axes))
    return 16 * n, condition * (largest + 1)


def _polynomial_bound(op, magnitudes):
    """polyfit's coefficients are V+ y for the Vandermonde matrix V of `fit_points`:
    within |y|_1 / s_min(V) of 0, and their error within cond(V) times that. polydiv's
    quotient, q_k = (u_k - sum_j q_j v_(k-j)) / v_0, is bounded by the same recurrence
    over magnitudes, its error by as many roundings as steps."""
    y = np.ravel(magnitudes[0])
    if op == "polyfit":
        points, degree = fit_points(y.size)
        singular = np.linalg.svd(np.vander(points, degree + 1), compute_uv=False)
        return 16 * y.size, np.sum(y) * singular[0] / singular[-1] ** 2
    u, v = y, np.ravel(magnitudes[1])
    steps = max(u.size - v.size + 1, 1)
    remainder, quotient = u.astype(np.float64), np.zeros(steps)
    with np.errstate(all="ignore"):
        for k in range(u.size - v.size + 1):
            quotient[k] = remainder[k] / v[0]
            remainder[k:k + v.size] += quotient[k] * v
    return 4 * (u.size + 2), quotient


def _transform_bound(step, magnitude):
    """Every output of a transform is a sum of all (resized) inputs along its axes
    times roots of unity: their magnitudes' sum (twice that for a spectrum completed by
    mirroring) bounds it, with about as many roundings as points transformed."""
    params = step.params
    if "axes" in params:
        s, axes = params["s"], params["axes"]
        if axes is None:
            axes = tuple(range(magnitude.ndim))[-len(s):] if s else range(magnitude.ndim)
        lengths = s or [magnitude.shape[a] for a in axes]
    else:
        axes, lengths = (params["axis"],), [params["n"] or magnitude.shape[params["axis"]]]
    terms = 2 * int(np.prod([max(n, 1) for n in lengths])) + 8
    bound = np.sum(magnitude, axis=tuple(axes), keepdims=True)
    return terms, 2 * bound if step.op in HALF_SPECTRUM_FFTS else bound
