"""Every primitive, one block each: its type rule, NumPy implementation and derivative
rules, followed by its wrapper.

Wrappers take arrays positionally and static parameters by keyword, and call bind(): they
run eagerly on NumPy values and record nodes on Tracers. These are the building blocks;
jitflow.numpy puts NumPy's names and signatures on top of them.
"""
from .select import *        # noqa: F401,F403  where, cast, stop_gradient
from .elementwise import *   # noqa: F401,F403  NumPy's ufuncs
from .shapes import *        # noqa: F401,F403  reshape, broadcast_to, transpose
from .reductions import *    # noqa: F401,F403  sums, products, extrema, arg-extrema, cumsum
from .slicing import *       # noqa: F401,F403  slice, gather, scatter_add, concatenate, pad
from .contraction import *   # noqa: F401,F403  matmul
from .creation import *      # noqa: F401,F403  iota
from .sorting import *       # noqa: F401,F403  sort, argsort
from .debug import *         # noqa: F401,F403  debug_callback
from .linalg import *        # noqa: F401,F403  solve, slogdet, cholesky, eigh, svd, qr
from .fourier import *       # noqa: F401,F403  dft
from .complex_linalg import *  # noqa: F401,F403  complex_solve, complex_slogdet
from .complex_spectra import *  # noqa: F401,F403  complex_eigh, complex_svd, complex_eig
from .complex_scans import *  # noqa: F401,F403  complex_cumprod
from .host import *          # noqa: F401,F403  pure_callback
