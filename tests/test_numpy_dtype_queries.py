"""can_cast, promote_types, common_type, min_scalar_type, mintypecode, isdtype,
issubdtype, isscalar, iterable, typename, may_share_memory and shares_memory
(jitflow/numpy/dtype_queries.py): asked of a traced value inside a traced function,
the answer (or the exception) NumPy gives for the array it stands for."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import numpy_outcome
from jitflow.errors import ConcretizationError
from strategies import ALL_DTYPES, arrays, shapes

DRAWN = settings(max_examples=max(5, settings.default.max_examples // 2))
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "numeric", np.floating, (np.int8, "bool")]
QUESTIONS = {
    "can_cast": lambda xp, x, dtype: xp.can_cast(x, dtype),
    "can_cast_same_kind": lambda xp, x, dtype: xp.can_cast(x, dtype, "same_kind"),
    "can_cast_bogus": lambda xp, x, dtype: xp.can_cast(x, dtype, "bogus"),
    "common_type": lambda xp, x, dtype: xp.common_type(x, np.zeros(1, dtype)),
    "min_scalar_type": lambda xp, x, dtype: xp.min_scalar_type(x) if x.ndim else None,
    "mintypecode": lambda xp, x, dtype: xp.mintypecode([x, dtype.char]),
    "promote_types": lambda xp, x, dtype: xp.promote_types(x, dtype),
    "issubdtype": lambda xp, x, dtype: xp.issubdtype(x, np.floating),
    "isdtype": lambda xp, x, dtype: xp.isdtype(x, "real floating"),
    "isscalar": lambda xp, x, dtype: xp.isscalar(x),
    "iterable": lambda xp, x, dtype: xp.iterable(x),
    "shares_memory_itself": lambda xp, x, dtype: xp.shares_memory(x, x),
    "may_share_memory_itself": lambda xp, x, dtype: xp.may_share_memory(x, x),
}


def asked_traced(question, x, dtype):
    """question(jnp, traced x, dtype), answered while x is traced: (answer, error)."""
    answers = []

    def ask(x):
        answers.append(numpy_outcome(question, jnp, x, dtype))
        return x
    jitflow.function(ask)(x)
    return answers[0]


@DRAWN
@given(data=st.data())
def test_questions_about_traced_values_as_numpy(data):
    x = data.draw(arrays(data.draw(st.sampled_from(ALL_DTYPES), label="dtype"),
                         data.draw(shapes(max_dims=2, max_side=2))), label="x")
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="other dtype")
    name = data.draw(st.sampled_from(sorted(QUESTIONS)), label="question")
    expected, error = numpy_outcome(QUESTIONS[name], np, x, dtype)
    for answer, raised in (numpy_outcome(QUESTIONS[name], jnp, x, dtype),
                           asked_traced(QUESTIONS[name], x, dtype)):
        if error is not None:
            assert type(raised) is type(error) and str(raised).startswith(str(error)[:30])
        else:
            assert raised is None and answer == expected and type(answer) is type(expected)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dtype_arguments_as_numpy(kind, dtype):
    assert jnp.isdtype(dtype, kind) == np.isdtype(dtype, kind)
    assert jnp.issubdtype(dtype, np.integer) == np.issubdtype(dtype, np.integer)
    assert jnp.promote_types(dtype, np.int16) == np.promote_types(dtype, np.int16)
    if dtype != np.float16:  # (NumPy's typename has no name for 'e': KeyError)
        assert jnp.typename(dtype.char) == np.typename(dtype.char)
    assert jnp.can_cast(dtype, np.float32) == np.can_cast(dtype, np.float32)


def test_python_values_and_value_dependent_questions():
    for value in (3, 2.5, True, -300, "text", [1, 2], (), None):
        assert jnp.isscalar(value) == np.isscalar(value)
        assert jnp.iterable(value) == np.iterable(value)
    assert jnp.min_scalar_type(300) == np.min_scalar_type(300)

    def scalar_questions(x, n):
        assert jnp.isscalar(n) and not jnp.iterable(n)  # a Python int, traced
        with pytest.raises(TypeError, match="does not support Python ints"):
            np.can_cast(n, np.int8)
        with pytest.raises(ConcretizationError, match="min_scalar_type"):
            np.min_scalar_type(x[0])
        with pytest.raises(TypeError, match="how NumPy laid them out"):
            np.shares_memory(x, x[1:])
        with pytest.raises(TypeError, match="how NumPy laid them out"):
            np.may_share_memory(x, np.ones(2))
        with pytest.raises(TypeError, match="isfortran of a traced value"):
            jnp.isfortran(x)
        with pytest.raises(AttributeError, match="has no flags: its memory layout"):
            np.isfortran(x)  # (NumPy's own reads x.flags)
        return x
    jitflow.function(scalar_questions)(np.ones(3), 2)
    a = np.ones(4)
    assert jnp.shares_memory(a, a[1:]) and not jnp.may_share_memory(a[:2], a[2:])
    assert jnp.isfortran(np.ones((2, 3), order="F")) and not jnp.isfortran(a)
