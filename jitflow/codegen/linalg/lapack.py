"""LAPACK's routines, through its C interface LAPACKE in column-major order, from the
library blas.py loads (scipy-openblas32: 32-bit integers, every symbol prefixed
`scipy_`). Generated code hands each routine a column-major copy that it made itself
(factorizations.py), so LAPACKE passes it straight to LAPACK; the routines that need
workspaces take them from the caller (their `_work` forms, WORKSPACES below), sized by
LAPACK's own query while lowering.

As for gemm, generated code calls each routine by its symbol, which is registered for
LLVM's linker the first time lowering declares it. LAPACKE's check of its operands for
NaN is turned off when the library is first used here: LAPACK propagates NaN as NumPy's
calls of it do, where the check would refuse the matrix instead.
"""
import ctypes
import functools

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from ..emitter import I8, I32, PTR
from ..gemm import blas

COLUMN_MAJOR = 102  # LAPACKE's layout code (row-major is 101)
# LAPACKE's status for a workspace it could not allocate (lapacke.h)
WORK_MEMORY_ERROR = -1010

# The routines' arguments after the layout: "i" a lapack_int, "c" a char, "p" a pointer.
ARGUMENTS = {
    "gesv": "iipippi",     # n, nrhs, a, lda, ipiv, b, ldb
    "getrf": "iipip",      # m, n, a, lda, ipiv
    "getrs": "ciipippi",   # trans, n, nrhs, a, lda, ipiv, b, ldb
    "potrf": "cipi",       # uplo, n, a, lda
    "syevd": "ccipip",     # jobz, uplo, n, a, lda, w
    "heevd": "ccipip",     # jobz, uplo, n, a, lda, w (a complex, w real)
    "geev": "ccipipppipi",  # jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr
    "gesdd": "ciipippipi",  # jobz, m, n, a, lda, s, u, ldu, vt, ldvt
    "geqrf": "iipip",      # m, n, a, lda, tau
    "orgqr": "iiipip",     # m, n, k, a, lda, tau
    "ungqr": "iiipip",     # m, n, k, a, lda, tau (complex)
}
# where the routine of complex matrices has other arguments (its eigenvalues complex)
COMPLEX_ARGUMENTS = {
    "geev": "ccipippipi",  # jobvl, jobvr, n, a, lda, w, vl, ldvl, vr, ldvr
}
# The routines whose LAPACKE _work form takes its workspaces from the caller, and those
# workspaces after the routine's own arguments: "w" a work array of the matrix's dtype and
# its length, "n" an int32 one and its length, "g" gesdd's int32 one of 8 min(m, n)
# (no length). Called column-major, a _work routine is LAPACK's own call: no allocation,
# no transpose (LAPACKE's plain routines query and allocate workspaces per matrix).
WORKSPACES = {"syevd": "wn", "gesdd": "wg", "geqrf": "w", "orgqr": "w"}
PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}
# the routines of complex matrices, by the dtype of their parts (interleaved in memory)
COMPLEX_PREFIX = {np.dtype(np.float32): "c", np.dtype(np.float64): "z"}
KINDS = {"i": I32, "c": I8, "p": PTR}


def available():
    return _library() is not None


@functools.cache
def _library():
    handle = blas.library()
    if handle is None:
        return None
    try:
        handle.scipy_LAPACKE_set_nancheck(ctypes.c_int(0))
    except AttributeError:
        return None
    return handle


@functools.cache
def _registered(symbol):
    handle = _library()
    llvm.add_symbol(symbol, ctypes.cast(getattr(handle, symbol), ctypes.c_void_p).value)
    return symbol


def routine(module, name, dtype, complex_parts=False, work=False):
    """LAPACKE's `name` routine for `dtype` declared in `module`: i32 (layout, ...);
    complex_parts: the routine of complex matrices whose parts are of `dtype`; work: its
    _work form, which takes the WORKSPACES after the routine's arguments."""
    _check_available(name)
    prefix = (COMPLEX_PREFIX if complex_parts else PREFIX)[np.dtype(dtype)]
    symbol = _registered(f"scipy_LAPACKE_{prefix}{name}{'_work' if work else ''}")
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    kinds = (COMPLEX_ARGUMENTS if complex_parts else {}).get(name, ARGUMENTS[name])
    if work:
        kinds += "".join("p" if space == "g" else "pi" for space in WORKSPACES[name])
    function = ir.Function(module, ir.FunctionType(I32, [I32] + [KINDS[k] for k in kinds]),
                           symbol)
    for argument, kind in zip(function.args[1:], kinds):
        if kind == "c":  # C's default promotion of a char: the callee may rely on it
            argument.add_attribute("signext")
    return function


def char(letter):
    return I8(ord(letter))


def _check_available(name):
    if not available():
        raise NotImplementedError(
            f"numpy.linalg's {name} needs LAPACK, from the scipy-openblas32 package, "
            f"which is not installed or does not load")


def workspace_sizes(name, dtype, *arguments):
    """The lengths of the queried workspaces ("w" and "n" of WORKSPACES[name]) that
    `name` asks for when called column-major with `arguments` (ints, one-letter strs, and
    None for each array), by LAPACK's workspace query (a length of -1), made once while
    lowering. A query only computes the lengths and touches no array (LAPACK's
    documented contract), so each array is a one-element stand-in."""
    _check_available(name)
    dtype = np.dtype(dtype)
    query = getattr(_library(), f"scipy_LAPACKE_{PREFIX[dtype]}{name}_work")
    stand_in = np.zeros(8, dtype)  # (kept alive by this frame during the call)
    values = [ctypes.c_int(COLUMN_MAJOR)]
    for argument in arguments:
        if isinstance(argument, str):
            values.append(ctypes.c_char(argument.encode()))
        elif argument is None:
            values.append(ctypes.c_void_p(stand_in.ctypes.data))
        else:
            values.append(ctypes.c_int(argument))
    answers = []
    for space in WORKSPACES[name]:
        answer = np.zeros(1, dtype if space == "w" else np.int32)
        values.append(ctypes.c_void_p(answer.ctypes.data))
        if space != "g":
            answers.append(answer)
            values.append(ctypes.c_int(-1))
    query.restype = ctypes.c_int
    info = query(*values)
    if info != 0:
        raise RuntimeError(f"LAPACK's {name} workspace query failed (info {info})")
    return [max(1, int(answer[0])) for answer in answers]
