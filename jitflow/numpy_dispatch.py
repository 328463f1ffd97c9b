"""NumPy's protocols for Tracers: np.exp(tracer), np.concatenate([tracer, a]), ...

NumPy hands ufunc calls to __array_ufunc__ and other functions to __array_function__;
both land here and are sent to jitflow.numpy's function of the same name.
"""
import dis

import numpy as np

from . import array_references, in_place
from . import numpy as jnp
from .errors import at_user_line, user_frame
from .numpy.reduceat import reduceat
from .trace import Tracer, innermost_builder
from .ufunc_at import ufunc_at
from .writes import write_result, written_value

# ufunc.reduce(x, axis=0) as the jitflow.numpy reduction it is; accumulate and outer
# below.
_REDUCTIONS = {"add": jnp.sum, "multiply": jnp.prod, "maximum": jnp.max,
               "minimum": jnp.min, "logical_and": jnp.all, "logical_or": jnp.any}

# ufunc.accumulate(x, axis=0): the running sum and product. (reduceat: numpy/reduceat.py)
_ACCUMULATIONS = {"add": jnp.cumsum, "multiply": jnp.cumprod}


def _outer(function, a, b, **kwargs):
    """ufunc.outer(a, b): the ufunc of every element of a with every element of b, a's
    axes first."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    return function(jnp.reshape(a, jnp.shape(a) + (1,) * jnp.ndim(b)), b, **kwargs)


def dispatch_ufunc(ufunc, method, inputs, kwargs):
    name = ufunc.__name__
    if method == "__call__":
        function = getattr(jnp, name, None)
        if callable(function):
            counted = array_references.references(kwargs) if "out" in kwargs else None
            out = kwargs.pop("out", None)
            result = function(*inputs, **kwargs)
            return result if out is None else _written(out, result, name, counted)
    elif method == "reduce" and name in _REDUCTIONS:
        axis = kwargs.pop("axis", 0)
        return _REDUCTIONS[name](*inputs, axis=axis, **kwargs)
    elif method == "accumulate" and name in _ACCUMULATIONS:
        axis = kwargs.pop("axis", 0)
        return _ACCUMULATIONS[name](*inputs, axis=axis, **kwargs)
    elif method == "outer" and ufunc.nin == 2 and callable(getattr(jnp, name, None)):
        return _outer(getattr(jnp, name), *inputs, **kwargs)
    elif method == "at":
        return ufunc_at(ufunc, *inputs)
    elif method == "reduceat":
        return reduceat(name, *inputs, **kwargs)
    where = "" if method == "__call__" else f".{method}"
    raise TypeError(at_user_line(f"numpy.{name}{where} is not supported by jitflow on "
                                 f"traced values"))


def _written(out, result, name, counted):
    """ufunc(..., out=x): the result written into x as NumPy writes it (writes.py).

    x may be an ndarray (`a += traced`, `a` made by the function or closed over): the
    write reaches it after the call. NumPy's later reads of `a` in this function could
    not see it, so `a += traced` gives the traced result (the name `a` then holds it;
    the function puts a closed-over array back in its place after tracing:
    named_arrays.py), and an explicit out= of an ndarray, which rebinds no name, is
    refused, as is `a += traced` where NumPy could still read the old contents of `a`
    another way (array_references.py)."""
    targets = out if isinstance(out, tuple) else (out,)
    target = targets[0] if len(targets) == 1 else None
    if isinstance(target, np.ndarray):
        builder = innermost_builder()
        tracer = builder.array_input(target) if builder is not None else None
        if tracer is not None:
            note_write = getattr(target, "_jitflow_note_write", None)  # watched_arrays
            if note_write is not None:
                note_write()
            if not _in_place_operator():
                raise TypeError(at_user_line(
                    f"numpy.{name}(..., out=array) of a traced value into a NumPy array: "
                    f"NumPy's own reads of that array later in the function would not "
                    f"see the write; write `array {_OPERATORS.get(name, '<op>')}= value` "
                    f"instead (the name then holds the traced result, and the array "
                    f"gets it after the call), or keep the state in a jitflow.Variable"))
            _refuse_a_shared_array(target, counted, name)
            return write_result(tracer, result, name)
        if type(target) is np.ndarray and _in_place_operator():
            # no function takes the array as an input (a derivative traced eagerly):
            # the name just holds the result, as NumPy's array would
            _refuse_a_shared_array(target, counted, name)
            return written_value(target, result, name)
    if not isinstance(target, Tracer):
        raise TypeError(at_user_line(
            f"numpy.{name}(..., out=...): jitflow writes traced values into one traced "
            f"array, or an array the compiled function closes over; assign the result "
            f"instead (x = numpy.{name}(...))"))
    return write_result(target, result, name)


def _refuse_a_shared_array(target, counted, name):
    if type(target) is np.ndarray and array_references.is_shared(counted):
        raise TypeError(at_user_line(_shared_target_message(target, name)))


def _shared_target_message(target, name):
    operator = _OPERATORS.get(name, "<op>")
    return (f"`array {operator}= traced value` into a NumPy array {target.dtype}"
            f"{list(target.shape)} that another name, view or container also holds: "
            f"while the function is traced the write cannot reach the array's memory, so "
            f"NumPy would read the old contents there. Make the array a traced one "
            f"(jitflow.numpy.zeros(...), or numpy.zeros_like(traced)), whose every name "
            f"and view sees the write, or drop the other name")


_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/",
              "floor_divide": "//", "remainder": "%", "power": "**", "matmul": "@",
              "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
              "left_shift": "<<", "right_shift": ">>"}


def _in_place_operator():
    """Whether the user's code is running an in-place operator (`a += b`) now, rather
    than calling a ufunc with out=."""
    frame = user_frame()
    if frame is None:
        return False
    instruction = next((i for i in dis.get_instructions(frame.f_code)
                        if i.offset == frame.f_lasti), None)
    if instruction is None:
        return False
    if instruction.opname == "BINARY_OP":  # Python 3.11+: the in-place ones say "="
        return instruction.argrepr.endswith("=")
    return instruction.opname.startswith("INPLACE_")


def _namespace(module):
    """jitflow's namespace for a NumPy module: numpy.linalg's functions are
    jitflow.numpy.linalg's, numpy.fft's jitflow.numpy.fft's, the others jitflow.numpy's
    (None: not NumPy's)."""
    if module == "numpy.linalg" or module.startswith("numpy.linalg."):
        return jnp.linalg
    if module == "numpy.fft" or module.startswith("numpy.fft."):
        return jnp.fft
    return jnp if module.startswith("numpy") else None


# NumPy's functions that write into their first argument (in_place.py)
_IN_PLACE = {name: getattr(in_place, name) for name in in_place.__all__}


_SCIMATH_ADVICE = (
    ": its result is complex or real depending on the values (complex where one is out of "
    "the real function's domain), which compiled code cannot know; make the input complex "
    "first, as in np.sqrt(x.astype(complex)), to get complex results always")


def _mirrored(namespace, func):
    """Whether func is the NumPy function jitflow's `namespace` mirrors under its name.
    Other modules reuse the names with other meanings: numpy.emath.sqrt of a negative
    number is complex, numpy.char.equal compares strings."""
    numpy_module = {jnp: np, jnp.linalg: np.linalg, jnp.fft: np.fft}[namespace]
    return getattr(numpy_module, func.__name__, None) is func


def dispatch_function(func, args, kwargs):
    module = getattr(func, "__module__", "") or ""
    namespace = _namespace(module)
    if namespace is not None and not _mirrored(namespace, func):
        namespace = None
    function = _IN_PLACE.get(func.__name__) if namespace is jnp else None
    function = function or getattr(namespace, func.__name__, None)
    if function is None or not callable(function):
        qualified = f"{module.replace('numpy._core', 'numpy')}.{func.__name__}"
        raise TypeError(at_user_line(f"{qualified} is not supported by jitflow on traced "
                                     f"values (jitflow.numpy lists what is)"
                                     f"{_SCIMATH_ADVICE if 'scimath' in module else ''}"))
    return function(*args, **kwargs)
