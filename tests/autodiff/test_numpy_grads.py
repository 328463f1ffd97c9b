"""Derivatives of jitflow.numpy's composite functions and of NumPy indexing: each is
built from primitives, so each is differentiable to any order; checked against finite
differences on hypothesis-drawn inputs."""
import numpy as np
import pytest
from hypothesis import given, settings

import jitflow
import jitflow.numpy as jnp
from jitflow.testing import check_grads
from jitflow.testing.strategies import arrays

MATRIX = (3, 4)

COMPOSITES = {
    "mean": lambda x: np.mean(x, axis=0),
    "var": lambda x: np.var(x, axis=1),
    "std": lambda x: np.std(x + 3.0),
    "logsumexp": lambda x: jnp.logsumexp(x, axis=1),
    "softmax": lambda x: jnp.softmax(x),
    "log_softmax": lambda x: jnp.log_softmax(x, axis=0),
    "sigmoid": lambda x: jnp.sigmoid(x),
    "clip": lambda x: np.clip(x, -0.55, 0.45),
    "square": lambda x: np.square(x),
    "prod": lambda x: np.prod(x, axis=1),
    "cumsum": lambda x: np.cumsum(x, axis=1),
    "einsum": lambda x: np.einsum("ij,kj->ik", x, x),
    "tensordot": lambda x: np.tensordot(x, x, axes=([0], [0])),
    "outer": lambda x: np.outer(x[0], x[1]),
    "dot": lambda x: np.dot(x, x.T),
    "stack": lambda x: np.stack([x, 2 * x], axis=1),
    "concatenate": lambda x: np.concatenate([x, x[:1]], axis=0),
    "pad": lambda x: np.pad(x, ((1, 0), (0, 2))),
    "slicing": lambda x: x[::2, 1:3] * x[-1, ::-1][:2],
    "integer indexing": lambda x: x[np.array([0, 2, 0]), 1:] + x[:, np.array([3, 3])].sum(),
    "take": lambda x: np.take(x, np.array([1, 1, 0]), axis=1),
    "transpose and reshape": lambda x: np.reshape(x.T, (2, 6)) @ np.ones((6, 2)),
    "where": lambda x: np.where(x > 0, np.sin(x), x ** 3),
    "moveaxis": lambda x: np.moveaxis(x[None], 0, 2) * 1.5,
}



@pytest.mark.parametrize("name", sorted(COMPOSITES))
@settings(max_examples=max(2, settings.default.max_examples // 8))
@given(x=arrays(shape=MATRIX, min_value=-1, max_value=1, avoid=[-0.55, 0.0, 0.45],
                margin=0.05))
def test_composite_derivatives(name, x):
    check_grads(COMPOSITES[name], (x,), order=2)


@pytest.mark.parametrize("name", ["softmax", "var", "integer indexing", "where"])
def test_compiled_gradients_of_composites_equal_eager(name):
    fn = COMPOSITES[name]
    x = np.random.default_rng(1).uniform(-1, 1, MATRIX)
    ct = np.random.default_rng(2).standard_normal(np.shape(fn(x)))
    eager = jitflow.vjp(fn, x)[1](ct)[0]
    compiled = jitflow.function(lambda x, ct: jitflow.vjp(fn, x)[1](ct)[0])(x, ct)
    np.testing.assert_allclose(compiled, eager, rtol=1e-12, atol=1e-12)
