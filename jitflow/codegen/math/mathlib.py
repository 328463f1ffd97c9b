"""Vectorizable math functions for the loops that codegen emits.

    value = mathlib.call(builder, "exp", x)   # x: a float or double, or a vector of them
    value = mathlib.call(builder, "pow", x, y)

On scalars, `call` emits a scalar call that LLVM's loop vectorizer can widen; on vectors,
the vector code itself. Either way by one of two routes:

- "libmvec", glibc's vector math library: a call to the scalar libm function (`expf`),
  declared readnone, whose `vector-function-abi-variant` attribute names the libmvec
  variant for this host's widest vector unit (`_ZGVeN16v_expf` on AVX-512). The vector
  declaration is listed in `@llvm.compiler.used`, or the optimizer deletes it before the
  vectorizer looks for it. A vector argument calls the variant directly, in pieces of
  its width. jit/engine.py loads libmvec into the process for the JIT.
- "inline", our own implementations (math_inline.py), emitted once per
  module as internal alwaysinline functions named `jitflow.math.<name>.<f32|f64>`. They
  have neither branches (selects only) nor tables, so once inlined into a loop they
  vectorize like plain arithmetic.

atan, asin, acos, atan2, cbrt and nextafter have no inline version: they take libmvec
where it has them, and otherwise (or on the inline route) libm's scalar function, one call per
element, in loops that then stay scalar.

The route is picked per function: set_route("auto" | "libmvec" | "inline"), or the
JITFLOW_MATH environment variable with the same values. "auto", the default, takes libmvec
where the platform has the function and inline code elsewhere, and inline code for
float32 exp on AVX-512 targets too, where it is the faster (_inline_is_faster);
"libmvec" insists on the library (an error where there is none); logistic has no
libmvec variant and is always inline.

Accuracy, measured by tests/codegen/math/test_mathlib.py (which has the table): the inline
code stays within 1.6 ulp of the exact result (float64 tan: 2.3), libmvec within 4, on
float32 and float64, with NumPy's special values (NaN, +-inf, signed zeros, the C99
cases of pow). float32 sin, cos, tan and pow are computed in float64 and rounded once.
"""
import contextvars
import functools
import os
from collections import namedtuple
from contextlib import contextmanager

import llvmlite.ir as ir

from ..emitter import I32, element_of, joined, lanes
from ..jit import engine, target
from .arithmetic import F32, F64, declare
from .math_inline import ARITY, inline_function, scale_in_one_step
from .saturation import guarded

ROUTES = ("auto", "libmvec", "inline")
# Functions without an inline version (see the module's docstring), and their arity.
LIBM_ONLY = {"atan": 1, "asin": 1, "acos": 1, "atan2": 2, "cbrt": 1, "nextafter": 2}


def call(builder, name, *args):
    """Emit `name(*args)` at `builder`'s position; a value of the arguments' type."""
    ftype = _check_call(name, args)
    route = route_for(name, element_of(ftype))
    if route == "libmvec":
        libmvec = _libmvec_vector_call if isinstance(ftype, ir.VectorType) else \
            _libmvec_call
        return guarded(builder, name, ftype, element_of(ftype), args,
                       lambda safe: libmvec(builder, name, ftype, safe))
    if route == "libm":
        return _libm_call(builder, name, ftype, args)
    return builder.call(inline_function(builder.module, name, ftype), args)


def _arity(name):
    return LIBM_ONLY[name] if name in LIBM_ONLY else ARITY[name]


def _check_call(name, args):
    if name not in ARITY and name not in LIBM_ONLY:
        raise ValueError(f"mathlib.call: unknown function {name!r}; "
                         f"known: {', '.join([*ARITY, *LIBM_ONLY])}")
    if len(args) != _arity(name):
        raise TypeError(f"mathlib.call: {name} takes {_arity(name)} argument(s), "
                        f"got {len(args)}")
    types = {a.type for a in args}
    if len(types) != 1 or element_of(args[0].type) not in (F32, F64):
        raise TypeError(f"mathlib.call: {name} needs float or double arguments of one "
                        f"type, got {', '.join(str(a.type) for a in args)}")
    return args[0].type


# --- the route switch ---------------------------------------------------------------

_forced_route = None


def set_route(route):
    """Choose how math calls are emitted from now on; None defers to JITFLOW_MATH again."""
    global _forced_route
    _forced_route = None if route is None else _checked_route(route, "set_route")


def get_route():
    if _forced_route is not None:
        return _forced_route
    return _checked_route(os.environ.get("JITFLOW_MATH", "").strip().lower() or "auto",
                          "JITFLOW_MATH")


def _checked_route(route, where):
    if route not in ROUTES:
        raise ValueError(f"{where}: unknown math route {route!r}; "
                         f"choose one of {', '.join(ROUTES)}")
    return route


def route_for(name, ftype):
    """'libmvec', 'inline' or 'libm': how `call` emits `name` on `ftype` under the
    current route."""
    route = get_route()
    if name in LIBM_ONLY and (route == "inline" or not _libmvec_variants(name, ftype)):
        return "libm"
    if route == "inline":
        return "inline"
    if route == "libmvec" and not has_libmvec():
        raise RuntimeError("math route 'libmvec' was asked for (set_route or JITFLOW_MATH),"
                           " but this platform has no libmvec")
    if route == "auto" and _inline_is_faster(name, ftype):
        return "inline"
    return "libmvec" if _libmvec_variants(name, ftype) else "inline"


def _inline_is_faster(name, ftype):
    """Where "auto" takes the inline code although libmvec has the function: float32
    exp on AVX-512 (math_inline.py's _exp_f32), in a loop that calls no other function
    (loop_calling). Measured in one process, the routes taking turns (Intel Xeon,
    Emerald Rapids, 2 threads), in paired medians of the time with libmvec's expf:
    0.92 for a 4096x1024 float32 softmax, 0.91 for exp of 4M float32, 0.65 for a
    softmax over rows of 64 and 0.85 for one masked causally with -1e9 (attention's
    scores, 16x4x64x64). Beside calls to sin and tanh
    it lost: the calls clobber every vector register, so the loop reloaded exp's 12
    constants from the stack after each, and exp(-x*x)*sin(y) + 0.5*tanh(x*y) took 1.12
    of its time with libmvec's expf."""
    if not (name == "exp" and ftype == F32 and scale_in_one_step()):
        return False
    others = (_loop_calls.get() or frozenset()) - {name}
    return all(other not in LIBM_ONLY and route_for(other, ftype) == "inline"
               for other in others)


# The math functions the loop being emitted calls, where the lowering has said
# (loop_calling); None elsewhere.
_loop_calls = contextvars.ContextVar("jitflow_math_loop_calls", default=None)


@contextmanager
def loop_calling(names):
    """Inside: the code emitted is one loop that calls the math functions `names`."""
    token = _loop_calls.set(frozenset(names))
    try:
        yield
    finally:
        _loop_calls.reset(token)


# --- route 1: glibc's libmvec -------------------------------------------------------

# (host feature, vector ABI letter, register bits) from the widest down: the x86 vector
# function ABI names a variant by the ISA it was compiled for.
_VECTOR_ISAS = (("avx512f", "e", 512), ("avx2", "d", 256), ("avx", "c", 256),
                ("sse2", "b", 128))
_Variant = namedtuple("_Variant", "scalar vector lanes")


@functools.cache
def _host_isas():
    """(ABI letter, bits) of each vector ISA this host has, widest first."""
    features = set(engine.host()[2].split(","))
    return tuple((letter, bits) for feature, letter, bits in _VECTOR_ISAS
                 if "+" + feature in features)


def vector_bits():
    """The vector width, in bits, LLVM vectorizes loops to on this target (512 on AMD's
    AVX-512 cores, 256 on Intel's and on AVX2 machines; jit/target.py), or None on a host
    outside the x86 vector function ABI."""
    return target.preferred_vector_bits() if _host_isas() else None


def has_libmvec():
    """True where the "libmvec" route can be taken: libmvec loaded, x86 vector host."""
    return engine.libmvec() is not None and bool(_host_isas())


@functools.cache
def _libmvec_variants(name, ftype):
    """The libmvec functions for `name` on `ftype`, one per vector ISA of this host that
    the library has it for (glibc before 2.35 has few AVX-512 variants), widest first."""
    if not has_libmvec() or name == "logistic":
        return ()
    scalar = name + ("f" if ftype == F32 else "")
    variants = []
    for letter, bits in _host_isas():
        lanes = bits // (32 if ftype == F32 else 64)
        vector = f"_ZGV{letter}N{lanes}{'v' * _arity(name)}_{scalar}"
        if hasattr(engine.libmvec(), vector) and lanes not in [v.lanes for v in variants]:
            variants.append(_Variant(scalar, vector, lanes))
    return tuple(variants)


def _libmvec_call(builder, name, ftype, args):
    """A scalar call that LLVM's loop vectorizer may replace by any of the variants:
    it picks the vector length from its cost model for the CPU, not always the widest
    registers (Intel's AVX-512 cores prefer 256-bit vectors)."""
    variants = _libmvec_variants(name, ftype)
    module, arity = builder.module, _arity(name)
    scalar = declare(module, variants[0].scalar, ftype, arity)
    scalar.attributes.add("readnone")  # errno aside, libm is pure; calls may vectorize
    scalar.attributes.add("nounwind")
    mangled = []
    for variant in variants:
        vector = declare(module, variant.vector, ir.VectorType(ftype, variant.lanes), arity)
        _keep_alive(module, vector)
        mangled.append(f"_ZGV_LLVM_N{variant.lanes}{'v' * arity}_{variant.scalar}"
                       f"({variant.vector})")
    result = builder.call(scalar, args)
    # llvmlite checks call attributes against a list of enum attributes, so this string
    # attribute goes straight into the underlying set; it is printed verbatim.
    set.add(result.attributes, f'"vector-function-abi-variant"="{",".join(mangled)}"')
    return result


def _libmvec_vector_call(builder, name, vtype, args):
    """The variant called on `args` (vectors of any power-of-two length) piece by piece:
    a shorter vector is padded with copies of its first lane, a longer one split."""
    variant = _libmvec_variants(name, vtype.element)[0]
    width, count = variant.lanes, vtype.count
    function = declare(builder.module, variant.vector,
                       ir.VectorType(vtype.element, width), _arity(name))
    if count <= width:
        padded = [lanes(builder, a, list(range(count)) + [0] * (width - count))
                  for a in args]
        return lanes(builder, builder.call(function, padded), range(count))
    return joined(builder, [
        builder.call(function, [lanes(builder, a, range(start, start + width)) for a in args])
        for start in range(0, count, width)])


# --- route 3: libm's scalar functions, for those without an inline version ----------

def _libm_call(builder, name, ftype, args):
    """libm's scalar function on each lane (a vector is taken apart and put together)."""
    element = element_of(ftype)
    function = declare(builder.module, name + ("f" if element == F32 else ""), element,
                       LIBM_ONLY[name])
    function.attributes.add("readnone")
    function.attributes.add("nounwind")
    if not isinstance(ftype, ir.VectorType):
        return builder.call(function, args)
    result = ir.Constant(ftype, ir.Undefined)
    for lane in range(ftype.count):
        value = builder.call(function, [builder.extract_element(a, I32(lane)) for a in args])
        result = builder.insert_element(result, value, I32(lane))
    return result


def _keep_alive(module, function):
    """List `function` in @llvm.compiler.used, creating or growing that array."""
    used = module.globals.get("llvm.compiler.used")
    if used is None:
        used = ir.GlobalVariable(module, ir.ArrayType(ir.PointerType(), 0),
                                 "llvm.compiler.used")
        used.linkage, used.section = "appending", "llvm.metadata"
        used.initializer = used.value_type([])
    members = list(used.initializer.constant)
    if function not in members:
        used.value_type = ir.ArrayType(ir.PointerType(), len(members) + 1)
        used.initializer = used.value_type(members + [function])
