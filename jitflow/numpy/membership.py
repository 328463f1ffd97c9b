"""isin: whether each element is among the test elements.

Every element is compared with every test element (n m comparisons, fused into one loop
with the any-reduction), so the result keeps the elements' shape whatever their values:
no sorting and no count known only at run time. NaN is among nothing, as in NumPy.

Comparisons are exact, int64 against uint64 too, as NumPy's own loop of comparisons is.
Where NumPy would instead sort int64 and uint64 together as float64 (sorts_as_float64),
its answer can be wrong, and jitflow refuses rather than give another one.
"""
import numpy as np

from .. import ops
from ..errors import at_user_line
from ._common import _ndim, _shape
from .creation import asarray
from .reductions import any
from .shapes import ravel, reshape


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    if kind not in (None, "sort", "table"):
        raise ValueError(at_user_line(f"Invalid kind: '{kind}'. Please use None, 'sort' "
                                      f"or 'table'."))
    element, tests = asarray(element), ravel(asarray(test_elements))
    if sorts_as_float64(element.dtype, element.size, tests.dtype, tests.size, kind):
        raise TypeError(at_user_line(
            f"isin: for {element.size} {element.dtype} elements and {tests.size} "
            f"{tests.dtype} test elements NumPy may sort both together as float64, where "
            f"integers beyond 2**53 collide and some are reported found that are not "
            f"there; jitflow refuses rather than answer differently. Cast both to one "
            f"integer dtype first, or pass kind='table'."))
    pairs = ops.equal(reshape(element, _shape(element) + (1,)), tests)
    found = any(pairs, axis=_ndim(element))  # False where there are no test elements
    return ops.logical_not(found) if invert else found


def sorts_as_float64(element_dtype, element_size, tests_dtype, tests_size, kind):
    """Whether NumPy's isin may sort the elements and the test elements together as
    float64: int64 against uint64 (float64 is their common type), unless its loop of
    exact comparisons runs (fewer than 10 n^0.145 test elements for n elements) or the
    table it was asked for (kind="table"). np.isin([-2**63, -2**63 + 1] * 8,
    np.array([0] + [532] * 15, np.uint64)) says -2**63 is there."""
    kinds = {np.dtype(element_dtype).kind, np.dtype(tests_dtype).kind}
    sizes = {np.dtype(element_dtype).itemsize, np.dtype(tests_dtype).itemsize}
    if kinds != {"i", "u"} or sizes != {8} or kind == "table":
        return False
    return element_size > 0 and tests_size >= 10 * element_size ** 0.145


__all__ = ["isin"]
