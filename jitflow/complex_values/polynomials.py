"""numpy.poly where complex values are involved, installed as jitflow.numpy.poly: the
characteristic polynomial of a square matrix, from its eigenvalues (complex), and the
refusal of complex roots, whose polynomial's dtype depends on their values."""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from .functions import call
from .linalg import _eager, eigvals
from .parts import is_complex

_real_poly = jnp.poly  # (routed: complex arguments reach `call`)


def poly(seq_of_zeros):
    """NumPy's: for a square matrix, the product of (x - w) over its eigenvalues w,
    multiplied out in complex numbers; a real matrix's come in conjugate pairs, so
    NumPy returns the real part, as here."""
    if is_complex(seq_of_zeros):
        raise TypeError(at_user_line(
            "jitflow.numpy.poly of complex roots: NumPy returns real coefficients where "
            "the roots come in conjugate pairs and complex ones otherwise, a dtype that "
            "depends on the values, which compiled code cannot have; multiply out "
            "np.convolve(c, [1, -root]) over the roots for complex coefficients"))
    shape = np.shape(seq_of_zeros)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] == 0:
        return _real_poly(seq_of_zeros)
    if _eager(seq_of_zeros):
        return np.poly(seq_of_zeros)
    values = eigvals(seq_of_zeros)
    coefficients = jnp.ones(1, values.dtype)
    for i in range(shape[0]):
        factor = jnp.concatenate([jnp.ones(1, values.dtype), -values[i:i + 1]])
        coefficients = call("convolve", coefficients, factor)
    return coefficients.real
