"""Where complex values meet jitflow.numpy: its functions, and the real Tracer's
operators and astype, send a call that involves a traced complex value (or a complex
constant inside a trace) to functions.call. An eager call with NumPy complex arrays
(no trace) is NumPy's own function of that name, as eager calls are NumPy's, unless it
passes what only jitflow's takes (unique's size=): then jitflow's complex function
computes it on the NumPy values, and its results are NumPy arrays."""
import functools
import inspect
from types import FunctionType

import numpy as np

from .. import numpy as jnp
from ..numpy.bfloat16_rules import refused_for_bfloat16
from ..trace import Tracer, innermost_builder
from . import functions
from .creation import BY_DTYPE
from .parts import is_complex

# Functions that make a complex value from real ones when given a complex dtype.
_CONVERSIONS = ("astype", "asarray", "array", "asanyarray") + BY_DTYPE


def _traced(values):
    return any(isinstance(v, Tracer) for v in values) or innermost_builder() is not None


def _flat(args, kwargs):
    """The arguments, and the leaves of those that are (nested) lists or tuples."""
    values = list(args) + list(kwargs.values())
    return values + [leaf for value in values if isinstance(value, (list, tuple))
                     for leaf in _leaves(value)]


def _leaves(values):
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from _leaves(value)
        else:
            yield value


def involves_complex(args, kwargs):
    values = _flat(args, kwargs)
    if any(getattr(v, "_complex_parts", None) is not None for v in values):
        return True
    return any(is_complex(v) for v in values) and _traced(values)


def _dtype_position(function):
    """Where `function` takes its dtype positionally (None: keyword only)."""
    parameters = list(inspect.signature(function).parameters.values())
    names = [p.name for p in parameters if p.kind == p.POSITIONAL_OR_KEYWORD]
    return names.index("dtype") if "dtype" in names else None


def _complex_target(position, args, kwargs):
    """Whether the call asks for a complex dtype."""
    dtype = kwargs.get("dtype")
    if dtype is None and position is not None and len(args) > position:
        dtype = args[position]
    try:
        return dtype is not None and np.dtype(dtype).kind == "c"
    except TypeError:
        return False


def _eager_complex(args, kwargs):
    values = _flat(args, kwargs)
    return any(is_complex(v) for v in values) and not _traced(values)


def _routed(name, function, numpy_namespace):
    conversion = name in _CONVERSIONS
    position = _dtype_position(function) if conversion else None
    numpy_function = getattr(numpy_namespace, name.rpartition(".")[2], None)

    @functools.wraps(function)
    def routed(*args, **kwargs):
        complex_target = conversion and _complex_target(position, args, kwargs)
        traced = _traced(_flat(args, kwargs))
        if involves_complex(args, kwargs) or (complex_target and traced):
            return functions.call(name, *args, **kwargs)
        if numpy_function is not None and (_eager_complex(args, kwargs) or complex_target):
            if _numpy_takes(numpy_function, args, kwargs):
                return numpy_function(*args, **kwargs)
            return _as_numpy(functions.call(name, *args, **kwargs))
        return function(*args, **kwargs)
    routed.__wrapped_for_complex__ = function
    # an alias made with functools.wraps (row_stack of vstack) still names the original
    routed.__wrapped__ = getattr(function, "__wrapped__", function)
    # (before the complex routes too: numpy.fft's transforms of bfloat16 would be
    # complex128 here, complex64 in NumPy)
    refusing = refused_for_bfloat16(name, routed)
    if refusing is not routed:
        refusing.__wrapped_for_complex__ = function
        refusing.__wrapped__ = routed.__wrapped__
    return refusing


def _numpy_takes(numpy_function, args, kwargs):
    """Whether NumPy's function takes these arguments (no keyword of jitflow's own)."""
    try:
        inspect.signature(numpy_function).bind(*args, **kwargs)
    except TypeError:
        return False
    except ValueError:  # no signature to read (a ufunc): NumPy's own checks decide
        pass
    return True


def _as_numpy(value):
    """An eager result of a complex function as NumPy gives it: complex values joined
    from their parts (tuples, named ones too, item by item)."""
    parts = getattr(value, "_complex_parts", None)
    if parts is not None:
        real, imag = (np.asarray(part) for part in parts)
        joined = np.empty(real.shape, value.dtype)
        joined.real, joined.imag = real, imag
        return joined
    if isinstance(value, tuple):
        items = [_as_numpy(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def install_into(namespace, numpy_namespace, prefix=""):
    """Route every public function of `namespace` (jitflow.numpy, its fft and linalg;
    `numpy_namespace` is NumPy's module of the same functions)."""
    for name, value in list(vars(namespace).items()):
        if isinstance(value, FunctionType) and not name.startswith("_") and \
                not hasattr(value, "__wrapped_for_complex__"):
            setattr(namespace, name, _routed(prefix + name, value, numpy_namespace))


def install():
    install_into(jnp, np)
    install_into(jnp.fft, np.fft, "fft.")
    install_into(jnp.linalg, np.linalg, "linalg.")
