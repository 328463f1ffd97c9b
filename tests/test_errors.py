"""Bad input is a clear Python exception naming the problem and the user's own line."""

import numpy as np
import pytest

import jitflow
from tests_support import line_of
import jitflow.numpy as jnp

X = np.ones(3)


def test_if_on_a_traced_value():
    def f(x, y):
        if x.sum() > 0:  # marker
            return x
        return y
    with pytest.raises(jitflow.ConcretizationError) as info:
        jitflow.function(f)(X, X)
    message = str(info.value)
    assert isinstance(info.value, TypeError)
    assert "argument 'x'" in message and "'y'" not in message.split("To fix")[0]
    assert line_of("# marker", f) in message
    for fix in ("static_argnames", "jitflow.numpy.where", "jitflow.cond", "jitflow.while_loop"):
        assert fix in message


@pytest.mark.parametrize("convert", [bool, int, float, np.asarray,
                                     lambda x: [1, 2][x], lambda x: x.item()])
def test_concrete_conversions_of_traced_values(convert):
    f = jitflow.function(lambda x, y: convert(y * 2))
    with pytest.raises(jitflow.ConcretizationError, match="argument 'y'"):
        f(X, np.int64(1))


def test_values_computed_only_from_constants_name_no_argument():
    def f(x):
        return float(jnp.ones(()) * 2)
    with pytest.raises(jitflow.ConcretizationError, match="computed inside the function"):
        jitflow.function(f)(X)


def test_broadcasting_error_names_operation_shapes_and_line():
    def f(x, y):
        return x * y  # marker
    with pytest.raises(ValueError) as info:
        jitflow.function(f)(np.ones((2, 3)), np.ones(4))
    message = str(info.value)
    assert "mul" in message and "(2, 3)" in message and "(4,)" in message
    assert line_of("# marker", f) in message


@pytest.mark.parametrize("call, words", [
    (lambda x: x.reshape(4, 2), ["reshape", "size 3", "(4, 2)"]),
    (lambda x: jnp.matmul(x, np.ones((2, 2))), ["matmul", "(3,)", "(2, 2)"]),
    (lambda x: jnp.concatenate([x, np.ones((2, 2))]), ["concatenate", "dimensions"]),
    (lambda x: x.sum(axis=2), ["axis 2", "out of bounds"]),
])
def test_shape_errors(call, words):
    with pytest.raises(ValueError) as info:
        jitflow.function(call)(X)
    for word in words:
        assert word in str(info.value)
    assert "test_errors.py" in str(info.value)


def test_unsupported_numpy_function_is_named():
    with pytest.raises(TypeError, match=r"numpy\.isnat is not supported"):
        jitflow.function(lambda x: np.isnat(x))(X)
    with pytest.raises(TypeError, match=r"jitflow\.numpy\.heaviside of complex values is not "
                                        r"supported"):
        jitflow.function(lambda x: np.heaviside(x * 1j, 0))(X)


@pytest.mark.parametrize("function", [np.emath.sqrt, np.emath.log, np.emath.log2,
                                      np.emath.log10, np.emath.arcsin, np.emath.arccos,
                                      np.emath.arctanh, lambda x: np.emath.power(x, 0.5)])
def test_numpy_functions_of_other_modules_are_not_taken_for_their_namesakes(function):
    """numpy.emath.sqrt(-1.0) is 1j: a dtype that depends on the values. It was once
    computed as numpy.sqrt (NaN) because it shares that name."""
    x = np.array([-1.0, 4.0])
    with pytest.raises(TypeError, match=r"numpy\.lib\.scimath\.\w+ is not supported.*"
                                        r"complex or real depending on the values"):
        jitflow.function(function)(x)
    with pytest.raises(TypeError, match=r"numpy\.lib\.scimath"):
        jitflow.grad(lambda x: function(x).real.sum())(x)


def test_string_functions_are_not_taken_for_the_ufuncs_they_are_named_after():
    with pytest.raises(TypeError, match=r"numpy\.char\.equal is not supported"):
        jitflow.function(lambda x: np.char.equal(x, x))(X)


def test_unsupported_ufunc_method_is_named():
    with pytest.raises(TypeError, match=r"numpy\.maximum\.accumulate is not supported"):
        jitflow.function(lambda x: np.maximum.accumulate(x))(X)


def test_boolean_mask_indexing_suggests_where():
    def f(x):
        return x[x > 0]  # marker
    with pytest.raises(jitflow.BooleanIndexError) as info:
        jitflow.function(f)(X)
    assert isinstance(info.value, IndexError)
    assert "where" in str(info.value) and line_of("# marker", f) in str(info.value)


def test_leaked_tracer_is_a_clear_error():
    leaked = []
    jitflow.function(lambda x: leaked.append(x) or x)(X)
    with pytest.raises(jitflow.TracerLeakError, match="after that trace ended"):
        jnp.exp(leaked[0])


def test_bad_arguments_at_the_call_boundary():
    f = jitflow.function(lambda x, y=1: x + y)
    with pytest.raises(TypeError, match=r"argument 'x' has dtype float128"):
        f(np.ones(2, np.longdouble))
    with pytest.raises(TypeError, match=r"'one' is a string, not an array or a number"):
        f(X, "one")  # a string argument is static: an error where it is used
    with pytest.raises(TypeError, match="missing a required argument: 'x'"):
        f()
    with pytest.raises(OverflowError, match="does not fit in int64"):
        f(X, 2 ** 70)


def test_exp_of_bool_is_numpys_float16():
    result = jitflow.function(lambda b: jnp.exp(b))(np.array([True]))
    assert result.dtype == np.float16 and result == np.exp(np.array([True]))


@pytest.mark.parametrize("call, what", [
    (lambda n: jnp.zeros(n), "full: a size"),
    (lambda n: jnp.ones(6).reshape(n, -1), "reshape: a size"),
    (lambda n: jnp.broadcast_to(1.0, (n, 2)), "broadcast_to: a size"),
    (lambda n: f"{n:.2f}", "formatting it with '.2f'"),
])
def test_a_traced_value_where_python_needs_a_number_says_how_to_fix_it(call, what):
    with pytest.raises(jitflow.ConcretizationError) as info:
        jitflow.function(call)(np.int64(2))
    message = str(info.value)
    assert message.startswith(what) and "argument 'n'" in message
    assert "static_argnames" in message.split("To fix it:")[1]
    assert "test_errors.py" in message


def test_eagerly_under_a_derivative_sizes_and_formats_use_the_value():
    def f(x):
        rows = x.astype(np.int64)  # a recorded value, known eagerly
        ones = jnp.ones(6).reshape(rows, -1) + jnp.zeros(rows)[:, None]
        assert ones.shape == (2, 3)
        return (ones.sum() + float(f"{x:.3f}")) * x  # a constant 8, times x
    assert jitflow.grad(f)(2.0) == pytest.approx(8.0)


def test_arange_of_a_traced_value_names_the_fix():
    with pytest.raises(TypeError, match=r"arange stop must be a constant scalar, not a traced "
                                        r"value i64\[\]; .*static_argnames"):
        jitflow.function(lambda n: jnp.arange(n))(np.int64(3))


def test_errors_raised_inside_numpy_compiled_modules_name_the_user_line():
    def f(n):
        return np.random.default_rng(0).normal(size=n)  # marker
    with pytest.raises(TypeError) as info:
        jitflow.function(f)(np.int64(2))
    assert line_of("# marker", f) in str(info.value)
    assert ".pyx" not in str(info.value)


def test_python_ints_beyond_int64_in_traced_code_raise_clearly():
    # As an argument (above) or a literal in the traced code: NumPy converts 2**64 for a
    # float array, but jitflow keeps Python ints as int64 and says so.
    f = jitflow.function(lambda x: x + 2**64)
    with pytest.raises(OverflowError, match=r"18446744073709551616 does not fit in int64"):
        f(np.ones(2))


def test_unary_plus_of_bool_raises_as_in_numpy():
    x = np.array([True, False])
    with pytest.raises(TypeError):
        +x
    with pytest.raises(TypeError, match="positive is not defined for bool"):
        jitflow.function(lambda x: +x)(x)
    y = np.array([1, -2], np.int32)
    assert jitflow.function(lambda y: +y)(y).tolist() == [1, -2]


def test_storing_a_traced_value_into_a_numpy_array_item_says_how_to_fix_it():
    def f(x):
        out = np.zeros(3)
        out[0] = x.sum()  # marker
        return out
    with pytest.raises(jitflow.ConcretizationError) as info:
        jitflow.function(f)(X)
    assert "a[i] = x" in str(info.value) and "jitflow.numpy.zeros" in str(info.value)
    assert line_of("# marker", f) in str(info.value)
