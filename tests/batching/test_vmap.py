"""vmap against a Python loop over the batch: every batching rule, eager and compiled,
axes, pytrees, derivatives through it, and its errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
from jitflow.batching import vmap
from jitflow.ir.primitive import REGISTRY


def looped(fn, args, in_axes, out_axis=0):
    """What vmap must return: fn on each batch element, stacked along out_axis."""
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    results = [fn(*[a if ax is None else np.take(a, k, axis=ax)
                    for a, ax in zip(args, in_axes)]) for k in range(size)]
    return np.stack(results, axis=out_axis)


@jitflow.custom_vjp
def clipped_identity(x):
    return x


clipped_identity.defvjp(lambda x: (x, None), lambda _, ct: (np.clip(ct, -1, 1),))

W = np.linspace(-1, 1, 12).reshape(3, 4)
INDICES = np.array([2, 0, 2])

# name -> (function of one example, shapes of its arguments per example)
CASES = {
    "unary": (lambda x: np.tanh(x) + np.exp(-x * x), [(3, 4)]),
    "binary broadcasting": (lambda x, y: x * y - y, [(3, 4), (4,)]),
    "comparisons and where": (lambda x, y: np.where(x > y, x, -y), [(3, 1), (4,)]),
    "cast": (lambda x: (x > 0).astype(np.float32) + x.astype(np.int32), [(5,)]),
    "matmul, data batched": (lambda x: x @ W, [(2, 3)]),
    "matmul, vector": (lambda x: x @ W, [(3,)]),
    "matmul, both batched": (lambda x, y: x @ y, [(2, 3), (3, 5)]),
    "matmul, weights batched": (lambda y: W.T @ y, [(3, 2)]),
    "batched matmul": (lambda x, y: x @ y, [(2, 2, 3), (3, 4)]),
    "reshape": (lambda x: x.reshape(6, 2) * 2, [(3, 4)]),
    "broadcast_to": (lambda x: np.broadcast_to(x, (2, 3, 4)) + 0, [(3, 1)]),
    "transpose": (lambda x: np.transpose(x, (2, 0, 1)) + 1, [(2, 3, 4)]),
    "sum": (lambda x: x.sum(axis=1) + x.sum(), [(3, 4)]),
    "prod, max, min": (lambda x: x.prod(axis=0, keepdims=True) + x.max(axis=1,
                       keepdims=True) - x.min(), [(3, 4)]),
    "argmax, argmin": (lambda x: np.argmax(x, axis=1) + np.argmin(x), [(3, 4)]),
    "argmax keepdims": (lambda x: np.argmax(x, axis=None, keepdims=True), [(3, 4)]),
    "cumsum": (lambda x: np.cumsum(x, axis=1), [(3, 4)]),
    "slice": (lambda x: x[::-1, 1:3] * x[0, ::2].sum(), [(3, 4)]),
    "pad": (lambda x: np.pad(x, ((1, 0), (2, 1))), [(3, 4)]),
    "concatenate": (lambda x: np.concatenate([x, W, x * 2], axis=0), [(3, 4)]),
    "gather": (lambda x: x[INDICES] + x[:, [1, 1]].sum(), [(3, 4)]),
    "gather, batched indices": (lambda x, i: x[i], [(4,), (2,)]),
    "scatter_add": (lambda x: jitflow.grad(lambda v: (v[INDICES] ** 2).sum())(x), [(4,)]),
    "custom_vjp": (lambda x: clipped_identity(x) * 3, [(3,)]),
    "scatter": (lambda x: _written(x, [0, 2, 0], x[1] * 2), [(4,)]),
    "scatter, batched indices": (lambda x, i: _written(x, i, -x[:2]), [(4,), (2,)]),
}


def _written(x, index, value):
    """x with x[index] = value and a slice written (scatters), as a new array."""
    y = x.copy()
    y[index] = value
    y[1:3] += 1.0
    return y


def example_args(shapes, size, rng):
    args = []
    for shape in shapes:
        if shape == (2,) and len(shapes) == 2 and shapes[0] == (4,):  # indices
            args.append(rng.integers(0, 4, (size,) + shape))
        else:
            args.append(rng.standard_normal((size,) + shape))
    return args


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("size", [1, 3])
def test_batched_equals_looped(name, size):
    fn, shapes = CASES[name]
    args = example_args(shapes, size, np.random.default_rng(len(name)))
    expected = looped(fn, args, [0] * len(args))
    eager = vmap(fn)(*args)
    compiled = jitflow.function(vmap(fn))(*args)
    for got in (eager, compiled):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
        assert got.dtype == expected.dtype and got.shape == expected.shape


def test_every_primitive_with_a_rule_or_by_element_is_covered():
    """Every primitive of the registry is batched by a rule tested above, or by the
    generic rules (elementwise, or one element at a time)."""
    from jitflow.batching.rules import RULES
    structural = {name for name, prim in REGISTRY.items() if not prim.elementwise}
    assert structural - set(RULES) <= {"iota", "custom_vjp_call", "custom_jvp_call"}


@given(st.data())
def test_axes_and_shared_arguments(data):
    x_shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    in_axis = data.draw(st.integers(-len(x_shape), len(x_shape) - 1))
    example = x_shape[:in_axis % len(x_shape)] + x_shape[in_axis % len(x_shape) + 1:]
    y_shape = data.draw(hnp.broadcastable_shapes(example, max_dims=len(example)))
    share_y = data.draw(st.booleans())
    if not share_y:
        y_shape = (x_shape[in_axis],) + y_shape
    out_axis = data.draw(st.integers(0, len(np.broadcast_shapes(example, y_shape[
        0 if share_y else 1:]))))
    x = data.draw(hnp.arrays(np.float64, x_shape, elements=st.floats(-5, 5)))
    y = data.draw(hnp.arrays(np.float32, y_shape, elements=st.floats(-5, 5, width=32)))
    fn = lambda x, y: np.sin(x) * y + y.sum()  # noqa: E731
    in_axes = (in_axis, None if share_y else 0)
    expected = looped(fn, [x, y], in_axes, out_axis)
    for mapped in (vmap(fn, in_axes, out_axis), jitflow.function(vmap(fn, in_axes, out_axis))):
        got = mapped(x, y)
        # y.sum() is a float32 sum: batched, its terms may be added in another order
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-5)
        assert got.dtype == expected.dtype


def test_pytrees_in_and_out():
    params = {"w": np.arange(6.0).reshape(2, 3), "b": np.ones(3)}
    xs = np.random.default_rng(0).standard_normal((5, 2))

    def layer(params, x):
        y = x @ params["w"] + params["b"]
        return {"y": y, "norm": (y * y).sum()}
    out = vmap(layer, in_axes=(None, 0))(params, xs)
    assert set(out) == {"y", "norm"}
    np.testing.assert_allclose(out["y"], xs @ params["w"] + params["b"])
    np.testing.assert_allclose(out["norm"], ((xs @ params["w"] + params["b"]) ** 2).sum(1))


def test_nested_vmap_and_derivatives_through_it():
    x = np.random.default_rng(1).standard_normal((4, 3, 2))
    fn = lambda v: np.tanh(v).sum() * v  # noqa: E731
    nested = vmap(vmap(fn))(x)
    np.testing.assert_allclose(nested, np.stack([looped(fn, [b], [0]) for b in x]))
    per_example_grads = vmap(jitflow.grad(lambda v: np.sum(np.sin(v) ** 2)))(x[0])
    np.testing.assert_allclose(per_example_grads, 2 * np.sin(x[0]) * np.cos(x[0]))
    outer = jitflow.grad(lambda x: vmap(lambda v: np.sum(v ** 3))(x).sum())(x)
    np.testing.assert_allclose(outer, 3 * x ** 2)


def test_a_shared_result_is_repeated_along_the_batch():
    out = vmap(lambda x, y: y * 2, in_axes=(0, None))(np.ones((3, 2)), np.arange(2.0))
    np.testing.assert_array_equal(out, [[0, 2]] * 3)


def test_closed_over_traced_values_are_shared():
    def f(x, w):
        return vmap(lambda row: row @ w)(x)
    x, w = np.ones((4, 3)), np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(jitflow.function(f)(x, w), x @ w)


def test_errors_name_the_arguments():
    with pytest.raises(ValueError, match=r"mapped axes differ in size: argument 0 has "
                                         r"size 3, argument 1 has size 4"):
        vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match=r"in_axes of argument 0 is 2, out of range for "
                                         r"an array of shape \(3, 4\)"):
        vmap(lambda a: a, in_axes=2)(np.ones((3, 4)))
    with pytest.raises(ValueError, match="no argument is mapped"):
        vmap(lambda a: a, in_axes=None)(np.ones(3))
    with pytest.raises(ValueError, match="in_axes has 1 entries but the function was "
                                         "called with 2"):
        vmap(lambda a, b: a, in_axes=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="out_axes is 2, out of range for a 2-d result"):
        vmap(lambda a: a, out_axes=2)(np.ones((3, 4)))


def test_keyword_arguments_are_mapped_along_their_first_axis():
    scaled = vmap(lambda x, scale=1.0: x * scale)(np.ones((2, 3)), scale=np.array([2.0, 3.0]))
    np.testing.assert_array_equal(scaled, [[2.0] * 3, [3.0] * 3])
    with pytest.raises(ValueError, match=r"argument 0 has size 2, argument 'scale' has "
                                         r"size 3"):
        vmap(lambda x, scale: x * scale)(np.ones(2), scale=np.ones(3))
    with pytest.raises(ValueError, match=r"in_axes of argument 0\['w'\] is 0, out of "
                                         r"range for an array of shape \(\)"):
        vmap(lambda p: p["w"])({"w": 1.0})
