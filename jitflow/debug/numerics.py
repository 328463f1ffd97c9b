"""check_numerics: an assertion in the graph that an array holds no NaN or inf."""
import numpy as np

from ..errors import LOCATION_MARK, user_location
from ..ops.debug import PythonCallback, debug_callback
from ..trace import constant_type


def check_numerics(x, message):
    """x, after checking at run time, on every call, that it holds no NaN or inf; if it
    does, FloatingPointError names `message`, what was found and the line that called
    check_numerics. Integer and bool arrays hold neither: they pass unchecked."""
    if constant_type(x).dtype.kind not in "fc":
        return x
    where = user_location()
    check = PythonCallback(lambda value: _check(value, message, where),
                           f"check_numerics {message!r}")
    debug_callback(check, x)
    return x


def _check(value, message, where):
    value = np.asarray(value)
    nans, infs = np.isnan(value), np.isinf(value)
    if not (nans.any() or infs.any()):
        return
    first = tuple(int(i) for i in np.argwhere(nans | infs)[0])
    text = (f"check_numerics: {message}: {value.dtype}{list(value.shape)} holds "
            f"{int(nans.sum())} NaN and {int(infs.sum())} inf values (the first at index "
            f"{first}: {value[first]})")
    raise FloatingPointError(f"{text}{LOCATION_MARK}{where}" if where else text)
