"""isin: whether each element is among the test elements.

Every element is compared with every test element (n m comparisons, fused into one loop
with the any-reduction), so the result keeps the elements' shape whatever their values:
no sorting and no count known only at run time. NaN is among nothing, as in NumPy.
"""
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
    pairs = ops.equal(reshape(element, _shape(element) + (1,)), tests)
    found = any(pairs, axis=_ndim(element))  # False where there are no test elements
    return ops.logical_not(found) if invert else found


__all__ = ["isin"]
