"""The factorizations of numpy.linalg (solve, slogdet, cholesky, eigh, svd, qr, eig and
their complex forms): LAPACK from the scipy-openblas32 wheel, called from generated
code once per matrix of a batch (lapack.py declares its routines, factorizations.py
lowers each real primitive, complex_factorizations.py each complex one).
"""
