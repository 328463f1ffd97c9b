"""Size (jitflow/ir/sizes.py): arithmetic is exact, and every question it answers has
that answer at every n from MIN_N to MAX_N; the others raise DynamicDecision."""
import operator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jitflow.ir.sizes import (MAX_N, MIN_N, DynamicDecision, Size, evaluate, product,
                              sizes_within, surely, typical)

COMPARISONS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
               operator.ge]


@st.composite
def linear(draw):
    """A Size or an int: per * n + const."""
    return Size.of(draw(st.integers(-3, 3)), draw(st.integers(-12, 12)))


def sample_n(draw):
    return draw(st.sampled_from([MIN_N, MIN_N + 1, 7, 1000, MAX_N - 1, MAX_N]) |
                st.integers(MIN_N, MAX_N))


def at(value, n):
    return value.at(n) if isinstance(value, Size) else value


@given(a=linear(), b=linear(), compare=st.sampled_from(COMPARISONS), data=st.data())
def test_an_answered_comparison_holds_at_every_size(a, b, compare, data):
    try:
        answer = compare(a, b)
    except DynamicDecision:
        # It raises only where the answer does change between sizes (at the ends
        # of the range or where a - b crosses 0).
        difference = a - b
        answers = {compare(at(a, n), at(b, n)) for n in _telling_sizes(difference)}
        assert answers == {True, False}
        return
    for _ in range(5):
        n = sample_n(data.draw)
        assert answer == compare(at(a, n), at(b, n))


def _telling_sizes(difference):
    sizes = {MIN_N, MAX_N}
    if isinstance(difference, Size):
        root = -difference.const // difference.per
        sizes.update(n for n in (root - 1, root, root + 1) if MIN_N <= n <= MAX_N)
    return sizes


@given(a=linear(), b=linear(), k=st.integers(-4, 4), n=st.integers(MIN_N, 10**6))
def test_arithmetic_is_exact(a, b, k, n):
    assert at(a + b, n) == at(a, n) + at(b, n)
    assert at(a - b, n) == at(a, n) - at(b, n)
    assert at(a * k, n) == at(a, n) * k == at(k * a, n)
    assert at(-a if isinstance(a, Size) else -a, n) == -at(a, n)


@given(per=st.integers(-6, 6).filter(bool), const=st.integers(-20, 20),
       k=st.integers(1, 6), n=st.integers(MIN_N, 10**6))
def test_division_is_exact_or_refused(per, const, k, n):
    size = Size(per, const)
    try:
        quotient, remainder = size // k, size % k
    except DynamicDecision:
        assert per % k != 0
        return
    assert at(quotient, n) == size.at(n) // k
    assert at(remainder, n) == size.at(n) % k


@pytest.mark.parametrize("question", [int, float, range, bool.__call__])
def test_questions_about_the_value_raise(question):
    with pytest.raises(DynamicDecision):
        question(Size(1, -2))  # (0 at n = 2: even bool has no one answer)


def test_sizes_normalize_and_read_as_linear_forms():
    n = Size(1)
    assert (n - n) == 0 and isinstance(n - n, int)
    assert 3 * n + 2 == Size(3, 2) and hash(3 * n + 2) == hash(Size(3, 2))
    assert repr(4 * n - 1) == "4*n-1" and repr(-n) == "-n" and repr(n + 5) == "n+5"
    assert n != 1 and n != 0 and n > 1 and bool(n)  # n runs from MIN_N = 2
    assert (n, 3) == (Size(1), 3) and 0 not in (n, 3)
    assert max(n, 1) is n


def test_products_evaluations_and_safe_questions():
    n = Size(1)
    assert product((n, 3, 4)) == 12 * n and product((2, 3)) == 6
    assert evaluate(((n, 5), [2 * n]), 7) == ((7, 5), [14])
    assert surely(lambda: n > 1) and not surely(lambda: n > 5)
    assert typical(3 * n, 10) == 30 and typical(4, 10) == 4


@given(per=st.integers(-3, 3).filter(bool), const=st.integers(-40, 40),
       compare=st.sampled_from(COMPARISONS))
def test_a_refused_question_says_where_it_has_one_answer(per, const, compare):
    size = Size(per, const)
    try:
        compare(size, 0)
    except DynamicDecision as error:
        below, above = error.sides
        assert MIN_N <= below < above <= MAX_N
        lower = {compare(size.at(n), 0) for n in (MIN_N, below)}
        upper = {compare(size.at(n), 0) for n in (above, above + 1, MAX_N)}
        assert len(lower) == len(upper) == 1
        with sizes_within(MIN_N, below):
            assert {compare(size, 0)} == lower  # answered below the change
        with sizes_within(above, MAX_N):
            assert {compare(size, 0)} == upper  # and above it
        return


def test_sizes_within_a_narrower_range():
    n = Size(1)
    with pytest.raises(DynamicDecision) as refused:
        bool(n - 1 == 1)
    assert refused.value.sides == (1, 3)
    with sizes_within(3, MAX_N):
        assert n - 1 != 1 and n > 2
    with pytest.raises(DynamicDecision) as refused:
        3 * n <= 2**31 - 1  # noqa: B015
    assert refused.value.sides == (715827882, 715827883)
    with sizes_within(MIN_N, 715827882):
        assert 3 * n <= 2**31 - 1
    with pytest.raises(DynamicDecision):
        n > 2  # noqa: B015 (the range is MIN_N to MAX_N again)
    assert abs(-n) == n and abs(n - 1) == n - 1
    with pytest.raises(DynamicDecision):
        abs(n - 10)
