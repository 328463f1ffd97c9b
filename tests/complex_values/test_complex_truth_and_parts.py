"""Complex values read as truths (nonzero, argwhere, flatnonzero, the logical
functions, extract's and compress's conditions), extract and compress of complex
values, rint, diagflat, unstack, array_equiv and lexsort, compiled, against NumPy bit
for bit (NaN, infinities and signed zeros among the values)."""
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from complex_checks import assert_complex_same

pytestmark = pytest.mark.usefixtures("backend")
EXAMPLES = settings(max_examples=10 if settings.default.max_examples < 1000 else 300)

NAN, INF = float("nan"), float("inf")
PARTS = [0.0, -0.0, 1.0, -1.0, 2.5, 0.5, NAN, INF, -INF]


def complex_vectors(min_side=1):
    part = st.sampled_from(PARTS) | st.floats(-10, 10)
    return st.sampled_from([np.complex64, np.complex128]).flatmap(
        lambda dtype: hnp.arrays(dtype, st.integers(min_side, 6),
                                 elements=st.builds(complex, part, part)))


def numpy_and_compiled(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return jitflow.function(fn)(*args), fn(*args)


def assert_all_same(got, expected, what):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected), what
    for g, e in zip(got, expected):
        assert_complex_same(g, e, what=what)


# name: (jitflow's, NumPy's) on a complex vector z and the real vector r = z.real
SELECTED = {
    "nonzero": (lambda z, r: jnp.nonzero(z, size=z.size, fill_value=-1),
                lambda z, r: _filled(np.nonzero(z)[0], z.size, -1)),
    "flatnonzero": (lambda z, r: jnp.flatnonzero(z.reshape(1, -1), size=z.size),
                    lambda z, r: _filled(np.flatnonzero(z), z.size, 0)),
    "argwhere": (lambda z, r: jnp.argwhere(z, size=z.size)[:, 0],
                 lambda z, r: _filled(np.argwhere(z)[:, 0], z.size, 0)),
    "extract of complex values": (lambda z, r: jnp.extract(r, z, size=z.size),
                                  lambda z, r: _filled(np.extract(r, z), z.size, 0)),
    "extract by a complex condition": (lambda z, r: jnp.extract(z, r, size=z.size,
                                                               fill_value=7),
                                       lambda z, r: _filled(np.extract(z, r), z.size, 7)),
    "compress by a complex condition": (lambda z, r: jnp.compress(z, r, size=z.size,
                                                                  fill_value=7),
                                        lambda z, r: _filled(np.compress(z, r), z.size, 7)),
    "compress of complex values": (lambda z, r: jnp.compress(r, z, size=z.size,
                                                             fill_value=2 - 1j),
                                   lambda z, r: _filled(np.compress(r, z), z.size, 2 - 1j)),
}
ELEMENTWISE = {
    "logical_not": lambda z, r: np.logical_not(z),
    "logical_and": lambda z, r: np.logical_and(z, r),
    "logical_or": lambda z, r: np.logical_or(r, z),
    "logical_xor": lambda z, r: np.logical_xor(z, z[::-1]),
    "rint": lambda z, r: np.rint(z),
    "diagflat": lambda z, r: np.diagflat(z, -1),
    "unstack": lambda z, r: np.unstack(np.stack([z, r]), axis=1),
    "array_equiv": lambda z, r: (np.array_equiv(z, z[:1]), np.array_equiv(z, z),
                                 np.array_equiv(z, r)),
    "compress along an axis": lambda z, r: np.compress([True, False], np.stack([z, r]), 0),
    "lexsort": lambda z, r: np.lexsort((z, r)),
    "lexsort of complex rows": lambda z, r: np.lexsort(np.stack([r + 0j, z])),
    "tril_indices_from": lambda z, r: np.tril_indices_from(np.outer(z, z), -1),
}


def _filled(values, size, fill):
    """NumPy's result padded to `size` with `fill`, as jitflow's size= gives it."""
    values = np.asarray(values)
    return np.concatenate([values, np.full(size - values.size, fill, values.dtype)])


@EXAMPLES
@given(complex_vectors(), st.sampled_from(sorted(SELECTED)))
def test_selections_by_truth_are_numpys(z, name):
    ours, theirs = SELECTED[name]
    got, expected = jitflow.function(ours)(z, z.real), theirs(z, z.real)
    assert_all_same(got, expected, name)


@EXAMPLES
@given(complex_vectors(min_side=2), st.sampled_from(sorted(ELEMENTWISE)))
def test_truths_and_parts_are_numpys(z, name):
    got, expected = numpy_and_compiled(ELEMENTWISE[name], z, z.real)
    if name == "array_equiv":
        assert tuple(bool(g) for g in got) == expected
        return
    assert_all_same(got, expected, name)


def test_a_traced_condition_without_a_size_asks_for_one():
    with pytest.raises(jitflow.ConcretizationError, match="pass a static size="):
        jitflow.function(lambda z: np.extract(z, z))(np.array([1j, 0]))
