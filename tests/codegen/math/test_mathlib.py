"""mathlib against NumPy: accuracy in ulp, special values, vectorization, the route switch.

Each function is compiled into a loop `out[i] = f(x[i])` (a module per dtype and route
holding all ten kernels) and run through ctypes. The reference is NumPy one precision up:
float64 for float32 inputs, long double (64-bit mantissa) for float64 inputs, so the
error is measured against the (nearly) exact value, in units of the last place of that
value in the tested dtype. Sweeps: a log-spaced grid over the whole float range of both
signs, subnormals, zeros, infinities and NaN; the overflow, underflow and saturation
thresholds; dense linear grids where each function has its structure; multiples of pi/2;
and hypothesis-drawn values. sin, cos and tan are checked densely for |x| <= 1e5 and
sparsely up to 1.6e6, the limit of their accurate range.

Measured max ulp error on this machine (znver5, AVX-512, glibc 2.36 libmvec), over these
tests' sweeps; in parentheses, offline checks: every float32 input (sin, cos, tan:
|x| <= 1.6e6; pow: not exhaustive) and 36M random float64 inputs per function.

    function  f32 inline  f32 libmvec  f64 inline  f64 libmvec
    exp        0.98 (1.02)  2.46 (2.64)  0.92 (0.94)  2.81 (3.04)
    log        0.79 (0.84)  3.85 (3.94)  0.77 (0.84)  1.50 (1.58)
    log1p      0.79 (0.87)  1.68 (1.96)  0.77 (0.84)  1.87 (1.92)
    expm1      1.41 (1.49)  2.30 (2.35)  1.43 (1.44)  2.08 (2.08)
    tanh       1.27 (1.37)  1.36 (1.37)  1.48 (1.56)  1.18 (1.18)
    logistic   1.40 (1.48)  1.40 (1.48)  1.32 (1.43)  1.32 (1.47)
    sin        0.50 (0.50)  2.11 (2.11)  0.81 (0.88)  3.13 (3.27)
    cos        0.50 (0.50)  2.01 (2.01)  0.80 (0.86)  3.23 (3.49)
    tan        0.50 (0.50)  3.37 (3.82)  2.17 (2.25)  3.17 (3.29)
    pow        0.50         0.62         0.83 (1.38)  1.00 (1.00)

logistic has no libmvec variant, so both of its columns run the inline code. float32
exp inline is math_inline.py's _exp_f32 (AVX-512 hosts), measured on an Intel Xeon
(Emerald Rapids): every float32 input through a compiled function's vector loop. Run with
`pytest -s` to see each test's measured maximum.
"""
import ctypes
import functools
import re

import llvmlite.ir as ir
import numpy as np

import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from jitflow.codegen.emitter import element_of
from jitflow.codegen.jit import engine
from jitflow.codegen.jit.engine import CompiledModule
from jitflow.codegen.math import arithmetic, math_inline, mathlib

NAMES = tuple(mathlib.ARITY)
DTYPES = (np.float32, np.float64)
ROUTES = ("inline", "libmvec")
MAX_ULP = 4.0
TRIG_RANGE = 1e5  # tested densely
TRIG_LIMIT = 1.6e6  # < 2^20 pi/2: accurate up to here, tested sparsely
HAS_LIBMVEC = mathlib.has_libmvec()

# The inline route scales by 2^n in one llvm.ldexp on AVX-512 hosts (math_inline.py);
# TWO_STEPS forces the other way, which hosts without AVX-512 take.
TWO_STEPS = "inline, two-step scaling"
route_param = pytest.mark.parametrize("route", [
    "inline", TWO_STEPS, pytest.param("libmvec", marks=pytest.mark.skipif(
        not HAS_LIBMVEC, reason="no libmvec on this platform"))])
dtype_param = pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])


# --- compiling and running kernels ---------------------------------------------------

def _ftype(dtype):
    return mathlib.F32 if dtype == np.float32 else mathlib.F64


def _loop(module, fname, ftype, body, lanes=1):
    """void fname(x*, y*, out*, i64 n): out[i] = body(builder, x[i], y[i]), for i < n;
    with lanes > 1, each i a vector of that many elements."""
    ftype = ftype if lanes == 1 else ir.VectorType(ftype, lanes)
    ptr, i64 = ir.PointerType(), ir.IntType(64)
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr, i64]),
                           fname)
    x, y, out, n = function.args
    for pointer in (x, y, out):
        pointer.add_attribute("noalias")
    entry, loop, done = (function.append_basic_block(b) for b in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, i64(0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(i64)
    i.add_incoming(i64(0), entry)
    align = 4 if element_of(ftype) == mathlib.F32 else 8  # NumPy's arrays: the element's
    load = lambda p: b.load(b.gep(p, [i], source_etype=ftype), typ=ftype,  # noqa: E731
                            align=align)
    b.store(body(b, load(x), load(y)), b.gep(out, [i], source_etype=ftype), align=align)
    following = b.add(i, i64(1))
    i.add_incoming(following, loop)
    b.cbranch(b.icmp_signed("<", following, n), loop, done)
    b.position_at_end(done)
    b.ret_void()


def _apply(name):
    return lambda b, x, y: mathlib.call(b, name, *(x, y)[:mathlib.ARITY[name]])


def _chain(b, x, y):
    """Several calls in one loop body, one function twice: cos(sin x) + exp(sin x)."""
    s = mathlib.call(b, "sin", x)
    return b.fadd(mathlib.call(b, "cos", s), mathlib.call(b, "exp", s))


class Kernels:
    """All of mathlib's functions, plus _chain, compiled into one module."""

    def __init__(self, dtype, route, lanes=1):
        self.dtype, self.lanes = dtype, lanes
        self.module = ir.Module(f"mathlib_{np.dtype(dtype).name}_{route}_{lanes}")
        mathlib.set_route("inline" if route == TWO_STEPS else route)
        math_inline.ONE_STEP_SCALE = False if route == TWO_STEPS else None
        try:
            for name in NAMES:
                _loop(self.module, "k_" + name, _ftype(dtype), _apply(name), lanes)
            _loop(self.module, "k_chain", _ftype(dtype), _chain, lanes)
        finally:
            mathlib.set_route(None)
            math_inline.ONE_STEP_SCALE = None
        self.compiled = CompiledModule(self.module)
        signature = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3, ctypes.c_int64)
        self.kernels = {name: signature(self.compiled.address("k_" + name))
                        for name in NAMES + ("chain",)}

    def __call__(self, name, x, y=None):
        size = np.size(x)
        x = self._padded(x)
        y = x if y is None else self._padded(y)
        out = np.empty_like(x)
        self.kernels[name](x.ctypes.data, y.ctypes.data, out.ctypes.data,
                           x.size // self.lanes)
        return out[:size]

    def _padded(self, values):
        """values as contiguous dtype, padded with ones to whole vectors."""
        values = np.asarray(values, self.dtype).ravel()
        return np.concatenate([values, np.ones(-values.size % self.lanes, self.dtype)])


@functools.cache
def kernels(dtype, route, lanes=1):
    return Kernels(dtype, route, lanes)


# --- references and ulp errors -------------------------------------------------------

WIDE = {np.float32: np.float64, np.float64: np.longdouble}


def _logistic(x):
    e = np.exp(-np.abs(x))
    return np.where(x < 0, e / (1 + e), 1 / (1 + e))


def exact(name, x, y=None):
    """NumPy's result one precision up: the reference the ulp errors are measured from."""
    wide = WIDE[x.dtype.type]
    x = x.astype(wide)
    with np.errstate(all="ignore"):
        if name == "pow":
            return np.power(x, y.astype(wide))
        if name == "logistic":
            return _logistic(x)
        return getattr(np, name)(x)


def ulp_errors(got, want, dtype):
    """|got - want| in units of the last place of `want` in `dtype` (subnormal spacing
    below the normal range). 0 where got is want rounded (infinities, signed zeros) or
    both are NaN; inf where NaN-ness, infinity or the sign of a zero disagree."""
    info = np.finfo(dtype)
    with np.errstate(all="ignore"):
        rounded = want.astype(dtype)
        _, exponent = np.frexp(want)
        spacing = np.ldexp(np.ones_like(want), np.maximum(exponent - 1 - info.nmant,
                                                          info.minexp - info.nmant))
        errors = np.abs(got.astype(want.dtype) - want) / spacing
    same = (got == rounded) & (np.signbit(got) == np.signbit(rounded))
    errors[~(np.isfinite(got) & np.isfinite(want))] = np.inf
    errors[same | (np.isnan(got) & np.isnan(want))] = 0
    return errors.astype(np.float64)


def check(name, dtype, route, x, y=None, limit=MAX_ULP, lanes=1):
    """Run the kernel (calls on vectors of `lanes`, if more than 1); assert max ulp
    error <= limit; report and return it."""
    x = np.asarray(x, dtype)
    y = None if y is None else np.asarray(y, dtype)
    got = kernels(dtype, route, lanes)(name, x, y)
    errors = ulp_errors(got, exact(name, x, y), dtype)
    worst = int(np.argmax(errors))
    at = slice(worst, worst + 1)
    location = f"x={x[worst]!r}" + ("" if y is None else f", y={y[worst]!r}")
    want = exact(name, x[at], None if y is None else y[at])[0]
    report = (f"{name} {np.dtype(dtype).name} {route}: max {errors[worst]:.3f} ulp over "
              f"{x.size} points, at {location}: got {got[worst]!r}, want {want!r}")
    print(report)
    assert errors[worst] <= limit, report
    return errors[worst]


# --- inputs --------------------------------------------------------------------------

def geomspace(start, stop, n):
    with np.errstate(over="ignore"):  # an intermediate overflows; the end point is exact
        return np.geomspace(start, stop, n)


def log_grid(dtype, n=300_000):
    """n magnitudes spread evenly in log scale from the smallest subnormal to the
    largest float, both signs, plus zeros, infinities and NaN."""
    info = np.finfo(dtype)
    magnitudes = geomspace(float(info.smallest_subnormal), float(info.max), n // 2)
    magnitudes = magnitudes.astype(dtype)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)
    return np.concatenate([magnitudes, -magnitudes, specials])


def around(values, dtype, ulps=64, width=0.0, n=2000):
    """Each value rounded to dtype with its `ulps` neighbours either side, plus n points
    spread linearly over +-width around it."""
    values = np.asarray(values, dtype)
    steps = np.arange(-ulps, ulps + 1)
    bits = {np.float32: np.int32, np.float64: np.int64}[dtype]
    near = (values.view(bits)[:, None] + steps).ravel().view(dtype)
    spread = (values[:, None] + np.linspace(-width, width, n)).ravel().astype(dtype)
    return np.concatenate([near, spread])


def thresholds(name, dtype):
    """Where each function changes regime: overflow, underflow, saturation, 0 and 1."""
    info = np.finfo(dtype)
    overflow, underflow = np.log(float(info.max)), np.log(float(info.smallest_subnormal))
    normal = np.log(float(info.smallest_normal))
    saturate = {np.float32: (9.0, 17.0, 17.4), np.float64: (19.1, 36.7, 38.0)}[dtype]
    regions = {
        "exp": ([overflow, underflow, normal, 0.0, 0.5 * np.log(2)], 1.0),
        "expm1": ([overflow, 0.0, np.log(2), -np.log(2), -saturate[2]], 1.0),
        "tanh": ([0.0, 0.55, saturate[0], -saturate[0]], 0.5),
        "logistic": ([saturate[1], -saturate[1], underflow, normal, 0.0], 1.0),
        "log": ([1.0, 2.0, 0.5, float(info.smallest_normal)], 0.25),
        "log1p": ([0.0, -1.0 + float(info.eps), 1.0, -0.5], 0.25),
    }
    values, width = regions.get(name, ([0.0], 4.0))
    return around(values, dtype, width=width, n=50_000)


def pi_over_2_multiples(dtype, limit=TRIG_RANGE):
    """k pi/2 rounded to dtype for every k up to limit, and their neighbours."""
    k = np.arange(-int(limit / (np.pi / 2)), int(limit / (np.pi / 2)) + 1)
    centres = (k.astype(np.longdouble) * np.longdouble(np.pi) / 2).astype(dtype)
    bits = {np.float32: np.int32, np.float64: np.int64}[dtype]
    return np.concatenate([(centres.view(bits) + d).view(dtype) for d in (-1, 0, 1)])


def sweep(name, dtype):
    x = np.concatenate([log_grid(dtype), thresholds(name, dtype)])
    if name in ("sin", "cos", "tan"):
        x = x[~(np.abs(x) > TRIG_RANGE)]  # keeps NaN
        x = np.concatenate([x, np.array([np.inf, -np.inf], dtype),
                            np.linspace(-TRIG_RANGE, TRIG_RANGE, 200_000, dtype=dtype),
                            np.linspace(-10, 10, 100_001, dtype=dtype)])
    return x


def pow_pairs(dtype, seed=0):
    """(x, y): a grid of x (both signs, the whole range) by y (integers, halves, wide
    and tiny values), plus pairs whose y log|x| covers the whole finite range of results,
    and x next to 1 with large y."""
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    xs = geomspace(float(info.smallest_subnormal), float(info.max), 300)
    xs = np.concatenate([xs, -xs[::3], [1.0, -1.0, 2.0, 0.5, 10.0]])
    ys = np.concatenate([np.arange(-40, 41), np.arange(-20.5, 21, 1.0),
                         rng.uniform(-100, 100, 100), np.geomspace(1e-10, 1e4, 60),
                         -np.geomspace(1e-10, 1e4, 60)])
    gx, gy = (a.ravel() for a in np.meshgrid(xs, ys))
    top, bottom = np.log(float(info.max)), np.log(float(info.smallest_subnormal))
    x = np.exp(rng.uniform(np.log(1e-30), np.log(1e30), 100_000))
    t = rng.uniform(bottom, top, x.size)
    near_one = 1 + rng.uniform(-1e3, 1e3, 20_000) * float(info.eps)
    big_y = rng.uniform(-1, 1, near_one.size) / float(info.eps)
    return (np.concatenate([gx, x, near_one]).astype(dtype),
            np.concatenate([gy, t / np.log(x), big_y]).astype(dtype))


# --- accuracy ------------------------------------------------------------------------

@route_param
@dtype_param
@pytest.mark.parametrize("name", [n for n in NAMES if n != "pow"])
def test_dense_sweep(name, dtype, route):
    check(name, dtype, route, sweep(name, dtype))


@route_param
@dtype_param
def test_pow_sweep(dtype, route):
    check("pow", dtype, route, *pow_pairs(dtype))


@route_param
@dtype_param
@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_near_multiples_of_pi_over_2(name, dtype, route):
    check(name, dtype, route, pi_over_2_multiples(dtype))


@route_param
@dtype_param
@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_up_to_its_limit(name, dtype, route):
    x = np.random.default_rng(1).uniform(TRIG_RANGE, TRIG_LIMIT, 100_000).astype(dtype)
    check(name, dtype, route, np.concatenate([x, -x]))


@dtype_param
@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_beyond_its_limit_stays_bounded(name, dtype):
    x = geomspace(TRIG_LIMIT, float(np.finfo(dtype).max), 10_000).astype(dtype)
    got = kernels(dtype, "inline")(name, np.concatenate([x, -x]))
    assert not np.any(np.isnan(got))
    if name != "tan":
        assert np.all(np.abs(got) <= 1)


def _floats(dtype, name):
    """Any float (finite for trig, within its dense range), often a moderate one."""
    width = np.dtype(dtype).itemsize * 8
    moderate = st.floats(-50, 50, width=width)
    if name in ("sin", "cos", "tan"):
        return st.one_of(moderate, st.floats(-TRIG_RANGE, TRIG_RANGE, width=width))
    return st.one_of(moderate, st.floats(width=width))


@route_param
@dtype_param
@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_hypothesis_values(name, dtype, route, data):
    size = data.draw(st.integers(1, 40), label="size")
    x = data.draw(hnp.arrays(dtype, size, elements=_floats(dtype, name)), label="x")
    y = None
    if name == "pow":
        y = data.draw(hnp.arrays(dtype, size, elements=_floats(dtype, name)), label="y")
    check(name, dtype, route, x, y)


@pytest.mark.parametrize("bits", [128, 256, 512])
@dtype_param
@pytest.mark.parametrize("name", NAMES)
def test_calls_on_vectors(name, dtype, bits):
    """The inline route called on vectors, as loops/vector_loops.py calls it: the same
    accuracy and special values on every register width. float32 exp takes vscalef
    there on AVX-512 hosts (math_inline.py's _exp_f32), ldexp on scalars."""
    lanes = bits // (8 * np.dtype(dtype).itemsize)
    args = pow_pairs(dtype) if name == "pow" else (sweep(name, dtype),)
    check(name, dtype, "inline", *args, lanes=lanes)


def test_float32_exp_on_whole_registers_scales_with_vscalef():
    vector = ir.VectorType(mathlib.F32, 16)
    text = str(kernels(np.float32, "inline", 16).module)
    uses_scalef = "llvm.x86.avx512.mask.scalef.ps.512" in text
    assert uses_scalef == arithmetic.scalef_fits(vector, math_inline.host_features())


@route_param
@dtype_param
def test_several_calls_in_one_loop(dtype, route):
    x = np.linspace(-20, 20, 10_001, dtype=dtype)
    s = np.sin(x)
    want = np.cos(s) + np.exp(s)
    np.testing.assert_allclose(kernels(dtype, route)("chain", x), want,
                               rtol=8 * np.finfo(dtype).eps)


# --- special values ------------------------------------------------------------------

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0,
            -3.0, 2.5, -2.5, 1e-30, -1e-30, 1e30, -1e30]


def _numpy_same_dtype(name, x, y=None):
    with np.errstate(all="ignore"):
        if name == "pow":
            return np.power(x, y)
        if name == "logistic":
            return _logistic(x.astype(np.float64)).astype(x.dtype)
        return getattr(np, name)(x)


def _assert_same_specials(name, dtype, got, want, x, y=None):
    """NaN where NumPy gives NaN, and identical infinities and signed zeros."""
    special = np.isnan(want) | np.isinf(want) | (want == 0)
    mismatch = special & ~((np.isnan(got) & np.isnan(want))
                           | ((got == want) & (np.signbit(got) == np.signbit(want))))
    rows = [f"{name}({x[i]!r}" + ("" if y is None else f", {y[i]!r}")
            + f") = {got[i]!r}, NumPy: {want[i]!r}" for i in np.flatnonzero(mismatch)]
    assert not rows, "\n".join(rows)


@route_param
@dtype_param
@pytest.mark.parametrize("name", [n for n in NAMES if n != "pow"])
def test_special_values_like_numpy(name, dtype, route):
    x = np.array(SPECIALS, dtype)
    got = kernels(dtype, route)(name, x)
    _assert_same_specials(name, dtype, got, _numpy_same_dtype(name, x), x)


@route_param
@dtype_param
def test_pow_special_values_like_numpy(dtype, route):
    gx, gy = (a.ravel().astype(dtype) for a in np.meshgrid(SPECIALS, SPECIALS))
    got = kernels(dtype, route)("pow", gx, gy)
    _assert_same_specials("pow", dtype, got, _numpy_same_dtype("pow", gx, gy), gx, gy)


@route_param
@dtype_param
@pytest.mark.parametrize("name, x, y, want", [
    ("expm1", -0.0, None, -0.0), ("tanh", -0.0, None, -0.0), ("sin", -0.0, None, -0.0),
    ("tan", -0.0, None, -0.0), ("log1p", -0.0, None, -0.0), ("log", 0.0, None, -np.inf),
    ("log", -0.0, None, -np.inf), ("log", -1.0, None, np.nan),
    ("log1p", -1.0, None, -np.inf), ("log1p", -2.0, None, np.nan),
    ("exp", -np.inf, None, 0.0), ("exp", np.inf, None, np.inf),
    ("logistic", -np.inf, None, 0.0), ("logistic", np.inf, None, 1.0),
    ("logistic", -0.0, None, 0.5), ("cos", -0.0, None, 1.0), ("sin", np.inf, None, np.nan),
    ("pow", np.nan, 0.0, 1.0), ("pow", 1.0, np.nan, 1.0), ("pow", -2.0, 0.5, np.nan),
    ("pow", -0.0, -3.0, -np.inf), ("pow", 0.0, -3.0, np.inf), ("pow", -0.0, 3.0, -0.0),
    ("pow", -0.0, -2.0, np.inf), ("pow", -1.0, np.inf, 1.0), ("pow", 0.5, -np.inf, np.inf),
    ("pow", -np.inf, -3.0, -0.0), ("pow", -np.inf, 3.0, -np.inf),
    ("pow", -np.inf, 0.5, np.inf), ("pow", -8.0, 1 / 3, np.nan), ("pow", -2.0, 3.0, -8.0),
])
def test_c99_cases(name, x, y, want, dtype, route):
    args = [np.array([x], dtype)] + ([] if y is None else [np.array([y], dtype)])
    got = kernels(dtype, route)(name, *args)[0]
    assert (np.isnan(got) and np.isnan(want)) or (
        got == want and np.signbit(got) == np.signbit(want)), (name, x, y, got)


# --- vectorization -------------------------------------------------------------------

def _vector_body(optimized_ir, function):
    text = optimized_ir.split(f"@k_{function}(", 1)[1].split("\n}\n", 1)[0]
    assert "vector.body:" in text, f"k_{function} was not vectorized"
    return text.split("vector.body:", 1)[1].split("\n\n", 1)[0]


@route_param
@dtype_param
@pytest.mark.parametrize("name", NAMES + ("chain",))
def test_loop_vectorizes_without_scalar_calls(name, dtype, route):
    """Full-width vectors of the dtype; for float32 functions computed in float64
    (inline sin, cos, tan, pow, chain) full-width vectors of double."""
    bits = mathlib.vector_bits()
    scalar = str(_ftype(dtype))
    body = _vector_body(kernels(dtype, route).compiled.optimized_ir, name)
    full = [f"<{bits // (8 * np.dtype(dtype).itemsize)} x {scalar}>"]
    if dtype == np.float32 and route in ("inline", TWO_STEPS):
        full.append(f"<{bits // 64} x double>")
    assert any(vector in body for vector in full), f"no {' or '.join(full)} in the loop"
    assert f"call {scalar} @" not in body, "scalar call left in the vector body"
    assert f"call fast {scalar} @" not in body
    if route == "libmvec" and name not in ("logistic", "chain"):
        assert "@_ZGV" in body


# --- the route switch and the module's helpers ---------------------------------------

def _module_with(names, ftype=mathlib.F32):
    module = ir.Module("m")
    function = ir.Function(module, ir.FunctionType(ftype, [ftype]), "f")
    b = ir.IRBuilder(function.append_basic_block("entry"))
    value = function.args[0]
    for name in names:
        value = mathlib.call(b, name, *[value] * mathlib.ARITY[name])
    b.ret(value)
    return module


def test_helpers_are_defined_once_per_module():
    mathlib.set_route("inline")
    try:
        text = str(_module_with(["exp", "exp", "sin", "exp"]))
    finally:
        mathlib.set_route(None)
    assert text.count('define internal float @"jitflow.math.exp.f32"') == 1
    assert text.count('define internal float @"jitflow.math.sin.f32"') == 1
    CompiledModule(text)


@pytest.mark.skipif(not HAS_LIBMVEC, reason="no libmvec on this platform")
def test_libmvec_declarations_are_made_once_and_kept_alive():
    mathlib.set_route("libmvec")
    try:
        text = str(_module_with(["exp", "exp", "tanh", "exp", "logistic"]))
    finally:
        mathlib.set_route(None)
    assert text.count('declare float @"expf"') == 1
    (used,) = [line for line in text.splitlines() if "llvm.compiler.used" in line]
    # every variant once (one per vector length the host has), none twice
    names = re.findall(r'@"(_ZGV\w+)"', used)
    assert len(names) == len(set(names)) == 2 * len(mathlib._libmvec_variants("exp", mathlib.F32))
    assert {n.split("_")[-1] for n in names} == {"expf", "tanhf"}
    assert "jitflow.math.logistic.f32" in text  # no libmvec variant: inline
    CompiledModule(text)


def test_route_switch(monkeypatch):
    monkeypatch.setenv("JITFLOW_MATH", "inline")
    assert mathlib.get_route() == "inline"
    assert mathlib.route_for("exp", mathlib.F32) == "inline"
    mathlib.set_route("auto")
    try:
        assert mathlib.get_route() == "auto"
        assert mathlib.route_for("logistic", mathlib.F64) == "inline"
        expected = "libmvec" if HAS_LIBMVEC else "inline"
        assert mathlib.route_for("exp", mathlib.F64) == expected
    finally:
        mathlib.set_route(None)
    monkeypatch.setenv("JITFLOW_MATH", "fast")
    with pytest.raises(ValueError, match="JITFLOW_MATH.*'fast'"):
        mathlib.get_route()
    with pytest.raises(ValueError, match="set_route"):
        mathlib.set_route("libm")


def test_auto_takes_inline_float32_exp_on_avx512_in_loops_without_other_calls():
    """exp alone (or beside call-free functions) goes inline where the target scales in
    one step; beside a libmvec or libm call it goes where libmvec takes it."""
    inline_first = math_inline.scale_in_one_step()
    alone = "inline" if inline_first or not HAS_LIBMVEC else "libmvec"
    beside_calls = "libmvec" if HAS_LIBMVEC else "inline"
    mathlib.set_route("auto")
    try:
        assert mathlib.route_for("exp", mathlib.F32) == alone  # loop unknown: alone
        with mathlib.loop_calling({"exp", "logistic"}):
            assert mathlib.route_for("exp", mathlib.F32) == alone
        with mathlib.loop_calling({"exp", "sin"}):
            assert mathlib.route_for("exp", mathlib.F32) == beside_calls
            with mathlib.loop_calling({"exp"}):  # a loop emitted inside that one
                assert mathlib.route_for("exp", mathlib.F32) == alone
            assert mathlib.route_for("exp", mathlib.F32) == beside_calls
        with mathlib.loop_calling({"exp", "cbrt"}):  # libm's cbrt is a call too
            assert mathlib.route_for("exp", mathlib.F32) == beside_calls
        expected = "libmvec" if HAS_LIBMVEC else "inline"
        assert mathlib.route_for("exp", mathlib.F64) == expected
    finally:
        mathlib.set_route(None)


def test_without_libmvec_auto_is_inline_and_libmvec_an_error(monkeypatch):
    monkeypatch.setattr(engine, "libmvec", lambda: None)
    mathlib._libmvec_variants.cache_clear()  # it remembers the library's symbols
    try:
        assert mathlib.route_for("exp", mathlib.F64) == "inline"
        mathlib.set_route("libmvec")
        with pytest.raises(RuntimeError, match="no libmvec"):
            mathlib.route_for("exp", mathlib.F64)
    finally:
        mathlib.set_route(None)
        mathlib._libmvec_variants.cache_clear()


def test_bad_calls_name_the_problem():
    module = ir.Module("m")
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [mathlib.F32,
                                                                  mathlib.F64]), "f")
    b = ir.IRBuilder(function.append_basic_block("entry"))
    x32, x64 = function.args
    with pytest.raises(ValueError, match="unknown function 'erf'"):
        mathlib.call(b, "erf", x32)
    with pytest.raises(TypeError, match="pow takes 2"):
        mathlib.call(b, "pow", x32)
    with pytest.raises(TypeError, match="one type"):
        mathlib.call(b, "pow", x32, x64)


# --- functions without an inline version: libmvec's, or libm's one element at a time ------

NUMPY_NAMES = {"atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "atan2": np.arctan2,
               "cbrt": np.cbrt, "nextafter": np.nextafter}


@pytest.mark.parametrize("route", ["inline", pytest.param("libmvec", marks=pytest.mark.skipif(
    not HAS_LIBMVEC, reason="no libmvec on this platform"))])
@dtype_param
@pytest.mark.parametrize("name", sorted(mathlib.LIBM_ONLY))
def test_functions_without_an_inline_version(name, dtype, route):
    """atan, asin, acos, atan2, cbrt, nextafter on either route (the inline one calls
    libm): within
    MAX_ULP of the value one precision up; NaN, infinities and signed zeros as NumPy."""
    module = ir.Module(f"libm_{name}_{np.dtype(dtype).name}_{route}")
    mathlib.set_route(route)
    try:
        _loop(module, "k", _ftype(dtype), lambda b, x, y: mathlib.call(
            b, name, *(x, y)[:mathlib.LIBM_ONLY[name]]))
    finally:
        mathlib.set_route(None)
    compiled = CompiledModule(module)
    kernel = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3, ctypes.c_int64)(
        compiled.address("k"))
    special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30]
    x = np.concatenate([np.linspace(-1.5, 1.5, 3001), np.geomspace(1e-8, 1e30, 200),
                        special]).astype(dtype)
    y = np.random.default_rng(0).permutation(x)
    out = np.empty_like(x)
    kernel(x.ctypes.data, y.ctypes.data, out.ctypes.data, x.size)
    args = (x, y)[:mathlib.LIBM_ONLY[name]]
    with np.errstate(all="ignore"):
        expected = NUMPY_NAMES[name](*args)
        exact = NUMPY_NAMES[name](*(a.astype(WIDE[dtype]) for a in args))
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    if name == "nextafter":  # exact: the neighbouring float itself
        np.testing.assert_array_equal(out, expected)
        return
    finite = np.isfinite(expected)
    infinite = ~finite & ~np.isnan(expected)
    np.testing.assert_array_equal(out[infinite], expected[infinite])
    zero = finite & (expected == 0)
    np.testing.assert_array_equal(np.signbit(out[zero]), np.signbit(expected[zero]))
    unit = np.spacing(np.abs(exact[finite]).astype(dtype)).astype(WIDE[dtype])
    error = np.abs(out[finite].astype(WIDE[dtype]) - exact[finite]) / unit
    assert error.max() <= MAX_ULP, f"{name}: {float(error.max()):.2f} ulp"
