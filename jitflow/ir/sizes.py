"""Size: an array dimension known only at run time, as `per * n + const` for the run
time size n of a dynamic axis (jitflow.function's dynamic_axes).

A graph compiled once for every n holds Sizes where a graph compiled for one n holds
ints. Code that reads shapes keeps working where it only adds, subtracts and multiplies
them by ints. Any question whose answer depends on n (`size > 16`, `int(size)`,
`range(size)`) raises DynamicDecision instead of being answered for one n: the compile
then falls back to code for that one size. Questions answered alike for every n >= MIN_N
are answered (`size == 1` is False). n runs from MIN_N to MAX_N, or over a narrower
range (`sizes_within`): code that answers `n - 1 == 1` one way for every n but 2
serves the sizes from 3 on, and code that needs `3 * n` to fit a 32-bit int serves
the sizes up to 715827882; the error says where its answer is one
(DynamicDecision.sides).

Code generation turns a Size into a value of the generated code (codegen's I64), and
decisions that only tune speed ask `typical` for the size the function was called with.
"""
import operator
import threading
from contextlib import contextmanager

MIN_N = 2  # n = 0 and n = 1 keep code of their own: a length-1 axis broadcasts
MAX_N = 2**31 - 1  # and n beyond a BLAS int (no array that long fits in memory anyway)

_domain = threading.local()  # .range: (smallest, largest) n of the code being made


class DynamicDecision(Exception):
    """A question about a dynamic size whose answer depends on the size. sides: (a, b)
    where it has one answer for every n up to a and one for every n from b on (None
    where that is not known)."""

    def __init__(self, message, sides=None):
        super().__init__(message)
        self.sides = sides


def size_range():
    """(smallest, largest): the sizes the code being made serves."""
    return getattr(_domain, "range", (MIN_N, MAX_N))


@contextmanager
def sizes_within(smallest, largest):
    """Within the block (on this thread), sizes run from `smallest` to `largest`."""
    saved = size_range()
    _domain.range = (smallest, largest)
    try:
        yield
    finally:
        _domain.range = saved


class Size:
    __slots__ = ("per", "const")

    def __init__(self, per, const=0):
        self.per, self.const = int(per), int(const)

    @staticmethod
    def of(per, const):
        """per * n + const: a Size, or the int itself when per is 0."""
        return Size(per, const) if per else int(const)

    def at(self, n):
        return self.per * n + self.const

    # --- arithmetic with ints and Sizes -----------------------------------------------
    def __add__(self, other):
        per, const = _parts(other, "+")
        return Size.of(self.per + per, self.const + const)

    __radd__ = __add__

    def __sub__(self, other):
        per, const = _parts(other, "-")
        return Size.of(self.per - per, self.const - const)

    def __rsub__(self, other):
        per, const = _parts(other, "-")
        return Size.of(per - self.per, const - self.const)

    def __neg__(self):
        return Size(-self.per, -self.const)

    def __mul__(self, other):
        if isinstance(other, Size) or not _is_int(other):
            raise DynamicDecision(f"{self!r} * {other!r} is not linear in the size")
        return Size.of(self.per * other, self.const * other)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        if _is_int(other) and other > 0 and self.per % other == 0:
            return Size.of(self.per // other, self.const // other)
        raise DynamicDecision(f"{self!r} // {other!r} depends on the size")

    def __mod__(self, other):
        if _is_int(other) and other > 0 and self.per % other == 0:
            return self.const % other
        raise DynamicDecision(f"{self!r} % {other!r} depends on the size")

    # --- questions ----------------------------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, Size) and not _is_int(other):
            return NotImplemented
        return _zero_for_every_n(self - other, "==")

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __lt__(self, other):
        return _for_every_n(self - other, operator.lt, "<")

    def __le__(self, other):
        return _for_every_n(self - other, operator.le, "<=")

    def __gt__(self, other):
        return _for_every_n(self - other, operator.gt, ">")

    def __ge__(self, other):
        return _for_every_n(self - other, operator.ge, ">=")

    def __bool__(self):
        return not _zero_for_every_n(self, "bool")

    def __abs__(self):
        return self if self >= 0 else -self

    def __hash__(self):
        return hash(("Size", self.per, self.const))

    def __index__(self):
        raise DynamicDecision(f"{self!r} was asked for as an int")

    __int__ = __index__

    def __float__(self):
        raise DynamicDecision(f"{self!r} was asked for as a float")

    def __repr__(self):
        # Never valid LLVM IR or Python: text that reaches generated code unconverted
        # fails loudly.
        per = "" if self.per == 1 else "-" if self.per == -1 else f"{self.per}*"
        const = f"{self.const:+d}" if self.const else ""
        return f"{per}n{const}"

    __str__ = __repr__


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _parts(value, operation):
    if isinstance(value, Size):
        return value.per, value.const
    if _is_int(value):
        return 0, value
    raise DynamicDecision(f"a size {operation} {value!r}")


def _zero_for_every_n(difference, operation):
    """Whether `difference` (a Size or int) is 0 for every n of size_range() (True) or
    for none (False); raises when that depends on n."""
    if not isinstance(difference, Size):
        return difference == 0
    root, remainder = divmod(-difference.const, difference.per)
    smallest, largest = size_range()
    if remainder or not smallest <= root <= largest:
        return False  # no n makes it 0
    raise DynamicDecision(f"{operation}: {difference!r} is 0 for n = {root} only",
                          sides=(root - 1, root + 1))


def _for_every_n(difference, compare, operation):
    """Whether compare(difference, 0) holds for every n of size_range() (True) or for
    none (False); raises when that depends on n. The comparisons are monotone in the
    value, which for a linear form runs between its values at the two ends: where
    both ends agree, every value between does."""
    if not isinstance(difference, Size):
        return compare(difference, 0)
    low, high = size_range()
    last = compare(difference.at(high), 0)
    if compare(difference.at(low), 0) == last:
        return last
    while high - low > 1:  # the first n from which the answer is the last one's
        middle = (low + high) // 2
        if compare(difference.at(middle), 0) == last:
            high = middle
        else:
            low = middle
    raise DynamicDecision(f"{operation}: {difference!r} against 0 depends on the size",
                          sides=(low, high))


def product(values):
    """The product of ints and Sizes: an int, or a Size."""
    result = 1
    for value in values:
        result = result * value if isinstance(result, Size) else value * result
    return result if isinstance(result, Size) else int(result)


def surely(question):
    """question() where it has one answer for every size, False where it depends on the
    size: for questions where False is always a safe answer (may two loops merge?)."""
    try:
        return bool(question())
    except DynamicDecision:
        return False


def typical(value, n):
    """`value` at the size n: for decisions that only tune speed (how to split a loop
    between threads), which hold for any answer."""
    return value.at(n) if isinstance(value, Size) else value


def evaluate(value, n):
    """`value` with every Size in it (nested in tuples and lists) taken at n."""
    if isinstance(value, Size):
        return value.at(n)
    if isinstance(value, tuple):
        return tuple(evaluate(v, n) for v in value)
    if isinstance(value, list):
        return [evaluate(v, n) for v in value]
    return value
