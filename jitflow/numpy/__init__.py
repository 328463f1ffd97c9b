"""jitflow.numpy: NumPy's names and signatures, on NumPy arrays and on traced values.

On plain arrays every function runs eagerly and returns what NumPy returns (to rounding).
Inside a trace it records the graph. Python-operator arithmetic on Python scalars stays
weakly typed, as in Python; NumPy functions return strongly typed results, as np.* does.
One module per family: elementwise, reductions, shapes, creation, stacking (joining
and splitting), rearranging (flip, roll, tile, repeat, diff), arithmetic (ufuncs that are
exact compositions: fmax, rint, ...), transcendental (sinh, logaddexp, ...), matrices
(diagonals, triangles, vector products), statistics (nan-reductions, cov, isclose, ...),
searching (searchsorted), sorting (sort, argsort, partition, lexsort), quantiles (median,
percentile, quantile and their nan- forms), selecting (nonzero, argwhere, extract,
compress, trim_zeros: a static size= when traced), membership (isin), binning
(bincount, digitize, histogram, histogram_bin_edges, interp), histograms (histogram2d,
histogramdd), integer_ufuncs (gcd, lcm, bitwise_count), bits (packbits, unpackbits),
uniques (unique and its array-API forms, by comparing every pair), set_operations
(intersect1d, union1d, setdiff1d, setxor1d), flat_indices (ravel_multi_index,
unravel_index), index_grids (indices, ix_, mask_indices, fromfunction), scans (cumprod
and the NaN-ignoring scans), editing (delete, insert, block, choose, piecewise,
apply_along_axis, ...), summing (cumulative_sum, trapezoid, vdot), special (sinc, i0,
kaiser and the other windows, unwrap, geomspace), polynomials (polyfit, polyder,
polydiv, ...), conversions (ascontiguousarray, iscomplex, tril_indices_from, ...), dtype_queries
(can_cast, promote_types, issubdtype, ...: NumPy's, of what a traced value stands for), the
linalg namespace (norms, solvers and factorizations) and the fft namespace (its real
functions).
"""
import functools as _functools
import inspect as _inspect

import numpy as _np

from ..contract import dot, inner, matmul, outer, tensordot  # noqa: F401
from ..einsum import einsum, einsum_path  # noqa: F401
from .creation import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403
from .stacking import *  # noqa: F401,F403
from .rearranging import *  # noqa: F401,F403
from .arithmetic import *  # noqa: F401,F403
from .transcendental import *  # noqa: F401,F403
from .matrices import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .searching import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .quantiles import *  # noqa: F401,F403
from .scans import *  # noqa: F401,F403
from .assorted import *  # noqa: F401,F403
from .selecting import *  # noqa: F401,F403
from .membership import *  # noqa: F401,F403
from .binning import *  # noqa: F401,F403
from .histograms import *  # noqa: F401,F403
from .integer_ufuncs import *  # noqa: F401,F403
from .bits import *  # noqa: F401,F403
from .uniques import *  # noqa: F401,F403
from .set_operations import *  # noqa: F401,F403
from .flat_indices import *  # noqa: F401,F403
from .index_grids import *  # noqa: F401,F403
from .editing import *  # noqa: F401,F403
from .summing import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .polynomials import *  # noqa: F401,F403
from .conversions import *  # noqa: F401,F403
from .dtype_queries import *  # noqa: F401,F403
from . import fft, linalg  # noqa: F401
from ..ir.types import bfloat16 as _bfloat16

# NumPy 2's names for the same functions
asinh, acosh, atanh, pow, concat, permute_dims = (arcsinh, arccosh, arctanh,  # noqa: F405
                                                  power, concatenate, transpose)  # noqa: F405
asin, acos, atan, atan2 = arcsin, arccos, arctan, arctan2  # noqa: F405

bool_, int32, int64, float32, float64 = (_np.bool_, _np.int32, _np.int64, _np.float32,
                                         _np.float64)
int8, int16, uint8, uint16, uint32, uint64 = (_np.int8, _np.int16, _np.uint8, _np.uint16,
                                              _np.uint32, _np.uint64)
if _bfloat16 is not None:  # ml_dtypes' (an optional extra), as jax.numpy.bfloat16
    bfloat16 = _bfloat16.type
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
ndarray = _np.ndarray
dtype = _np.dtype
finfo, iinfo = _np.finfo, _np.iinfo

__all__ = [name for name in dir() if not name.startswith("_") and
           name not in ("creation", "elementwise", "reductions", "shapes", "stacking",
                        "rearranging", "arithmetic", "transcendental",
                        "matrices", "statistics", "searching", "sorting", "quantiles",
                        "scans", "decompositions", "assorted", "selecting", "membership",
                        "binning", "integer_ufuncs", "uniques", "set_operations",
                        "flat_indices", "index_grids", "histograms", "bits",
                        "dtype_queries",
                        "editing", "summing",
                        "special", "polynomials", "conversions", "bfloat16_rules")]


def _reading_variables(function):
    """`function` taking jitflow.Variables wherever it takes arrays: each stands for the
    value it holds when the function is called."""
    @_functools.wraps(function)
    def reading(*args, **kwargs):
        for arg in args:
            if isinstance(arg, _HOLDERS):
                break
        else:
            if not kwargs:
                return function(*args)  # the common case, kept fast
        if _DEFERRED:
            handler = _deferring(args, kwargs)
            if handler is not None:  # a value of a graph still being built
                return handler(function, args, kwargs)
        return function(*map(_read_stateful, args),
                        **{key: _read_stateful(value) for key, value in kwargs.items()})
    reading.__module__ = __name__  # pickle finds it here, as jitflow.numpy.<name>
    return reading


from ..trace import Stateful as _Stateful  # noqa: E402
from .bfloat16_rules import computed_in_float32 as _computed_in_float32  # noqa: E402
from .bfloat16_rules import refused_for_bfloat16 as _refused_for_bfloat16  # noqa: E402
from ..trace import read_stateful as _read_stateful  # noqa: E402

_HOLDERS = (_Stateful, list, tuple)  # what may be or hold a Variable
# type -> handler(function, args, kwargs): values that are not arrays yet (jitflow.v1's
# graph tensors) record the call instead (register_deferred)
_DEFERRED = {}


def register_deferred(type_, handler):
    """Calls given a `type_` value (or a list or tuple holding one) go to `handler`."""
    global _HOLDERS
    _DEFERRED[type_] = handler
    _HOLDERS = _HOLDERS + (type_,)


def _deferring(args, kwargs):
    for value in (*args, *kwargs.values()):
        for item in value if isinstance(value, (list, tuple)) else (value,):
            handler = _DEFERRED.get(type(item))
            if handler is None and not isinstance(item, (_np.ndarray, int, float)):
                handler = next((h for t, h in _DEFERRED.items() if isinstance(item, t)),
                               None)
            if handler is not None:
                return handler
    return None

for _name in __all__:
    if isinstance(getattr(_np, _name, None), _np.ufunc):
        globals()[_name] = _computed_in_float32(getattr(_np, _name), globals()[_name])
    elif _inspect.isfunction(globals()[_name]):
        globals()[_name] = _refused_for_bfloat16(_name, globals()[_name])
    if _inspect.isfunction(globals()[_name]):
        globals()[_name] = _reading_variables(globals()[_name])
for _module in (linalg, fft):
    for _name in _module.__all__:
        _refusing = _refused_for_bfloat16(f"{_module.__name__.rsplit('.', 1)[1]}.{_name}",
                                          getattr(_module, _name))
        setattr(_module, _name, _reading_variables(_refusing))
        getattr(_module, _name).__module__ = _module.__name__
