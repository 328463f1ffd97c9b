"""jitflow.config.debug_nans / debug_infs: a compiled call whose results hold a NaN (or
an inf) raises FloatingPointError naming the operation and the user's line that made
it, and changes no Variable and no array.

The compiled code is built again with checks (codegen's nan_checks): every elementwise
operation's float results are tested where they are computed, inside fused loops too,
so a NaN that no result shows (one a later `where` or `maximum` drops) is caught as
well; the results are checked too. When either finds one, the function runs again
eagerly, on copies, under NumPy's np.errstate(invalid="raise") (and divide= and over=
for infs): NumPy stops at the first operation that makes one from numbers that were
not, on the user's own line. If none does, the NaN came in with the inputs, and the
error says which held one.
"""
import contextlib
import traceback
import warnings

import numpy as np

from .errors import _is_user_file, at_user_line
from .ir.interpret import floating_errors
from .trace import Stateful


def wanted(config):
    """The kinds of value to refuse: () when both switches are off."""
    return (("NaN",) if config.debug_nans else ()) + (("inf",) if config.debug_infs else ())


def made_inside(error):
    """Whether a FloatingPointError reports a NaN or an infinity the compiled function
    made: native code's own report (codegen/errors.py), or NumPy's under `raising`
    while the interpreter ran the graph; not one a user's callback raised."""
    message = str(error)
    return message.endswith(("an operation made a NaN", "an operation made an infinity")) \
        or " encountered in " in message


def _named(kinds):
    """'a NaN', 'an inf' or 'a NaN or an inf'."""
    return " or ".join({"NaN": "a NaN", "inf": "an inf"}[kind] for kind in kinds)


def bad_values(values, kinds):
    """Indices of the float arrays among `values` holding one of `kinds`."""
    found = []
    for index, value in enumerate(values):
        array = np.asarray(value)
        if array.dtype.kind not in "fc" or np.isfinite(np.add.reduce(array, axis=None)):
            continue  # (a finite sum: neither a NaN nor an inf, found without a mask)
        if ("NaN" in kinds and np.isnan(array).any()) or \
                ("inf" in kinds and np.isinf(array).any()):
            found.append(index)
    return found


@contextlib.contextmanager
def raising(kinds):
    """NumPy raising FloatingPointError where it would make one of `kinds`, in the
    user's code and in the interpreter's."""
    settings = {"invalid": "raise"} if "NaN" in kinds else {}
    if "inf" in kinds:
        settings.update(divide="raise", over="raise")
    with np.errstate(**settings), floating_errors(**settings):
        yield


def locate(fn, bound, leaves, state, name, kinds):
    """The FloatingPointError for a call of `fn` (its arguments `bound`) whose compiled
    results held one of `kinds`: fn run again eagerly on copies of its arguments; the
    Variables and the closed-over arrays of `state` (variable_scope.VariableState) are
    put back after."""
    copies_args = [_copy(a) for a in bound.args]
    copies_kwargs = {k: _copy(v) for k, v in bound.kwargs.items()}
    held = [(variable, variable.held()) for variable in state.variables(leaves)] \
        if state is not None else []
    closed = [(array, array.copy()) for array in state.closed] if state is not None else []
    try:
        with raising(kinds):
            fn(*copies_args, **copies_kwargs)
    except FloatingPointError as error:
        return FloatingPointError(
            f"{name}(): {error} (NumPy's message), which makes {_named(kinds)} in "
            f"the compiled code, at {_user_line(error)}\n"
            f"  arguments: {_summary(bound.arguments)}")
    finally:
        for variable, array in held:
            variable.adopt(array)
        for array, contents in closed:
            np.copyto(array, contents)
    return FloatingPointError(at_user_line(
        f"{name}(): its result holds {_named(kinds)}, which no operation made from "
        f"other numbers when it ran again eagerly: it came in with the inputs "
        f"({_summary(bound.arguments)})"))


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def _user_line(error):
    """'file:line: source' of the innermost user frame the error passed through."""
    for frame, line in reversed(list(traceback.walk_tb(error.__traceback__))):
        if _is_user_file(frame.f_code.co_filename):
            summary = traceback.extract_tb(error.__traceback__)
            text = next((s.line for s in reversed(summary)
                         if s.filename == frame.f_code.co_filename and s.lineno == line),
                        "")
            return f"{frame.f_code.co_filename}:{line}: {text}"
    return "an unknown line"


def _summary(arguments):
    parts = [_describe(name, value) for name, value in arguments.items()]
    return "; ".join(p for p in parts if p) or "none"


def _describe(label, value):
    if isinstance(value, Stateful):
        value = value.held()
    if not isinstance(value, (np.ndarray, np.generic, float, int)):
        return ""
    array = np.asarray(value)
    if array.dtype.kind not in "fiub" or array.size == 0:
        return f"{label}: {array.dtype}{list(array.shape)}"
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (an all-NaN array has no nanmin)
        return (f"{label}: {array.dtype}{list(array.shape)} min {float(np.nanmin(array)):g} "
                f"max {float(np.nanmax(array)):g}, {int(np.isnan(array).sum())} NaN, "
                f"{int(np.isinf(array).sum())} inf")
