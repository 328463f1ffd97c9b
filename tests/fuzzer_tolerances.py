"""How far the program fuzzer (test_program_fuzzer.py) lets native code's results be
from NumPy's: which steps are inexact (rounded differently: fidelity.py), the bound each
gets, and the float products whose infinities and zeros depend on the order of their
terms."""
import numpy as np

from jitflow.ops.contraction import bfloat16_values

import fidelity
from fidelity import NATIVE_ULPS
from fuzzer_ops import (EXACT_EXPONENTS, OPEN_ZERO_SIGN, OPS, SUMS, TRANSCENDENTAL,
                        reduceat_indices)


def is_inexact(step, values):
    """Whether native code may round `step` (on `values`) differently from NumPy."""
    if step.op in TRANSCENDENTAL:
        return True
    args = [values[a] if isinstance(a, int) else a[1] for a in step.args]
    floats = any(np.asarray(a).dtype.kind == "f" or isinstance(a, float) for a in args)
    # (int32 and uint64 arrays promote to float64: NumPy's C pow of floats then, and
    # sums of products rounded in NumPy's order, found by the fuzzer)
    arrays = [np.asarray(a).dtype for a in args if isinstance(a, np.ndarray)]
    floats |= bool(arrays) and np.result_type(*arrays).kind == "f"
    if step.op == "power":
        exponent = step.args[1]
        return floats and not (isinstance(exponent, tuple) and exponent[0] == "lit" and
                               exponent[1] in EXACT_EXPONENTS)
    if step.op in ("mean", "nanmean", "average", "norm", "trapezoid"):
        return True  # an integer mean (norm, trapezoid) sums in float64 too
    if step.op == "clip":  # see inexact_tolerance
        return floats and _open_zero_sign(args)
    if step.op in ("fmax", "fmin"):
        return floats
    return floats and step.op in SUMS | OPEN_ZERO_SIGN


def _open_zero_sign(clip_args):
    """Whether NumPy's clip with both bounds may give either zero where x ties with a
    bound: its loop keeps x's zero when it reads both bounds as single values, which
    depends on layout and casting for one element (test_numpy.py), and happens for any
    number of elements when each bound holds one value (a broadcast view, stride 0)."""
    x, low, high = clip_args
    if low is None or high is None:
        return False
    if np.broadcast(np.asarray(x), np.asarray(low), np.asarray(high)).size == 1:
        return True
    return _one_value(low) and _one_value(high)


def _one_value(bound):
    bound = np.asarray(bound)
    return bound.size > 0 and bool(np.all(bound == bound.flat[0]))


def order_dependent_product(program, values, index):
    """Whether v<index> is a float product some of whose partial products may overflow
    or underflow. NumPy multiplies in the memory order of its operand; native code
    multiplies C-ordered arguments (the call copies others to C order) in C order, so
    there the infinities, NaN (inf * 0) and zeros of the result depend on the order
    (a documented difference): only its dtype and shape are compared. Likewise a float
    matrix product one of whose terms overflows: a fused multiply-add keeps that term
    exact (3.6e308 - inf is -inf, 3.6e308 - 3.5e308 finite) where a product rounded first
    is inf (NaN, inf), and NumPy's BLAS and jitflow's kernels fuse and order them
    differently (found by the thorough run: NaN against -inf; and again in correlate,
    whose NumPy sums by dot). And a float sum whose finite terms' magnitudes add up past
    the dtype's largest number: whether a partial sum overflows depends on the order of
    the additions, NumPy's pairwise one or jitflow's vector lanes (found by the dynamic
    axes fuzzer: max + (-max/2) + max + (-max/2) is max one way, inf the other)."""
    if index < len(program.inputs):
        return False
    step = program.steps[index - len(program.inputs)]
    if step.op in SUMS_OF_PRODUCTS and values[index].dtype.kind == "f":
        return _a_term_overflows(step, values, values[index].dtype)
    if step.op in PLAIN_SUMS and values[index].dtype.kind == "f":
        return _partial_sums_may_overflow(step, values, values[index].dtype)
    if step.op not in ("prod", "nanprod") or values[index].dtype.kind != "f":
        return False
    operand = step.args[0]
    x = np.asarray(values[operand] if isinstance(operand, int) else operand[1], np.float64)
    with np.errstate(all="ignore"):
        magnitudes = np.abs(x[np.isfinite(x) & (x != 0)])
        info = np.finfo(values[index].dtype)
        growth = np.sum(np.log(magnitudes[magnitudes > 1]))
        shrinking = np.sum(np.log(magnitudes[magnitudes < 1]))
    return bool(growth > np.log(info.max) or shrinking < np.log(info.tiny))


# Sums of their first operand's elements (or of a part of them each)
PLAIN_SUMS = {"sum", "nansum", "mean", "nanmean", "average", "cumsum", "cumulative_sum",
              "add_reduceat", "add_at", "trapezoid", "trace"}
SUMS_OF_PRODUCTS = {"matmul", "matmul_bfloat16", "correlate_same", "convolve", "vdot",
                    "vecdot"}


def depends_on_a_nan_sign(program, values, index):
    """Whether v<index> is, or is computed from, a result that takes the sign of a NaN:
    copysign's second operand's, signbit's operand's. IEEE 754 leaves the sign of a
    NaN that arithmetic makes open, and where NumPy's loops and jitflow's make a NaN
    by other steps (another order, vector code), its sign differs (found by the
    thorough run: copysign(c, x * hanning) after a polydiv by a polynomial of leading
    -0.0). Such values are compared by dtype and shape only."""
    dependent = [False] * len(program.inputs)
    for step in program.steps[:index + 1 - len(program.inputs)]:
        dependent.append(_takes_a_nan_sign(step, values) or any(
            dependent[arg] for arg in step.args if isinstance(arg, int)))
    return dependent[index]


def _takes_a_nan_sign(step, values):
    position = {"copysign": 1, "signbit": 0}.get(step.op)
    if position is None or position >= len(step.args):
        return False
    operand = step.args[position]
    sign = np.asarray(values[operand] if isinstance(operand, int) else operand[1])
    return sign.dtype.kind == "f" and bool(np.isnan(sign).any())


def _partial_sums_may_overflow(step, values, dtype):
    operand = step.args[0]
    x = np.abs(np.asarray(values[operand] if isinstance(operand, int) else operand[1],
                          np.float64))
    with np.errstate(over="ignore"):
        return bool(np.sum(x[np.isfinite(x)]) > float(np.finfo(dtype).max))


def _a_term_overflows(step, values, dtype):
    largest = []
    for operand in step.args:
        x = np.abs(np.asarray(values[operand] if isinstance(operand, int) else operand[1],
                              np.float64))
        finite = x[np.isfinite(x)]
        largest.append(float(finite.max()) if finite.size else 0.0)
    with np.errstate(over="ignore"):
        return bool(largest[0] * largest[1] > float(np.finfo(dtype).max))


def inexact_tolerance(program, values, index):
    """How far v<index> may be from NumPy's (None: not at all): see fidelity.py."""
    if index < len(program.inputs):
        return None
    step = program.steps[index - len(program.inputs)]
    if not is_inexact(step, values):
        return None
    if step.op in ("logaddexp", "logaddexp2"):
        return _log_add_tolerance(step, values, values[index])
    if step.op in TRANSCENDENTAL:
        return {"ulps": NATIVE_ULPS}
    if step.op == "power":
        # NumPy's loop takes x ** 0.5 as sqrt (sqrt(-0.0) is -0.0, pow(-0.0, 0.5) is
        # 0.0) when it reads the exponent as one value; for a one-element result that
        # depends on the operands' casts and dimensions, not only on their shapes.
        one_element = np.size(values[index]) == 1
        return {"ulps": NATIVE_ULPS, "zero_sign": not one_element}
    if step.op in OPEN_ZERO_SIGN:
        return {"zero_sign": False}
    args = [values[a] if isinstance(a, int) else a[1] for a in step.args]
    with np.errstate(all="ignore"):  # magnitudes may overflow (then compared exactly)
        return _sum_tolerance(step, args, np.asarray(values[index]))


def _log_add_tolerance(step, values, result):
    """max(x, y) + log1p(exp(-|x - y|)) may cancel (-0.5 + 0.47): each term's rounding
    (NATIVE_ULPS of the larger operand's magnitude, at least 1), not the sum's."""
    args = [np.asarray(values[a] if isinstance(a, int) else a[1]) for a in step.args]
    eps = float(np.finfo(np.asarray(result).dtype).eps)
    with np.errstate(all="ignore"):
        larger = np.nan_to_num(np.maximum(*args).astype(np.float64), posinf=0, neginf=0)
    return {"ulps": NATIVE_ULPS, "atol": NATIVE_ULPS * eps * (np.abs(larger) + 1)}


def _sum_tolerance(step, args, result):
    """n roundings of the sum of the magnitudes of the n terms of each result (relative
    for a product, which does not cancel)."""
    eps = float(np.finfo(result.dtype).eps)
    # (NaN that nansum and friends leave out count for nothing)
    magnitudes = [np.nan_to_num(np.abs(np.asarray(a, np.float64)), nan=0.0, posinf=np.inf)
                  for a in args]
    if step.op == "norm":  # a root of a sum of terms of one sign: relative
        return {"rtol": 16 * (magnitudes[0].size + 1) * eps, "ulps": NATIVE_ULPS,
                "zero_sign": False}
    if step.op in ("prod", "nanprod"):  # relative: no cancellation
        terms = magnitudes[0].size // max(result.size, 1)
        return {"rtol": 2 * terms * eps, "atol": float(np.finfo(np.float64).tiny)}
    bound_of = _SUM_BOUNDS.get(step.op, _reduction_bound)
    terms, bound, extra = bound_of(step, magnitudes, args, result)
    return {"atol": terms * eps * np.nan_to_num(bound, posinf=0.0), "rtol": eps, **extra}


# Each: (step, magnitudes, args, result) -> (terms, the sum of their magnitudes, more of
# assert_same's keywords).

def _trace_bound(step, magnitudes, args, result):  # at most n products: a loose bound
    terms = max(magnitudes[0].size, 1)
    bound = np.sum(magnitudes[0]) * (np.max(magnitudes[-1]) if magnitudes[-1].size
                                     and step.op == "vecdot" else 1.0)
    return terms, bound, {"zero_sign": False}


def _vdot_bound(step, magnitudes, args, result):  # the flattened operands' products
    terms = max(magnitudes[0].size, 1)
    return terms, np.sum(magnitudes[0].ravel() * magnitudes[1].ravel()), {"zero_sign": False}


def _convolution_bound(step, magnitudes, args, result):  # sums of products
    a, v = (m.ravel() for m in magnitudes)
    bound = OPS[step.op](np, a, v) if a.size and v.size else 0.0
    return max(min(a.size, v.size), 1), bound, {"zero_sign": False}


def _add_at_bound(step, magnitudes, args, result):  # at most three values per element
    return 4, 3 * np.max(magnitudes[0], initial=0.0), {"zero_sign": False}


def _reduceat_bound(step, magnitudes, args, result):
    """Each slice's own magnitudes: an infinite element of another slice (its bound
    dropped as inf) must not drop this one's."""
    whole = magnitudes[0] if magnitudes[0].ndim else magnitudes[0].reshape(1)
    slices = np.add.reduceat(whole, reduceat_indices(whole.shape[-1]), axis=-1)
    return whole.shape[-1], slices, {}


def _matmul_bound(step, magnitudes, args, result):
    return magnitudes[0].shape[-1], magnitudes[0] @ magnitudes[1], \
        {"zero_sign": not fidelity.products_underflow(*args, result.dtype)}


def _bfloat16_matmul_bound(step, magnitudes, args, result):
    """matmul's, for the operands as the step multiplies them: x as a float32 matrix,
    both rounded to bfloat16 (a magnitude grows by at most 2**-8 each)."""
    x, y = (bfloat16_values(np.atleast_2d(a).astype(np.float32)) for a in args)
    x_magnitudes = np.atleast_2d(magnitudes[0])
    return x_magnitudes.shape[-1], (x_magnitudes @ magnitudes[1]) * (1 + 2.0 ** -7), \
        {"zero_sign": not fidelity.products_underflow(x, y, result.dtype)}


def _running_sum_bound(step, magnitudes, args, result):
    axis = step.params["axis"]
    terms = magnitudes[0].size if axis is None else magnitudes[0].shape[axis]
    if step.op == "cumsum":
        return terms, np.cumsum(magnitudes[0], axis=axis), {}
    return terms, np.cumulative_sum(magnitudes[0], axis=axis, include_initial=True), {}


def _trapezoid_bound(step, magnitudes, args, result):  # halves of neighbours' sums
    axis = -1 if step.params["axis"] is None else step.params["axis"]
    return magnitudes[0].shape[axis], np.sum(magnitudes[0], axis=axis), {}


def _reduction_bound(step, magnitudes, args, result):
    axis, keepdims = step.params["axis"], step.params["keepdims"]
    terms = magnitudes[0].size // max(result.size, 1)
    bound = np.sum(magnitudes[0], axis=axis, keepdims=keepdims)
    if step.op in ("mean", "average"):
        bound = bound / max(terms, 1)
    return terms, bound, {}


_SUM_BOUNDS = {"trace": _trace_bound, "vecdot": _trace_bound, "vdot": _vdot_bound,
               "convolve": _convolution_bound, "correlate_same": _convolution_bound,
               "add_at": _add_at_bound, "add_reduceat": _reduceat_bound,
               "matmul": _matmul_bound, "matmul_bfloat16": _bfloat16_matmul_bound,
               "cumsum": _running_sum_bound,
               "cumulative_sum": _running_sum_bound, "trapezoid": _trapezoid_bound}
