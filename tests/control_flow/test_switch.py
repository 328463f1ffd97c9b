"""switch and cond: the chosen branch's values, eagerly and compiled on both backends,
with derivatives, closures, pytrees and clear errors."""
import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, given_per_backend
from jitflow.testing import check_grads
from strategies import arrays, shapes

THIS_FILE = "test_switch.py"

BRANCHES = [lambda x, y: x * y + 1.0, lambda x, y: jnp.tanh(x) - y,
            lambda x, y: jnp.maximum(x, y) * 2.0]


def clamped(index, count):
    return min(max(int(index), 0), count - 1)


@given_per_backend(st.integers(-2, 4), st.sampled_from([np.float32, np.float64]),
                   shapes(max_dims=2), st.data())
def test_switch_runs_the_clamped_branch(index, dtype, shape, data):
    x = data.draw(arrays(np.dtype(dtype), shape, min_value=-5, max_value=5))
    y = data.draw(arrays(np.dtype(dtype), shape, min_value=-5, max_value=5))
    compiled = jitflow.function(lambda i, x, y: jitflow.switch(i, BRANCHES, x, y))
    expected = BRANCHES[clamped(index, 3)](x, y)
    assert_same(jitflow.switch(index, BRANCHES, x, y), expected)
    # tanh(x) - y cancels: a 1-ulp difference in tanh (native code's is not NumPy's) is
    # many ulp of the result, but not more than a few ulp of the operands.
    assert_same(compiled(np.int64(index), x, y), expected, ulps=8,
                atol=8 * float(np.finfo(dtype).eps) * 5)


def test_cond_takes_a_boolean_and_trees(backend):
    def step(flag, params):
        return jitflow.cond(flag, lambda p: {"w": p["w"] * 2.0, "n": p["n"] + 1},
                            lambda p: {"w": -p["w"], "n": p["n"]}, params)
    compiled = jitflow.function(step)
    params = {"w": np.array([1.0, -2.0]), "n": np.int64(3)}
    for flag in (True, False, np.bool_(True)):
        result, expected = compiled(flag, params), step(flag, params)
        assert_same(result["w"], expected["w"])
        assert_same(np.asarray(result["n"]), np.asarray(expected["n"]))


def test_branches_close_over_traced_values(backend):
    @jitflow.function
    def scaled(x, scale, shift, pick):
        return jitflow.switch(pick, [lambda v: v * scale, lambda v: v + shift,
                                     lambda v: v * scale + shift], x)
    x = np.arange(4.0)
    for pick, expected in [(0, x * 3.0), (1, x - 1.0), (2, x * 3.0 - 1.0)]:
        assert_same(scaled(x, 3.0, -1.0, pick), expected)


def test_only_the_taken_branch_can_fail(backend):
    table = np.arange(3.0)
    lookup = jitflow.function(lambda i, flag: jitflow.cond(
        flag, lambda i: jnp.take(table, i), lambda i: jnp.zeros_like(i, dtype=float), i))
    assert_same(lookup(np.array([7]), False), np.zeros(1))
    with pytest.raises(IndexError):
        lookup(np.array([7]), True)


@pytest.mark.parametrize("flag", [True, False])
def test_derivatives_go_through_the_taken_branch(flag):
    def f(x, y):
        return jitflow.cond(flag, lambda x, y: jnp.sin(x) * y,
                            lambda x, y: x * x - jnp.exp(y), x, y).sum()
    x, y = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -0.7])
    check_grads(f, (x, y), order=2)
    grads = jitflow.function(jitflow.grad(f, argnums=(0, 1)))(x, y)
    want = (np.cos(x) * y, np.sin(x)) if flag else (2 * x, -np.exp(y))
    for got, expected in zip(grads, want):
        assert_same(got, expected, rtol=1e-14)


def test_eager_branches_are_plain_python():
    seen = []

    def loud(x):
        seen.append(float(x.sum()))  # a concrete value: only eagerly
        return x + 1.0 if x.sum() > 0 else x - 1.0
    assert_same(jitflow.cond(True, loud, lambda x: x, np.ones(2)), np.full(2, 2.0))
    assert seen == [2.0]


@pytest.mark.parametrize("branches, words", [
    ([lambda x: x, lambda x: x.astype(np.float32)],
     r"result is f32\[2\] in branch 1 but f64\[2\] in branch 0"),
    ([lambda x: (x, x), lambda x: x], r"branch 1 returns \(result\), but branch 0 returns "
                                      r"\(result\[0\], result\[1\]\)"),
    ([lambda x: x, lambda x: x[:1]], r"f64\[1\] in branch 1 but f64\[2\]"),
])
def test_branches_returning_different_types_are_clear_errors(branches, words):
    compiled = jitflow.function(lambda i, x: jitflow.switch(i, branches, x))
    with pytest.raises(TypeError, match=words) as error:
        compiled(0, np.ones(2))
    assert THIS_FILE in str(error.value)


def test_a_bad_index_or_branch_list_is_a_clear_error(backend):
    with pytest.raises(TypeError, match=r"index must be an integer or boolean scalar, got "
                                        r"f64\[\]") as error:
        jitflow.function(lambda x: jitflow.switch(x.sum(), BRANCHES, x, x))(np.ones(2))
    assert THIS_FILE in str(error.value)
    with pytest.raises(TypeError, match="index must be an integer or boolean scalar"):
        jitflow.switch(np.ones(2, np.int64), BRANCHES, 1.0, 2.0)
    with pytest.raises(TypeError, match="non-empty sequence of functions"):
        jitflow.switch(0, [], 1.0)
