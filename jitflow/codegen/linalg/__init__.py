"""The factorizations of numpy.linalg (solve, slogdet, cholesky, eigh, svd, qr): LAPACK
from the scipy-openblas32 wheel, called from generated code once per matrix of a batch
(lapack.py declares its routines, factorizations.py lowers each primitive).
"""
