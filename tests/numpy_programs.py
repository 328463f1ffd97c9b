"""Running a small program written against an array namespace three ways and comparing
with NumPy: eagerly with jitflow.numpy, traced with jitflow.numpy, and traced with
NumPy's own functions on traced values (NEP 13/18 dispatch)."""
import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp
from jitflow.ir.types import SUPPORTED_DTYPES
from fidelity import assert_same, error_kinds, numpy_outcome, run_traced


def leaves(result):
    """The arrays of a result that may be a list or tuple of arrays."""
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in leaves(item)]
    return [result]


def check_program(program, *arrays, what="", **tolerance):
    """program(xp, *arrays) for xp = numpy (the reference) and jitflow: the same values,
    dtypes and shapes (within `tolerance`, assert_same's keywords), or the same kind of
    error."""
    expected, error = numpy_outcome(program, np, *arrays)
    unsupported = [e.dtype for e in leaves(expected) if error is None and
                   np.asarray(e).dtype not in SUPPORTED_DTYPES]
    if unsupported:  # float16 (NumPy's sinh of bool), int8, ...: jitflow refuses them
        error = TypeError(f"NumPy gives {unsupported[0]}")
    runs = {"eagerly": lambda: program(jnp, *arrays),
            "traced": lambda: run_traced(lambda *a: program(jnp, *a), *arrays),
            "traced through NumPy": lambda: run_traced(lambda *a: program(np, *a), *arrays)}
    for label, run in runs.items():
        if error is not None:
            with pytest.raises(error_kinds(error)), np.errstate(all="ignore"):
                run()
            continue
        with np.errstate(all="ignore"):
            got = run()
        assert type(got) is type(expected) or not isinstance(expected, (list, tuple)), \
            f"{what} {label}: {type(got).__name__}, NumPy gives {type(expected).__name__}"
        got, wanted = leaves(got), leaves(expected)
        assert len(got) == len(wanted), f"{what} {label}: {len(got)} arrays, not {len(wanted)}"
        for g, e in zip(got, wanted):
            assert_same(g, e, what=f"{what} {label}", **tolerance)


def native_ulps(n):
    """A tolerance of n ulp on native code (transcendental functions round there)."""
    return {"ulps": n} if jitflow.config.backend == "native" else {}
