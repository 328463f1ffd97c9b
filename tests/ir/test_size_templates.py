"""Size templates (jitflow/ir/size_templates.py): two graphs of one function at two
sizes become one graph with Sizes, constants that change with the size become inputs,
and graphs that differ otherwise are refused."""
import numpy as np
import pytest

import jitflow
from jitflow.ir.size_templates import NotGeneral, generalize

W = np.ones((3, 2), np.float32)


def graphs(fn, sizes, *others):
    traced = jitflow.function(fn)
    return [traced.trace(np.ones((n, 3), np.float32), *others) for n in sizes]


def test_shapes_slices_and_counts_become_sizes():
    first, second = graphs(lambda x, w: np.tanh(x @ w).mean(axis=0) + x[-1, :2], (4, 6), W)
    template, passed = generalize(first, 4, second, 6)
    assert passed == [] and template.passed == 0
    assert template.text == """\
graph(%0: f32[n,3], %1: f32[3,2], %2: i64[]) {
  %3: f32[n,2] = matmul %0, %1
  %4: f32[n,2] = tanh %3
  %5: f32[2] = reduce_sum %4, axes=(0,), keepdims=False
  %6: f32[2] = div %5, n:~i64[]
  %7: f32[1,2] = slice %0, sizes=(1, 2), starts=(n-1, 0), steps=(1, 1)
  %8: f32[2] = reshape %7, shape=(2,)
  %9: f32[2] = add %6, %8
  return %9
}"""


def test_constants_that_change_with_the_size_are_passed_in():
    def fn(x):
        n = x.shape[0]
        return x * np.arange(n, dtype=np.float32)[:, None] + np.full(x.shape, 0.5 / n,
                                                                      np.float32)
    first, second = graphs(fn, (4, 6))
    template, passed = generalize(first, 4, second, 6)
    assert template.passed == 2
    assert template.text == """\
graph(%0: f32[n,3], %1: f32[n,1], %2: f32[], %3: i64[]) {
  %4: f32[n,3] = mul %0, %1
  %5: f32[n,3] = broadcast_to %2, shape=(n, 3)
  %6: f32[n,3] = add %4, %5
  return %6
}"""
    # the values are the second size's: a column 0..5, and one element of 0.5 / 6
    np.testing.assert_array_equal(passed[0], np.arange(6, dtype=np.float32)[:, None])
    assert np.asarray(passed[1]).shape == () and passed[1] == np.float32(0.5 / 6)


def test_a_third_size_has_the_same_template_where_the_graph_is_linear():
    fn = lambda x, w: np.tanh(x @ w).mean(axis=0) + x[-1, :2]  # noqa: E731
    first, second, third = graphs(fn, (4, 6, 11), W)
    assert generalize(first, 4, second, 6)[0].text == generalize(first, 4, third, 11)[0].text


def test_a_shape_that_is_not_linear_in_the_size_differs_at_a_third():
    traced = jitflow.function(lambda x: x.reshape(-1)[: x.shape[0] ** 2])
    first, second, third = (traced.trace(np.ones((n, 16), np.float32)) for n in (4, 5, 7))
    line = generalize(first, 4, second, 5)[0].text  # 16 and 25 elements: 9n-20
    assert "sizes=(9*n-20,)" in line
    assert generalize(first, 4, third, 7)[0].text != line  # 49 elements, not 43


def test_graphs_that_differ_in_more_than_sizes_are_refused():
    def fn(x):
        return np.exp(x) if x.shape[0] > 5 else np.sin(x)
    first, second = graphs(fn, (4, 6))
    with pytest.raises(NotGeneral, match="sin where the other size has exp"):
        generalize(first, 4, second, 6)
    with pytest.raises(NotGeneral, match="two different sizes"):
        generalize(first, 4, first, 4)
    with pytest.raises(NotGeneral, match="two different sizes"):
        generalize(first, 1, second, 6)


def test_a_size_off_the_line_of_whole_multiples_is_refused():
    first, second = graphs(lambda x: x[::2], (4, 7))  # 2 rows, then 4
    with pytest.raises(NotGeneral, match="not a whole multiple"):
        generalize(first, 4, second, 7)
