"""The program fuzzer's programs (test_program_fuzzer.py) compiled with dynamic_axes on
one axis of their inputs (the first, second or third), then called at several sizes
of it: each call must give NumPy's values, dtypes and shapes at that size where NumPy
gives them (where NumPy raises at a new size, see the comment in the test).

The inputs that take the new size are those of the greatest rank whose axis is the
broadcast result's along it, of length 2 or more; the others keep theirs. The first
size is compiled for itself, the second makes the code for all sizes, and later ones
run that code where their graph is the template's (dynamic_axes.py). Each size is
called twice: the checked path, then the entry made for the size. Where the last size
ran the code for all sizes, its results must be the bits of code compiled for that size
alone. Hypothesis' statistics (`--hypothesis-show-statistics`) count how each size ran.
"""
import numpy as np
from hypothesis import assume, event, given, note
from hypothesis import strategies as st

from fuzzer_inputs import input_values, laid_out
from test_program_fuzzer import (FUZZ, call, check, numpy_values, programs, run_numpy,
                                 traced)

SIZES = (2, 3, 4, 5, 7, 19, 33)


@FUZZ
@given(program=programs(), data=st.data())
def test_each_size_matches_numpy(program, data):
    axis = data.draw(st.integers(0, 2))
    resized = _resized_inputs(program, axis)
    assume(resized)
    sizes = data.draw(st.lists(st.sampled_from(SIZES), min_size=3, max_size=3,
                               unique=True))
    note(f"program:\n{program}\nresized inputs: {resized} along axis {axis}, "
         f"sizes {sizes}")
    fn = traced(program, "native", dynamic_axes={f"x{i}": axis for i in resized})
    for n in [program.inputs[resized[0]].shape[axis]] + sizes:
        inputs = _at_size(program, resized, axis, n, data)
        note(f"n={n}: {inputs}")
        expected = run_numpy(program, inputs)
        values = None if expected[1] is not None else numpy_values(program, inputs)
        for run in ("first", "second"):  # the checked path, then the size's own entry
            got = call(fn, "native", inputs)
            if expected[1] is None:
                check(f"n={n}, {run} call", got, expected, program, values)
            elif got[1] is None:
                # At a new size a step in the middle may fail, whose value no result
                # depends on once the graph is simplified (where(c, v, v) is v): jitflow
                # never computes it, so it does not raise (README: "A value that no
                # result depends on is never computed"). Where jitflow raises, NumPy
                # may meet another step first (a trace meets the first whose shapes do
                # not fit), so the kinds may differ.
                event("NumPy raises at this size, jitflow computes the results")
    lines = fn.cache_info().dynamic
    for line in lines[1:]:
        event(line.split(": ", 1)[1].split(" (")[0])
    if lines and lines[-1].startswith(f"n={n}: runs the code for all sizes"):
        _check_bits_of_code_for_the_size(program, got, inputs)


def _check_bits_of_code_for_the_size(program, got, inputs):
    """The last size ran the code for all sizes: its results are the bits of code
    compiled for that size alone (the same chunks, the same order), NaNs aside: the
    sign of a NaN that arithmetic makes is the CPU's (x86: negative), or LLVM's where
    it folds the operation at a known size (0.0 / 0 of an empty mean: positive)."""
    static = call(traced(program, "native"), "native", inputs)
    if got[1] is not None or static[1] is not None:
        return
    for index, (dynamic_value, static_value) in enumerate(zip(got[0], static[0])):
        a, b = np.asarray(dynamic_value), np.asarray(static_value)
        assert a.dtype == b.dtype and a.shape == b.shape, (index, a, b)
        assert _bits_nan_free(a) == _bits_nan_free(b), \
            f"result {index}: the code for all sizes gives {a}, code for the size {b}"


def _bits_nan_free(values):
    """The bytes of `values` with every NaN made one NaN."""
    if values.dtype.kind in "fc" or values.dtype.name == "bfloat16":
        values = np.where(np.isnan(values), np.array(np.nan, values.dtype), values)
    return values.tobytes()


def _resized_inputs(program, axis):
    """The positions of the inputs of the greatest rank whose `axis` is the broadcast
    result's along it, of length 2 or more (none if there is no such axis)."""
    arrays = [x for x in program.inputs if isinstance(x, np.ndarray)]
    ndim = max((x.ndim for x in arrays), default=0)
    if axis >= ndim:
        return []
    length = max(x.shape[axis] for x in arrays if x.ndim == ndim)
    if length < 2:
        return []
    return [i for i, x in enumerate(program.inputs)
            if isinstance(x, np.ndarray) and x.ndim == ndim and x.shape[axis] == length]


def _at_size(program, resized, axis, n, data):
    """The program's inputs with those `resized` drawn anew with n along `axis`, in the
    dtype and memory layout they had."""
    inputs = list(program.inputs)
    for i in resized:
        x = inputs[i]
        if x.shape[axis] != n:
            shape = x.shape[:axis] + (n,) + x.shape[axis + 1:]
            inputs[i] = laid_out(data.draw(input_values(x.dtype, shape)),
                                 program.layouts[i])
    return inputs

