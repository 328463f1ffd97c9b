"""Dtype promotion and broadcasting agree with NumPy 2 (NEP 50 weak scalars included)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from jitflow.ir import types
from jitflow.ir.types import (ShapeError, TensorType, as_dtype, broadcast_shapes,
                              result_dtype, type_of_value, SUPPORTED_DTYPES)
from strategies import ALL_DTYPES as DTYPES

PYTHON_SCALARS = [True, 3, 2.5]


def operand(draw_value):
    """A TensorType and the NumPy operand with that type (a Python scalar when weak)."""
    if isinstance(draw_value, np.dtype):
        return TensorType((), draw_value), np.zeros((), draw_value)
    return type_of_value(draw_value), draw_value


@pytest.mark.parametrize("a", DTYPES + PYTHON_SCALARS, ids=str)
@pytest.mark.parametrize("b", DTYPES + PYTHON_SCALARS, ids=str)
def test_result_dtype_matches_numpy(a, b):
    (ta, va), (tb, vb) = operand(a), operand(b)
    dtype, weak = result_dtype(ta, tb)
    expected = np.result_type(va, vb)
    assert dtype == expected
    assert weak == (ta.weak and tb.weak)


def test_python_bool_is_not_weak_and_numbers_are():
    assert not type_of_value(True).weak
    assert type_of_value(1).weak and type_of_value(1).dtype == np.int64
    assert type_of_value(1.0).weak and type_of_value(1.0).dtype == np.float64
    assert not type_of_value(np.float32(1)).weak


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4))
def test_broadcast_shapes_matches_numpy(shapes):
    assert broadcast_shapes(*shapes.input_shapes) == np.broadcast_shapes(*shapes.input_shapes)


@given(st.lists(hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), min_size=2,
                max_size=3))
def test_broadcast_shapes_raises_exactly_when_numpy_does(shapes):
    try:
        expected = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(ShapeError, match="cannot be broadcast"):
            broadcast_shapes(*shapes)
    else:
        assert broadcast_shapes(*shapes) == expected


def test_unsupported_dtypes_are_named():
    assert as_dtype(float) == np.float64 and as_dtype("float32") == np.float32
    bfloat16 = {types.bfloat16} if types.bfloat16 is not None else set()  # (ml_dtypes')
    assert set(SUPPORTED_DTYPES) == set(DTYPES) | bfloat16
    with pytest.raises(TypeError, match="complex64 is not supported"):
        as_dtype(np.complex64)
    with pytest.raises(TypeError, match="is not a dtype"):
        as_dtype("not-a-dtype")


def test_type_text():
    assert str(TensorType((2, 3), np.dtype("float32"))) == "f32[2,3]"
    assert str(TensorType((), np.dtype("int64"), weak=True)) == "~i64[]"
