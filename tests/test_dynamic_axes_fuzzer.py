"""The program fuzzer's programs (test_program_fuzzer.py) compiled with dynamic_axes on
their inputs' leading axis, then called at several sizes of it: each call must give
NumPy's values, dtypes and shapes at that size, or raise where NumPy raises.

The inputs that take the new size are those whose leading axis is the broadcast
result's leading axis, of length 2 or more; the others keep theirs. The first size is
compiled for itself, the second makes the code for all sizes, and later ones run that
code where their graph is the template's (dynamic_axes.py); hypothesis' statistics
(`--hypothesis-show-statistics`) count how each size ran.
"""
import inspect

import numpy as np
from hypothesis import assume, event, given, note
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fuzzer_inputs import input_values, laid_out
from fuzzer_ops import OPS
from test_compositions import evaluate
from test_program_fuzzer import FUZZ, call, check, numpy_values, programs, run_numpy

SIZES = (2, 3, 4, 5, 7, 19, 33)


@FUZZ
@given(program=programs(), data=st.data())
def test_each_size_matches_numpy(program, data):
    resized = _resized_inputs(program)
    assume(resized)
    sizes = data.draw(st.lists(st.sampled_from(SIZES), min_size=3, max_size=3,
                               unique=True))
    note(f"program:\n{program}\nresized inputs: {resized}, sizes {sizes}")
    fn = _compiled(program, resized)
    for n in [program.inputs[resized[0]].shape[0]] + sizes:
        inputs = _at_size(program, resized, n, data)
        note(f"n={n}: {inputs}")
        expected, got = run_numpy(program, inputs), call(fn, "native", inputs)
        if expected[1] is not None:
            # At a new size several steps may fail: NumPy meets the first at run time,
            # a trace the first whose shapes do not fit (so the kinds may differ).
            assert got[1] is not None, \
                f"n={n}: NumPy raises {expected[1]!r}, jitflow returns {got[0]}"
            continue
        check(f"n={n}", got, expected, program, numpy_values(program, inputs))
    for line in fn.cache_info().dynamic[1:]:
        event(line.split(": ", 1)[1].split(" (")[0])


def _resized_inputs(program):
    """The positions of the inputs whose leading axis is the programs' batch axis."""
    arrays = [x for x in program.inputs if isinstance(x, np.ndarray)]
    if not arrays:
        return []
    ndim = max(x.ndim for x in arrays)
    if ndim == 0:
        return []
    lead = max(x.shape[0] for x in arrays if x.ndim == ndim)
    if lead < 2:
        return []
    return [i for i, x in enumerate(program.inputs)
            if isinstance(x, np.ndarray) and x.ndim == ndim and x.shape[0] == lead]


def _at_size(program, resized, n, data):
    """The program's inputs with those `resized` drawn anew at leading size n, in the
    dtype and memory layout they had."""
    inputs = list(program.inputs)
    for i in resized:
        x = inputs[i]
        if x.shape[0] != n:
            values = data.draw(input_values(x.dtype, (n,) + x.shape[1:]))
            inputs[i] = laid_out(values, program.layouts[i])
    return inputs


def _compiled(program, resized):
    def fn(*inputs):
        values = evaluate(program, jnp, inputs, OPS)
        return tuple(values[i] for i in program.outputs)
    fn.__signature__ = inspect.Signature([
        inspect.Parameter(f"x{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for i in range(len(program.inputs))])
    return jitflow.function(fn, dynamic_axes={f"x{i}": 0 for i in resized})
