"""jitflow.numpy.linalg (norms, and the products and diagonals numpy.linalg names)
against numpy.linalg, eagerly, traced, and through numpy.linalg's own functions on traced
values; derivatives against central differences; the orders it refuses, by name."""
import math

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import given_per_backend
from jitflow.testing import check_grads
from numpy_programs import check_program
from strategies import shapes
from test_numpy_statistics import rounding, values  # noqa: the strategies

pytestmark = pytest.mark.usefixtures("backend")

VECTOR_ORDERS = [None, 2, 1, 0, 3, 0.5, -1, math.inf, -math.inf, "fro"]
MATRIX_ORDERS = [None, "fro", 1, -1, math.inf, -math.inf, 2, -2, "nuc", 3]


def norm_tolerance(x, ord):
    """Norms add terms of one sign (no cancellation), then take a root: relative
    rounding of n terms (pow rounds in native code too)."""
    dtype = np.asarray(x).dtype if np.asarray(x).dtype.kind == "f" else np.float64
    return {"rtol": 16 * (np.size(x) + 1) * float(np.finfo(dtype).eps)}


@given_per_backend(data=st.data())
def test_vector_norms(data):
    x = values(data, data.draw(shapes(min_dims=1, max_dims=3), label="shape"),
               special=data.draw(st.booleans(), label="special"))
    ord = data.draw(st.sampled_from(VECTOR_ORDERS), label="ord")
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    check_program(lambda xp, x: xp.linalg.norm(x, ord, axis, keepdims), x,
                  what="norm", zero_sign=False, **norm_tolerance(x, ord))


@given_per_backend(data=st.data())
def test_matrix_norms(data):
    x = values(data, data.draw(shapes(min_dims=2, max_dims=3, min_side=1), label="shape"),
               special=data.draw(st.booleans(), label="special"))
    ord = data.draw(st.sampled_from(MATRIX_ORDERS), label="ord")
    axes = tuple(data.draw(st.permutations(range(x.ndim)), label="axes")[:2])
    if data.draw(st.booleans(), label="negative"):
        axes = (axes[0] - x.ndim, axes[1])
    keepdims = data.draw(st.booleans(), label="keepdims")
    check_program(lambda xp, x: xp.linalg.norm(x, ord, axes, keepdims), x,
                  what="matrix norm", zero_sign=False, **norm_tolerance(x, ord))


@given_per_backend(data=st.data())
def test_norm_of_everything(data):
    x = values(data, data.draw(shapes(max_dims=3), label="shape"), special=False)
    ord = data.draw(st.sampled_from([None, 1, math.inf, "fro"]), label="ord")
    keepdims = data.draw(st.booleans(), label="keepdims")
    check_program(lambda xp, x: xp.linalg.norm(x, ord, keepdims=keepdims), x,
                  what="norm", zero_sign=False, **norm_tolerance(x, ord))
    check_program(lambda xp, x: xp.linalg.vector_norm(x, keepdims=keepdims), x,
                  what="vector_norm", zero_sign=False, **norm_tolerance(x, None))


@given_per_backend(data=st.data())
def test_linalg_products_and_diagonals(data):
    x = values(data, data.draw(shapes(min_dims=2, max_dims=3), label="shape"),
               special=False)
    offset = data.draw(st.integers(-3, 3), label="offset")
    tolerance = dict(rounding(x, x), zero_sign=False)
    check_program(lambda xp, x: xp.linalg.trace(x, offset=offset), x, **tolerance)
    check_program(lambda xp, x: xp.linalg.diagonal(x, offset=offset), x)
    check_program(lambda xp, x: xp.linalg.matrix_norm(x), x, **tolerance)
    check_program(lambda xp, x: xp.linalg.vecdot(x, x), x, **tolerance)
    check_program(lambda xp, x: xp.linalg.matmul(x, xp.swapaxes(x, -1, -2)), x,
                  **tolerance)
    check_program(lambda xp, x: xp.linalg.outer(x[0, ..., 0], x[..., -1].ravel()), x)


def test_numpy_linalg_functions_jitflow_lacks_are_named(backend):
    with pytest.raises(NotImplementedError, match="mode='raw'"):
        jitflow.function(lambda x: np.linalg.qr(x * 1j, mode="raw"))(np.eye(2))


def _apart(values):
    values = np.sort(np.ravel(values))
    return values.size < 2 or np.min(np.diff(values)) > 1e-2


def away_from_kinks(x):
    """No two magnitudes, row sums or column sums tie (max and min have kinks there)."""
    a = np.abs(x)
    return _apart(a) and _apart(a.sum(axis=0)) and _apart(a.sum(axis=1))


@pytest.mark.parametrize("ord, axis", [(None, None), (None, 1), (1, 0), (3, -1),
                                       (math.inf, 1), ("fro", (0, 1)), (1, (1, 0)),
                                       (math.inf, (0, 1))])
@given_per_backend(x=hnp.arrays(np.float64, (3, 4), elements=st.floats(0.1, 2) |
                                st.floats(-2, -0.1)).filter(away_from_kinks),
                   ci_examples=12)
def test_derivatives(ord, axis, x):
    def fn(x):
        return jnp.linalg.norm(x, ord, axis)
    check_grads(fn, (x,), order=1, rtol=1e-4, atol=1e-4)
    check_grads(jitflow.function(fn), (x,), order=1, rtol=1e-4, atol=1e-4)
