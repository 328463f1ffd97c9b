"""The inline route of mathlib: exp, log, tanh, sin, pow, ... written in LLVM IR.

Each function is emitted once per module as an internal alwaysinline function named
`jitflow.math.<name>.<f32|f64>`. There are no branches (selects only) and no tables,
so once inlined into a loop they vectorize like plain arithmetic.

sin, cos and tan reduce their argument modulo pi/2 by a Cody-Waite reduction in float64
(pi/2 in three pieces; two for float32): accurate while |x| < 2^20 pi/2 ~ 1.6e6 (tested
densely up to 1e5, sparsely up to 1.6e6). Beyond that, with no Payne-Hanek reduction,
results lose all accuracy but stay within [-1, 1] for sin and cos.
"""
import math
from collections import namedtuple

import llvmlite.ir as ir

from ..emitter import element_of
from ..jit.engine import host
from ..jit.target import features
from .arithmetic import (F32, F64, FORMATS, V, clamp, fast_two_sum, poly, scalef_fits,
                         two_prod, two_sum, where)

ARITY = {"exp": 1, "log": 1, "log1p": 1, "expm1": 1, "tanh": 1, "logistic": 1,
         "sin": 1, "cos": 1, "tan": 1, "pow": 2}


def inline_function(module, name, ftype):
    """The module's `jitflow.math.<name>.<f32|f64>` (`.<f32|f64>x<lanes>` on vectors),
    defined on first use."""
    symbol = f"jitflow.math.{name}.{FORMATS[element_of(ftype)].name}"
    if isinstance(ftype, ir.VectorType):
        symbol += f"x{ftype.count}"
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    function = ir.Function(module, ir.FunctionType(ftype, [ftype] * ARITY[name]), symbol)
    function.linkage = "internal"
    for attribute in ("alwaysinline", "nounwind", "readnone"):
        function.attributes.add(attribute)
    builder = ir.IRBuilder(function.append_basic_block("entry"))
    result = _BODIES[name](*(V(builder, arg) for arg in function.args))
    builder.ret(result.ir)
    return function


def _h(*hex_floats):
    return tuple(float.fromhex(h) for h in hex_floats)


INF, NAN = math.inf, math.nan


# --- exp and expm1 ------------------------------------------------------------------
# x = n ln2 + r with n = rint(x / ln2), |r| <= ln2/2 (Cody-Waite: n * LN2_HI is exact,
# as LN2_HI has few bits), then exp(x) = 2^n (1 + r + r^2 q(r)). q is a Chebyshev fit of
# (e^r - 1 - r) / r^2 on |r| <= ln2/2; expm1 shares it.

_Exp = namedtuple("_Exp", "lo hi m1_lo ln2_hi ln2_lo q")
_EXP = {
    # Below lo exp is 0 and above hi it is inf; below m1_lo expm1 rounds to -1.
    "f32": _Exp(-104.0, 89.0, -20.0, *_h("0x1.62e4p-1", "0x1.7f7d1cp-20"),
                _h("0x1p-1", "0x1.555556p-3", "0x1.5554eap-5", "0x1.1110ep-7",
                   "0x1.6d4316p-10", "0x1.a124e4p-13")),
    "f64": _Exp(-746.0, 710.0, -40.0, *_h("0x1.62e42feep-1", "0x1.a39ef35793c76p-33"),
                _h("0x1p-1", "0x1.5555555555557p-3", "0x1.5555555555556p-5",
                   "0x1.11111111100dfp-7", "0x1.6c16c16c162d6p-10",
                   "0x1.a01a01abe6323p-13", "0x1.a01a01a6d7831p-16",
                   "0x1.71de0237484cdp-19", "0x1.27e4db67ac2b0p-22",
                   "0x1.af4ddda1c08cdp-26", "0x1.1f72fc83bcbc7p-29")),
}
# float32 pow runs exp in float64, where a shorter polynomial suffices (2^-36).
_EXP["f32_in_f64"] = _EXP["f64"]._replace(q=_h(
    "0x1p-1", "0x1.55555567506dep-3", "0x1.5555555c85fc4p-5", "0x1.1110c63a3c331p-7",
    "0x1.6c1685918e3cfp-10", "0x1.a1516a0790f9dp-13", "0x1.a11313706b54dp-16"))
LOG2E = float.fromhex("0x1.71547652b82fep+0")


def _exp_reduce(x):
    """(n, r, t) with x = n ln2 + r + t, n integral, |r| <= ln2/2 and t the rounding error
    of r (unused by exp, and then deleted); x must be finite and clamped."""
    k = _EXP[x.fmt.name]  # ln2 in pieces: the same for "f32_in_f64"
    n = (x * LOG2E).rint()
    r, t = two_sum(x - n * k.ln2_hi, -(n * k.ln2_lo))  # x - n ln2_hi is exact
    return n, r, t


def _pow2(n):
    """2^n for integral float n within the normal exponent range, built from its bits."""
    fmt = n.fmt
    exponent = n.to_int().widen(fmt.itype) + fmt.bias
    return (exponent << fmt.mant).as_float(n.type)


def _scale(p, n):
    """p 2^n for integral n up to about +-1100, a subnormal result rounded only once: in
    one llvm.ldexp where that is one instruction, else in two steps, each power of two
    representable."""
    if scale_in_one_step():
        return p.ldexp(n)
    half = (n * 0.5).floor()
    return p * _pow2(half) * _pow2(n - half)


# Whether _scale is one llvm.ldexp: LLVM lowers it to AVX-512's vscalef, which rounds
# once, subnormal results included; elsewhere it becomes a libm call per element.
# None: decided by the host; True or False force it (tests take both ways).
ONE_STEP_SCALE = None


def scale_in_one_step():
    if ONE_STEP_SCALE is not None:
        return ONE_STEP_SCALE
    return "avx512f" in host_features()


def host_features():
    """The LLVM feature names enabled on the target code is generated for."""
    return features(host()[2])


def _exp_finite(x, consts=None):
    """e^x for x that is not NaN (overflow gives inf, underflow 0)."""
    k = _EXP[consts or x.fmt.name]
    n, r, _ = _exp_reduce(clamp(x, k.lo, k.hi))
    return _scale(1 + (r + r * r * poly(r, k.q)), n)


def _exp(x):
    if x.fmt.name == "f32" and scale_in_one_step():
        return _exp_f32(x)
    return where(x.isnan(), x, _exp_finite(x))


# float32 exp where scaling is one instruction (AVX-512). A polynomial of degree 6
# instead of 7 (within 0.07 ulp of e^r on |r| <= ln2/2; the result within 1.0 ulp,
# against 0.94 for _exp_finite), a clamp that lets NaN through and, on whole vector
# registers, vscalef, which takes n as a float and returns NaN for NaN: no conversion to
# integers and no select. The loop out[i] = exp(x[i]) takes 18 vector instructions per
# 16 lanes, load and store included, where it took 26 with _exp_finite.
_EXP_F32_Q = _h("0x1.fffffcp-2", "0x1.555492p-3", "0x1.5558f2p-5", "0x1.1239d4p-7",
                "0x1.6a244cp-10")


def _exp_f32(x):
    k = _EXP["f32"]
    # Below lo the result is 0, from a select: scaling to it would underflow, and on
    # Intel's cores an underflowing result takes a microcode assist (exp of a softmax's
    # masked -1e9 scores ran 5 times slower).
    below = x < k.lo
    clamped = where(below, 0.0, where(x > k.hi, k.hi, x))  # NaN stays NaN
    n = (clamped * LOG2E).rint()
    r = (-n).fma(x.const(k.ln2_hi), clamped)  # exact: n ln2_hi has few bits
    r = (-n).fma(x.const(k.ln2_lo), r)
    p = 1 + r.fma(r * poly(r, _EXP_F32_Q), r)
    if scalef_fits(x.type, host_features()):
        return where(below, 0.0, p.scalef(n))
    return where(below, 0.0, where(x.isnan(), x, p.ldexp(n)))  # ldexp(NaN's n) is poison


def _expm1(x):
    """2^n e^r - 1 = 2^n expm1(r) + (2^n - 1): both terms exact while 2^n has fewer bits
    than the mantissa; past that, (1 + expm1(r)) 2^n - 1."""
    k, fmt = _EXP[x.fmt.name], x.fmt
    n, r, t = _exp_reduce(clamp(x, k.m1_lo, k.hi))
    p = r + (r * r * poly(r, k.q) + t * (1 + r))  # expm1(r + t)
    power = _pow2(where(n > fmt.mant, fmt.mant, n))
    small = power * p + (power - 1)
    large = _scale(1 + p, n) - 1
    result = where(n > fmt.mant, large, small)
    return where(x.eq(0) | x.isnan(), x, result)  # keeps -0 and NaN


# --- log and log1p ------------------------------------------------------------------
# x = 2^k (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), s = f / (2 + f), and
# log(1 + f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R), R = s^2 g(s^2) (as in fdlibm);
# g is a Chebyshev fit of (2 atanh(s) - 2s) / s^3 on s^2 <= (3 - 2 sqrt 2)^2.

_Log = namedtuple("_Log", "sqrt_half_bits ln2_hi ln2_lo g")
_LOG = {
    "f32": _Log(0x3F3504F3, *_EXP["f32"][3:5],
                _h("0x1.55555cp-1", "0x1.997c3p-2", "0x1.2ee61p-2")),
    "f64": _Log(0x3FE6A09E667F3BCD, *_EXP["f64"][3:5],
                _h("0x1.5555555555558p-1", "0x1.99999999952e2p-2", "0x1.2492492df14bcp-2",
                   "0x1.c71c62e57c3c4p-3", "0x1.7462b4ac441afp-3",
                   "0x1.39fe604146b74p-3", "0x1.2b584c6b42d60p-3")),
}
_LOG["f32_in_f64"] = _LOG["f64"]._replace(g=_h(  # float32 pow: 2^-36 suffices
    "0x1.5555554bb2b05p-1", "0x1.9999eb5d94878p-2", "0x1.245c437c3b954p-2",
    "0x1.ddced87f793adp-3"))


def _split(x):
    """(k, m) with x = 2^k m, m in [sqrt(1/2), sqrt(2)), for positive finite x. Adding
    1 - sqrt(1/2) to the bits carries into the exponent exactly when m >= sqrt(2)."""
    fmt, k = x.fmt, _LOG[x.fmt.name]
    tiny = x < 2.0 ** (1 - fmt.bias)  # subnormal: scale into the normal range first
    scaled = where(tiny, x * 2.0 ** (fmt.mant + 1), x)
    one_bits = fmt.bias << fmt.mant
    bits = scaled.bits() + (one_bits - k.sqrt_half_bits)
    exponent = (bits >> fmt.mant).to_float(x.type) - fmt.bias
    exponent = where(tiny, exponent - (fmt.mant + 1), exponent)
    mantissa = ((bits & ((1 << fmt.mant) - 1)) + k.sqrt_half_bits).as_float(x.type)
    return exponent, mantissa


def _log_of_parts(k, f, c=None, consts=None):
    """log(2^k (1 + f)) + c, for a correction c much smaller than the result."""
    consts = _LOG[consts or f.fmt.name]
    s = f / (2 + f)
    z = s * s
    r = z * poly(z, consts.g)
    half_f2 = 0.5 * f * f
    low = k * consts.ln2_lo if c is None else k * consts.ln2_lo + c
    return k * consts.ln2_hi - ((half_f2 - (s * (half_f2 + r) + low)) - f)


def _log_finite(x, consts=None):
    """log x for positive finite x."""
    k, m = _split(x)
    return _log_of_parts(k, m - 1, consts=consts)


def _log(x):
    result = where(x.eq(INF), INF, _log_finite(x))
    result = where(x.eq(0), -INF, result)
    return where((x < 0) | x.isnan(), NAN, result)


def _log1p(x):
    """log(u) for u = fl(1 + x), plus the rounding error of u as a correction:
    log(1 + x) = log(u) + ((1 + x) - u) / u. Fast two-sum recovers (1 + x) - u exactly."""
    u = 1 + x
    k, m = _split(u)
    error = where(x > 1, 1 - (u - x), x - (u - 1))
    result = _log_of_parts(k, m - 1, error / u)
    result = where(x.eq(INF), INF, result)
    result = where(x.eq(-1), -INF, result)
    result = where((x < -1) | x.isnan(), NAN, result)
    return where(x.eq(0), x, result)  # keeps -0


# --- tanh and logistic --------------------------------------------------------------

def _divide(a, d, d_err):
    """a / (d + d_err) to about half an ulp, with one division: q = a (1/d) and its
    correction (a - q d - q d_err) / d, where a - q d is exact by fma."""
    inverse = 1 / d
    q = a * inverse
    return q + ((-q).fma(d, a) - q * d_err) * inverse


# float32 tanh below TANH_F32_SMALL: |x| + |x|^3 P(x^2), P a minimax fit of
# (tanh a - a) / a^3 in a^2 to 0.14 ulp, coefficients rounded to float32 included.
TANH_F32_SMALL = 0.625
_TANH_F32 = _h("-0x1.555532p-2", "0x1.110726p-3", "-0x1.b83c58p-5", "0x1.52268ap-6",
               "-0x1.75e17ep-8")


def _tanh(x):
    """float32: an odd polynomial near 0, 1 - 2 / (e^2|x| + 1) beyond (where the
    quotient is below 0.45, so its rounding costs under half an ulp of the result), with
    e^2|x| built as in exp from 2|x| clamped to 20 (tanh rounds to 1 from 9.1 on): about
    half the operations of the expm1 form below, and no subnormal case.
    float64: tanh |x| = e / (e + 2) with e = expm1(2|x|), |x| clamped to 20 where tanh
    rounds to 1; e + 2 is taken exactly, as d + d_err, so that only e's error remains."""
    if not x.is_double:
        return _tanh_f32(x)
    a = x.abs()
    e = _expm1(2 * where(a > 20, 20.0, a))  # NaN stays NaN
    return _divide(e, *two_sum(e, 2.0)).copysign(x)


def _tanh_f32(x):
    a = x.abs()
    z = a * a
    small = a.fma(z * poly(z, _TANH_F32), a)
    k = _EXP["f32"]
    twice = clamp(2 * a, 0.0, 20.0)  # NaN: small is NaN, and is chosen
    n = (twice * LOG2E).rint()
    r = n.fma(-k.ln2_lo, n.fma(-k.ln2_hi, twice))  # the inner product is exact
    e_plus_1 = poly(r, (1.0, 1.0) + k.q).fma(_pow2(n), 1.0)
    large = 1 - 2 / e_plus_1
    return where(a > TANH_F32_SMALL, large, small).copysign(x)


def _logistic(x):
    """1 / (1 + e^-x) from e = e^-|x| <= 1, which cannot overflow: e / (1 + e) for x < 0,
    so that tiny results keep their relative accuracy down to the subnormals. As in tanh,
    1 + e is taken exactly."""
    e = _exp_finite(-x.abs())
    result = _divide(where(x < 0, e, 1.0), *fast_two_sum(e.const(1.0), e))
    return where(x.isnan(), x, result)


# --- sin, cos and tan ---------------------------------------------------------------
# x = n pi/2 + r, |r| <= pi/4, with pi/2 split into pieces whose products with n are
# exact: 33-bit pieces while n < 2^20. Then a sine or cosine polynomial in r, chosen and
# signed by n mod 4. sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2): Chebyshev
# fits on r^2 <= (pi/4)^2. float32 runs in float64 with shorter polynomials.

_Trig = namedtuple("_Trig", "pio2 sin cos")
_TRIG = {
    "f32_in_f64": _Trig(
        _h("0x1.921fb544p+0", "0x1.0b4611a626331p-34"),
        _h("-0x1.555555545e0a8p-3", "0x1.11110def2d86ap-7", "-0x1.a013a792ef046p-13",
           "0x1.6dbe07f6f90abp-19"),
        _h("0x1.5555555502cf3p-5", "-0x1.6c16bf54e6bf0p-10", "0x1.a015c47d0ad04p-16",
           "-0x1.25244df810869p-22")),
    "f64": _Trig(_h("0x1.921fb544p+0", "0x1.0b4611a6p-34", "0x1.3198a2e037073p-69"),
                 _h("-0x1.5555555555555p-3", "0x1.1111111110bb2p-7",
                    "-0x1.a01a019e83aa8p-13", "0x1.71de3796898c8p-19",
                    "-0x1.ae600b022d198p-26", "0x1.5e0b19c752b8ep-33"),
                 _h("0x1.5555555555555p-5", "-0x1.6c16c16c16967p-10",
                    "0x1.a01a019f4eafdp-16", "-0x1.27e4fa17d9c81p-22",
                    "0x1.1eeb68e8f6cdfp-29", "-0x1.907da33638fbcp-37")),
}
TWO_OVER_PI = float.fromhex("0x1.45f306dc9c883p-1")


def _in_f64(function):
    """float32 `function` computed in float64 and rounded once at the end."""
    def wrapped(*args):
        if args[0].is_double:
            return function(*args, consts="f64")
        return function(*(a.ext() for a in args), consts="f32_in_f64").trunc()
    return wrapped


def _reduce_pio2(x, consts):
    """(r, t, q): x = n pi/2 + r + t with t a tail below ulp(r) (float64; None for
    float32, where r alone is precise enough), q = n mod 4 as a float in {0, 1, 2, 3}.
    Past n = 2^20 the pieces' products are no longer exact and r drifts out of
    [-pi/4, pi/4]; clamping r and dropping t keeps sin and cos within [-1, 1] there."""
    n = (x * TWO_OVER_PI).rint()
    q = n - 4 * (n * 0.25).floor()
    first, *middle, last = _TRIG[consts].pio2
    r = x - n * first  # exact
    if not middle:
        return clamp(r - n * last, -0.8, 0.8), None, q
    r, t = two_sum(r, -(n * middle[0]))  # n * middle[0] is exact too
    r, t2 = two_sum(r, -(n * last))
    return clamp(r, -0.8, 0.8), where(n.abs() < 2.0 ** 20, t + t2, 0.0), q


def _sin_cos_of(r, t, consts):
    """(sin, cos) of r + t for |r| <= pi/4, with sin(r + t) ~ sin r + t (1 - r^2/2) and
    cos(r + t) ~ cos r - t r. cos as in fdlibm: w = 1 - r^2/2 and the rounding error of
    w, ((1 - w) - r^2/2), added back."""
    c = _TRIG[consts]
    z = r * r
    half_z = 0.5 * z
    sin_tail = r * z * poly(z, c.sin)
    cos_tail = z * z * poly(z, c.cos)
    if t is not None:
        sin_tail = sin_tail + t * (1 - half_z)
        cos_tail = cos_tail - r * t
    w = 1 - half_z
    return r + sin_tail, w + (((1 - w) - half_z) + cos_tail)


def _trig(x, consts, kind):
    finite = x.abs() < INF
    r, t, q = _reduce_pio2(where(finite, x, 0.0), consts)  # keep n finite
    sin, cos = _sin_cos_of(r, t, consts)
    odd = q.eq(1) | q.eq(3)
    if kind == "tan":
        result = where(odd, -cos, sin) / where(odd, sin, cos)
    else:
        if kind == "cos":  # cos x = sin(x + pi/2): one more quadrant
            odd, q = ~odd, q + 1
        result = where(odd, cos, sin)
        result = where(q >= 2, -result, result)
        result = where(q >= 4, -result, result)  # q = 4 is quadrant 0 again (cos only)
    if kind != "cos":
        result = where(x.eq(0), x, result)  # keeps -0
    return where(finite, result, NAN)


@_in_f64
def _sin(x, consts):
    return _trig(x, consts, "sin")


@_in_f64
def _cos(x, consts):
    return _trig(x, consts, "cos")


@_in_f64
def _tan(x, consts):
    return _trig(x, consts, "tan")


# --- pow ----------------------------------------------------------------------------
# |x|^y = exp(y log|x|) for finite nonzero x and finite y, then C99's special cases.
# float32 computes this in float64, where log and exp are accurate enough. float64 needs
# y log|x| to about 2^-64 relative (|y log x| reaches 745), so log|x| is computed as a
# double-double (hi + lo) with error-free products from fma, and exp takes a hi + lo input.

# A Chebyshev fit of (2 atanh s - 2s - 2s^3/3) / s^5 in s^2, on the range of _log.
_POW_TAIL = _h("0x1.999999999999ap-2", "0x1.2492492492521p-2", "0x1.c71c71c6eaa8cp-3",
               "0x1.745d177a8f30dp-3", "0x1.3b1395d4f2df4p-3", "0x1.1118c749a1ccap-3",
               "0x1.df7ce956c7572p-4", "0x1.e02d1cc03596ep-4")
TWO_THIRDS = _h("0x1.5555555555555p-1", "0x1.5555555555555p-55")
LN2 = _h("0x1.62e42fefa39efp-1", "0x1.abc9e3b39803fp-56")


def _log_dd(x):
    """log x as hi + lo, for positive finite float64 x: with s = f / (2 + f) as a
    double-double, log(1 + f) = 2s + (2/3) s^3 + s^5 P(s^2), the first two terms exact to
    about 2^-100 and the tail, below 2^-13 of the total, in plain float64."""
    k, m = _split(x)
    f = m - 1
    d = 2 + f
    d_lo = f - (d - 2)
    s = f / d
    s_lo = ((-s).fma(d, f) - s * d_lo) / d
    s2, s2_lo = two_prod(s, s)
    s2_lo = s2_lo + 2 * s * s_lo
    s3, s3_lo = two_prod(s2, s)
    s3_lo = s3_lo + (s2_lo * s + s2 * s_lo)
    t3, t3_lo = two_prod(s3, TWO_THIRDS[0])
    t3_lo = t3_lo + (s3 * TWO_THIRDS[1] + s3_lo * TWO_THIRDS[0])
    tail = s3 * s2 * poly(s2, _POW_TAIL)
    t, t_lo = fast_two_sum(t3, tail)
    hi, lo = fast_two_sum(2 * s, t)
    lo = lo + (t_lo + t3_lo + 2 * s_lo)
    kh, kl = two_prod(k, LN2[0])
    kl = kl + k * LN2[1]
    hi, lo2 = two_sum(kh, hi)
    return fast_two_sum(hi, lo2 + (kl + lo))


def _exp_dd(hi, lo):
    """e^(hi + lo) for |lo| <= ulp(hi), not NaN; overflow gives inf, underflow 0."""
    k = _EXP["f64"]
    clamped = clamp(hi, k.lo, k.hi)
    lo = where(clamped.eq(hi), lo, 0.0)
    n = (clamped * LOG2E).rint()
    r_hi = clamped - n * k.ln2_hi  # exact
    r, r_lo = two_sum(r_hi, lo - n * k.ln2_lo)
    # e^(r + r_lo) = e^r (1 + r_lo) to well below an ulp; e^r r_lo ~ (1 + r) r_lo
    return _scale(1 + (r + (r * r * poly(r, k.q) + (1 + r) * r_lo)), n)


def _pow_magnitude(ax, y):
    """|x|^y for finite positive |x| and finite y."""
    if ax.is_double:
        hi, lo = _log_dd(ax)
        p, p_lo = two_prod(y, hi)
        return _exp_dd(p, p_lo + y * lo)
    log = _log_finite(ax.ext(), "f32_in_f64")
    return _exp_finite(y.ext() * log, "f32_in_f64").trunc()


def _pow(x, y):
    ax = x.abs()
    x_regular = (ax < INF) & (ax > 0)
    y_finite = y.abs() < INF
    magnitude = _pow_magnitude(where(x_regular, ax, 1.0), where(y_finite, y, 0.0))
    # |x| = 0 or inf, or y = +-inf: 1 if |x| = 1, else 0 or inf by whether |x| > 1 and
    # y > 0 agree
    extreme = where(ax.eq(1), 1.0, where((ax > 1).eq(y > 0), ax.const(INF), 0.0))
    magnitude = where(x_regular & y_finite, magnitude, extreme)
    y_integer = y.floor().eq(y)
    y_odd = y_integer & ~((y * 0.5).floor() * 2).eq(y)
    sign_bit = (x.bits() >> (x.fmt.itype.width - 1)).eq(1)  # also set on -0
    result = where(sign_bit & y_odd, -magnitude, magnitude)
    result = where((x < 0) & (x > -INF) & ~y_integer, NAN, result)
    result = where(x.isnan() | y.isnan(), NAN, result)
    return where(y.eq(0) | x.eq(1), 1.0, result)


_BODIES = {"exp": _exp, "log": _log, "log1p": _log1p, "expm1": _expm1, "tanh": _tanh,
           "logistic": _logistic, "sin": _sin, "cos": _cos, "tan": _tan, "pow": _pow}
