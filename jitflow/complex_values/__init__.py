"""Complex numbers in traced code: complex64 and complex128 values held as pairs of
real arrays (tracer.py), the NumPy functions computed on them (functions.py, with the
formulas of NumPy's complex loops in formulas.py), and the routing that sends
jitflow.numpy's functions and the Tracer's operators to them (routing.py). Arguments
and results of compiled functions are split into and joined from their parts by
jitflow.pytree, so the graph, its passes, native code and derivatives see real arrays
only."""
import numpy as np

from .. import numpy as jnp
from .. import pytree
from ..trace import Tracer
from . import (arrays, creation, functions, more_arrays, ordering, routing, selecting,
               polynomial_arithmetic, set_operations, statistics, truth_and_parts,
               uniques)
from .functions import as_complex, call
from .parts import cast, is_complex, part_dtype
from .tracer import ComplexTracer


_NOT_HERE = ("complex values are not supported here: jitflow makes a complex value from "
             "traced or NumPy parts only")


def _from_parts(real, imag, dtype):
    """A traced complex value from traced parts (pytree.unflatten's); dtype None: a
    Python complex's, weakly typed complex128."""
    if not all(isinstance(p, (Tracer, np.ndarray, np.generic, float, int))
               for p in (real, imag)):
        raise TypeError(_NOT_HERE)
    weak = dtype is None
    dtype = np.dtype(np.complex128 if weak else dtype)
    real_dtype = part_dtype(dtype)
    return ComplexTracer(cast(real, real_dtype), cast(imag, real_dtype), dtype, weak)


def _install_functions():
    """numpy.fft's transforms into jitflow.numpy.fft, numpy.linalg's eig and eigvals
    into jitflow.numpy.linalg, and sort_complex and poly into jitflow.numpy (they give
    complex values from real ones, or compute with them)."""
    from . import fft, linalg, singular_values  # noqa: F401 (registers its functions)
    for name in fft.TRANSFORMS:
        setattr(jnp.fft, name, getattr(fft, name))
        functions.IMPLEMENTATIONS[f"fft.{name}"] = getattr(fft, name)
    for name in ("eig", "eigvals"):
        setattr(jnp.linalg, name, getattr(linalg, name))
        functions.IMPLEMENTATIONS[f"linalg.{name}"] = getattr(linalg, name)
    for name in ("solve", "inv", "slogdet", "det", "eigh", "eigvalsh", "cholesky", "qr"):
        # (complex operands only: routing.py sends them)
        functions.IMPLEMENTATIONS[f"linalg.{name}"] = getattr(linalg, name)
    jnp.sort_complex = arrays.sort_complex
    from .polynomials import poly, polyfit, roots
    jnp.poly = functions.IMPLEMENTATIONS["poly"] = poly
    jnp.roots = functions.IMPLEMENTATIONS["roots"] = roots
    functions.IMPLEMENTATIONS["polyfit"] = polyfit  # (complex arguments: routing.py)


def _from_interleaved(interleaved, dtype):
    """A traced complex value from a traced (..., 2) real array: real, imaginary."""
    if not isinstance(interleaved, Tracer):
        raise TypeError(_NOT_HERE)
    dtype = np.dtype(dtype)
    interleaved = cast(interleaved, part_dtype(dtype))
    return ComplexTracer(interleaved[..., 0], interleaved[..., 1], dtype)


def _interleaved(value):
    """A traced complex value as one (..., 2) real array: how a result leaves compiled
    code, to be seen as complex numbers without a copy."""
    return jnp.stack([value.real, value.imag], axis=-1)


# (these modules register their functions when imported)
_REGISTERING = (arrays, creation, more_arrays, ordering, selecting, statistics,
                polynomial_arithmetic, set_operations, truth_and_parts, uniques)
pytree.complex_from_parts = _from_parts
pytree.complex_from_interleaved = _from_interleaved
pytree.interleaved_of = _interleaved
_install_functions()
routing.install()

__all__ = ["ComplexTracer", "as_complex", "call", "is_complex"]
