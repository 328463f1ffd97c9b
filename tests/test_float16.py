"""float16 against NumPy 2, which computes each operation on halves in float32 and
rounds the result to half once: so does jitflow, and its arithmetic, casts (float64 to
half included, rounded once), matmul (summed in float32 in k order) and sums therefore
equal NumPy's bit for bit; transcendental functions are within one half ulp (their
float32 values are within a few float32 ulp, fidelity.py). Promotion follows NEP 50
with every other dtype, and derivatives are float16 as NumPy would compute them."""
import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, given_per_backend, run_traced
from numpy_programs import check_program
from strategies import ALL_DTYPES, arrays
from test_integer_dtypes import BINARY, _all_binary_ops, _corners

pytestmark = pytest.mark.usefixtures("backend")

HALF = np.dtype(np.float16)
EVERY_HALF = np.arange(2**16, dtype=np.uint16).view(np.float16)


@pytest.mark.parametrize("other", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("half_first", [True, False], ids=["half-other", "other-half"])
def test_binary_ops_with_every_dtype(other, half_first, backend):
    x, y = _corners(HALF), _corners(other)[::-1].copy()
    if not half_first:
        x, y = y, x
    check_program(_all_binary_ops, x, y, what=f"{x.dtype} and {y.dtype}")


@given_per_backend(data=st.data())
def test_arithmetic_rounds_once_per_operation(data):
    name = data.draw(st.sampled_from(["add", "subtract", "multiply", "true_divide",
                                      "floor_divide", "remainder", "power", "maximum"]))
    x = data.draw(arrays(HALF, (7,)), label="x")
    if data.draw(st.booleans(), label="y is a Python number"):
        y = data.draw(st.sampled_from([1.5, 3, 1e5, -0.0]), label="y")
    else:
        y = data.draw(arrays(HALF, (7,)), label="y")
    check_program(BINARY[name], x, y, what=name)


def test_exact_unary_ops_on_every_half(backend):
    """sqrt, negation, floor, abs and float64 round trips on all 65536 halves."""
    def program(xp, x):
        return (xp.sqrt(x), -x, xp.floor(x), xp.abs(x), x.astype(np.float64).astype(x.dtype),
                x * x, x.astype(np.int32), xp.isnan(x), x < 1)
    check_program(program, np.where(np.isfinite(EVERY_HALF) | np.isnan(EVERY_HALF),
                                    EVERY_HALF, 0).astype(HALF), what="unary")


def test_transcendental_functions_within_one_half_ulp(backend):
    finite = EVERY_HALF[np.isfinite(EVERY_HALF)]
    for name in ("exp", "log", "sin", "tanh", "expm1", "log1p"):
        with np.errstate(all="ignore"):
            expected = getattr(np, name)(finite)
            got = run_traced(getattr(jnp, name), finite)
        assert_same(got, expected, ulps=1, what=name)


def test_float64_to_half_rounds_once(backend):
    """Doubles on and just beside the midpoints of neighbouring halves, where rounding
    through float32 first would round twice."""
    low = EVERY_HALF[np.isfinite(EVERY_HALF)]
    with np.errstate(over="ignore"):
        high = np.nextafter(low, np.float16(np.inf)).astype(np.float64)
        middle = (low.astype(np.float64) + high) / 2
        values = np.concatenate([middle, np.nextafter(middle, np.inf),
                                 np.nextafter(middle, -np.inf), [1e300, -1e-300, np.nan]])
        expected = values.astype(np.float16)
    got = run_traced(lambda x: x.astype(np.float16), values)
    assert_same(got, expected, what="float64 -> half")


@given_per_backend(data=st.data())
def test_casts_to_and_from_half(data):
    other = data.draw(st.sampled_from(ALL_DTYPES), label="other dtype")
    if data.draw(st.booleans(), label="from half"):
        if other.kind in "iu":  # values every integer dtype holds (see test_integer_dtypes)
            numbers = st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.75, 99.9, 127.0, -3.5, -128.0])
            x = np.array(data.draw(st.lists(numbers, min_size=6, max_size=6), label="x"),
                         HALF)
            x = np.abs(x) if other.kind == "u" else x
        else:
            x = data.draw(arrays(HALF, (6,)), label="x")
        check_program(lambda xp, x: x.astype(other), x, what=f"half -> {other}")
    else:
        x = data.draw(arrays(other, (6,)), label="x")
        check_program(lambda xp, x: x.astype(HALF), x, what=f"{other} -> half")


def test_reductions_and_matmul_sum_in_float32(backend):
    rng = np.random.default_rng(0)
    a = (rng.normal(size=(20, 300)) * 10).astype(HALF)
    b = rng.normal(size=(300, 20)).astype(HALF)

    def exact(xp, a, b):
        return a @ b, xp.max(a), xp.argmax(a, axis=1), xp.cumsum(a[0]), xp.dot(a[0], a[1])
    check_program(exact, a, b, what="products")

    def sums(xp, a):
        return xp.sum(a), xp.sum(a, axis=0), xp.mean(a, axis=1)
    # NumPy sums halves in float32 along the contiguous axis, but rounds to half after
    # each addition along the others (its outer loop): a bound of n half roundings
    bound = 300 * float(np.finfo(HALF).eps) * float(np.abs(a.astype(np.float64)).max())
    check_program(sums, a, what="sums", atol=bound)


def test_gradients_are_half(backend):
    x = np.array([1.5, -2.25, 0.1, 300.0], HALF)
    grad = jitflow.grad(lambda x: jnp.sum(jnp.tanh(x) * x))(x)
    compiled = jitflow.function(jitflow.grad(lambda x: jnp.sum(x * x * 0.5)))(x)
    assert grad.dtype == compiled.dtype == HALF
    assert_same(compiled, x)
    expected = np.tanh(x) + x * (np.float16(1) - np.tanh(x) * np.tanh(x))
    assert_same(grad, expected, ulps=2)


def test_next_float_of_a_half_is_refused(backend):
    """Native code computes halves in float32, whose next float is not a half's: traced,
    they are refused (eagerly, NumPy computes them)."""
    x = np.array([1.0, -0.0], HALF)
    for program in (lambda x: jnp.spacing(x), lambda x: jnp.nextafter(x, x + 1)):
        with pytest.raises(TypeError, match="float16"):
            jitflow.function(program)(x)
