"""numpy.linalg of complex matrices on traced values: solve and inv (ops.complex_solve,
LAPACK's gesv), slogdet and det (ops.complex_slogdet, LAPACK's getrf), eigh and
eigvalsh (ops.complex_eigh, LAPACK's heevd), cholesky (ops.complex_cholesky, potrf),
qr (ops.complex_qr, geqrf and ungqr), eig and eigvals (ops.complex_eig, geev); and eig
and eigvals of real matrices.

eig and eigvals of real matrices: LAPACK's geev
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
from ..numpy.decompositions import check_qr_mode
from ..trace import Tracer, innermost_builder
from .functions import _complex, as_complex
from .parts import is_complex, result_dtype

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
QRResult = namedtuple("QRResult", ["Q", "R"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])


def _eager(a):
    return innermost_builder() is None and not isinstance(a, Tracer) and \
        getattr(a, "_complex_parts", None) is None


def _real_matrices(a, name):
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
    if is_complex(a):
        a = _complex_matrices(a, "eigvals")
        return _complex(*ops.complex_eig(a.real, a.imag, vectors=False), a.dtype)
    a = _real_matrices(a, "eigvals")
    real, imag = ops.eig(a, vectors=False)
    return _complex(real, imag, _complex_dtype(real))


def eig(a):
    if _eager(a):
        return np.linalg.eig(a)
    if is_complex(a):
        a = _complex_matrices(a, "eig")
        values_real, values_imag, real, imag = ops.complex_eig(a.real, a.imag)
        return EigResult(_complex(values_real, values_imag, a.dtype),
                         _complex(real, imag, a.dtype))
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


# --- complex linear systems --------------------------------------------------------------

def _complex_matrices(a, name, dtype=None):
    a = as_complex(a, dtype)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError(at_user_line(
            f"{name}: the last 2 dimensions of the array must be square, got shape "
            f"{a.shape}"))
    return a


def solve(a, b):
    """x with a x = b, for a complex a or b, by LAPACK's gesv (ops.complex_solve). b is
    a vector where it has one axis (NumPy 2's rule), else a stack of matrices."""
    dtype, _ = result_dtype(a, b)
    a = _complex_matrices(a, "solve", dtype)
    b = as_complex(b, dtype)
    vector = b.ndim == 1
    parts = [jnp.expand_dims(p, -1) for p in (b.real, b.imag)] if vector else [b.real, b.imag]
    real, imag = ops.complex_solve(a.real, a.imag, *parts)
    if vector:
        real, imag = jnp.squeeze(real, -1), jnp.squeeze(imag, -1)
    return _complex(real, imag, dtype)


def inv(a):
    a = _complex_matrices(a, "inv")
    return _complex(*ops.complex_inverse((a.real, a.imag)), a.dtype)


# --- determinants and Hermitian eigenproblems: LAPACK's complex routines --------------------

def slogdet(a):
    """(sign, log|det a|): the sign a complex number of modulus 1 (0 for a singular
    matrix), log|det| real (-inf for a singular one), as NumPy's."""
    a = _complex_matrices(a, "slogdet")
    sign_real, sign_imag, logabsdet = ops.complex_slogdet(a.real, a.imag)
    return SlogdetResult(_complex(sign_real, sign_imag, a.dtype), logabsdet)


def det(a):
    """sign * e^log|det|, as NumPy computes the determinant from slogdet."""
    sign, logabsdet = slogdet(a)
    magnitude = jnp.exp(logabsdet)
    return _complex(jnp.multiply(sign.real, magnitude), jnp.multiply(sign.imag, magnitude),
                    sign.dtype)


def eigh(a, UPLO="L"):
    """Eigenvalues (real, ascending) and unit eigenvectors of the Hermitian matrix held
    in a's lower (UPLO='L') or upper ('U') triangle; the imaginary parts of the diagonal
    are not read, as LAPACK's heevd reads none. Each eigenvector's phase is LAPACK's
    choice (NumPy's build may choose another)."""
    a = _complex_matrices(a, "eigh")
    if UPLO not in ("L", "U"):
        raise ValueError(at_user_line("UPLO argument must be 'L' or 'U'"))
    real, imag = a.real, a.imag
    if UPLO == "U":  # the upper triangle of a is the lower one of its adjoint
        real, imag = jnp.matrix_transpose(real), jnp.negative(jnp.matrix_transpose(imag))
    values, vectors_real, vectors_imag = ops.complex_eigh(real, imag)
    return EighResult(values, _complex(vectors_real, vectors_imag, a.dtype))


def eigvalsh(a, UPLO="L"):
    return eigh(a, UPLO).eigenvalues


def cholesky(a, /, *, upper=False):
    """L, lower triangular, with L L^H the Hermitian matrix of a's lower triangle; L^H
    for upper=True, as NumPy's."""
    a = _complex_matrices(a, "cholesky")
    real, imag = ops.complex_cholesky(a.real, a.imag)
    if upper:  # L^H, its zeros +0.0 as NumPy's (which factors the upper triangle)
        real, imag = jnp.matrix_transpose(real), jnp.subtract(0, jnp.matrix_transpose(imag))
    return _complex(real, imag, a.dtype)


def qr(a, mode="reduced"):
    a = as_complex(a)
    if a.ndim < 2:
        raise np.linalg.LinAlgError(at_user_line(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional"))
    check_qr_mode(mode)
    q_real, q_imag, r_real, r_imag = ops.complex_qr(a.real, a.imag,
                                                    complete=mode == "complete")
    r = _complex(r_real, r_imag, a.dtype)
    return r if mode == "r" else QRResult(_complex(q_real, q_imag, a.dtype), r)
