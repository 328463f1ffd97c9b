"""How jitflow's dtypes and reduction names are spelled in MPI."""
import numpy as np

from .mpi import MPI

DATATYPES = {np.dtype(np.float32): MPI.FLOAT, np.dtype(np.float64): MPI.DOUBLE,
             **{np.dtype(f"{kind}int{bits}"): getattr(MPI, f"{kind.upper()}INT{bits}_T")
                for kind in ("", "u") for bits in (8, 16, 32, 64)}}
REDUCTIONS = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}
CHUNK = 2 ** 30  # elements per call from native code: counts are C ints


def chunks(count):
    """(first element, elements) of each call that a collective of `count` elements
    makes from native code."""
    return [(start, min(CHUNK, count - start)) for start in range(0, count, CHUNK)]


def check_dtype(what, dtype):
    """MPI reduces numbers; a bool array has no sum that keeps its dtype."""
    if dtype not in DATATYPES:
        names = ", ".join(str(d) for d in DATATYPES)
        raise TypeError(f"{what}: arrays of dtype {dtype} are not supported ({names} "
                        f"are); cast the array first")


def check_reduction(what, op, allowed=tuple(REDUCTIONS)):
    if op not in allowed:
        raise ValueError(f"{what}: op must be one of {', '.join(map(repr, allowed))}, "
                         f"got {op!r}")
