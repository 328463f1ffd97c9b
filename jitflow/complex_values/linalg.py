"""numpy.linalg's eig and eigvals of real matrices on traced values: LAPACK's geev
(ops.eig) gives the eigenvalues' real and imaginary parts and the eigenvectors packed
as real columns (a conjugate pair's vectors v +- iu as v and u side by side), which
become complex values here.

NumPy gives a real array where every eigenvalue of the input happens to be real, a
complex one otherwise: its dtype depends on the values. Compiled code fixes dtypes when
it is traced, so jitflow's are always complex (complex64 for float32, complex128
otherwise), as JAX's are. The interpreter's values are NumPy's; native code calls the
same LAPACK routine from the scipy-openblas32 build, whose rounding, order of
eigenvalues and signs of eigenvectors may differ from NumPy's build (both are right:
geev fixes neither). Derivatives are not implemented (they raise).
"""
from collections import namedtuple

import numpy as np

from .. import numpy as jnp
from .. import ops
from ..errors import at_user_line
from ..trace import Tracer, innermost_builder
from .functions import _complex
from .parts import is_complex

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


def _eager(a):
    return innermost_builder() is None and not isinstance(a, Tracer) and \
        getattr(a, "_complex_parts", None) is None


def _real_matrices(a, name):
    if is_complex(a):
        raise TypeError(at_user_line(f"jitflow.numpy.linalg.{name} of a complex matrix is "
                                     f"not supported; jitflow computes it for real ones"))
    a = jnp.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError(at_user_line(
            f"{name}: the last 2 dimensions of the array must be square, got shape "
            f"{tuple(a.shape)}"))
    dtype = a.dtype if a.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    return jnp.astype(a, dtype)


def _complex_dtype(real):
    return np.dtype(np.complex64 if real.dtype == np.float32 else np.complex128)


def eigvals(a):
    if _eager(a):
        return np.linalg.eigvals(a)
    a = _real_matrices(a, "eigvals")
    real, imag = ops.eig(a, vectors=False)
    return _complex(real, imag, _complex_dtype(real))


def eig(a):
    if _eager(a):
        return np.linalg.eig(a)
    a = _real_matrices(a, "eig")
    real, imag, packed = ops.eig(a, vectors=True)
    dtype = _complex_dtype(real)
    # column j: a real value's vector is packed[j]; the first of a pair (imag > 0) is
    # packed[j] + i packed[j + 1]; the second, packed[j - 1] - i packed[j]
    first = jnp.expand_dims(jnp.greater(imag, 0), -2)
    second = jnp.expand_dims(jnp.less(imag, 0), -2)
    after, before = jnp.roll(packed, -1, axis=-1), jnp.roll(packed, 1, axis=-1)
    vector_real = jnp.where(second, before, packed)
    vector_imag = jnp.where(first, after, jnp.where(second, jnp.negative(packed),
                                                    jnp.zeros_like(packed)))
    return EigResult(_complex(real, imag, dtype), _complex(vector_real, vector_imag, dtype))
