"""einsum as transposes, reshapes, sums and batched matmuls.

Operands are contracted left to right. Before each step, axes no later step needs are
summed out; each pairwise step puts shared kept letters in the batch, shared dropped
letters in the contraction, and the rest in the two free groups of one matmul.
"""
import math
import string

import numpy as np

from . import ops
from .contract import as_array
from .errors import at_user_line
from .ir.types import is_bfloat16
from .trace import Tracer


def einsum(subscripts, *operands, optimize=False):
    """NumPy's einsum. `optimize` is accepted for NumPy code and ignored: the operands
    are contracted left to right, to the same result."""
    operands = [as_array(x) for x in operands]
    if any(is_bfloat16(x.dtype) for x in operands):
        raise TypeError(at_user_line("einsum: invalid data type bfloat16 (NumPy's einsum "
                                     "has no bfloat16 loop); cast the operands first"))
    specs, output = _parse(subscripts.replace(" ", ""), operands)
    sizes = _letter_sizes(specs, operands)
    terms = [_take_diagonals(x, spec) for x, spec in zip(operands, specs)]
    x, spec = terms[0]
    for i, (y, spec_y) in enumerate(terms[1:], start=1):
        later = set(output).union(*(s for _, s in terms[i + 1:]))
        x, spec = _sum_unused(x, spec, later | set(spec_y))
        y, spec_y = _sum_unused(y, spec_y, later | set(spec))
        x, spec = _contract(x, spec, y, spec_y, later, sizes)
    x, spec = _sum_unused(x, spec, set(output))
    if spec != output:
        x = ops.transpose(x, [spec.index(letter) for letter in output])
    dtype = np.result_type(*(x_.dtype for x_ in operands))
    return x if x.dtype == dtype else ops.cast(x, dtype)


def einsum_path(*operands, optimize="greedy", einsum_call=False):
    """NumPy's own einsum_path: the order of contractions it would choose, which
    depends on the operands' shapes alone (a traced value stands in as an array of its
    shape and dtype that takes no memory)."""
    return np.einsum_path(*(np.broadcast_to(np.zeros((), x.dtype), x.shape)
                            if isinstance(x, Tracer) else x for x in operands),
                          optimize=optimize, einsum_call=einsum_call)


def _parse(subscripts, operands):
    """Specs and output with '...' replaced by letters the subscripts do not use."""
    inputs, arrow, output = subscripts.partition("->")
    specs = inputs.split(",")
    if len(specs) != len(operands):
        raise ValueError(at_user_line(f"einsum: {len(specs)} operand specs in "
                                      f"'{subscripts}' but {len(operands)} operands"))
    widths = [x.ndim - (len(s) - 3) if "..." in s else 0 for x, s in zip(operands, specs)]
    width = max(widths)
    # Upper-case letters are valid subscripts too, so the ellipsis must not take one the
    # user wrote: 'Aj' next to '...' would otherwise merge two different axes.
    unused = [c for c in string.ascii_letters if c not in subscripts]
    ellipsis = "".join(unused[:max(width, 0)])
    specs = [s.replace("...", ellipsis[width - w:]) for s, w in zip(specs, widths)]
    for x, spec in zip(operands, specs):
        if len(spec) != x.ndim or not all(c in string.ascii_letters for c in spec):
            raise ValueError(at_user_line(f"einsum: spec '{spec}' does not fit an operand "
                                          f"of shape {x.shape}"))
    if arrow:
        output = output.replace("...", ellipsis)
    else:  # implicit: the broadcast axes, then the letters used once, in ASCII order
        letters = inputs.replace("...", "").replace(",", "")
        output = ellipsis + "".join(sorted(c for c in set(letters)
                                           if letters.count(c) == 1))
    if len(set(output)) != len(output) or not set(output) <= set("".join(specs)):
        raise ValueError(at_user_line(f"einsum: invalid output spec '{output}'"))
    return specs, output


def _letter_sizes(specs, operands):
    """Each letter's size; a size 1 broadcasts against any other (0 included)."""
    sizes = {}
    for x, spec in zip(operands, specs):
        for letter, size in zip(spec, x.shape):
            known = sizes.setdefault(letter, size)
            if size != known and 1 not in (size, known):
                raise ValueError(at_user_line(
                    f"einsum: letter '{letter}' has sizes {known} and {size} "
                    f"(shapes {[o.shape for o in operands]})"))
            if known == 1:
                sizes[letter] = size
    return sizes


def _take_diagonals(x, spec):
    """'ii' -> 'i': the diagonal of each letter repeated within one operand."""
    for letter in dict.fromkeys(spec):
        while spec.count(letter) > 1:
            first = spec.index(letter)
            second = spec.index(letter, first + 1)
            if x.shape[first] != x.shape[second]:  # no broadcasting within one operand
                raise ValueError(at_user_line(
                    f"einsum: letter '{letter}' repeats in one operand with different "
                    f"sizes (shape {x.shape})"))
            rest = [i for i in range(len(spec)) if i not in (first, second)]
            x = ops.transpose(x, [first, second] + rest)
            positions = np.arange(x.shape[0])
            x = ops.gather(x, positions, positions, axis=0)
            spec = letter + "".join(spec[i] for i in rest)
    return x, spec


def _sum_unused(x, spec, needed):
    axes = tuple(i for i, letter in enumerate(spec) if letter not in needed)
    if not axes:
        return x, spec
    return ops.reduce_sum(x, axes=axes), "".join(c for c in spec if c in needed)


def _contract(x, spec_x, y, spec_y, later, sizes):
    batch = [c for c in spec_x if c in spec_y and c in later]
    summed = [c for c in spec_x if c in spec_y and c not in later]
    free_x = [c for c in spec_x if c not in spec_y]
    free_y = [c for c in spec_y if c not in spec_x]
    lhs = _arrange(x, spec_x, batch, free_x, summed, sizes)
    rhs = _arrange(y, spec_y, batch, summed, free_y, sizes)
    product = ops.matmul(lhs, rhs)
    shape = [sizes[c] for c in batch + free_x + free_y]
    return ops.reshape(product, shape), "".join(batch + free_x + free_y)


def _arrange(x, spec, batch, rows, cols, sizes):
    """x as a (batch, rows, cols) array: transposed, broadcast and flattened."""
    order = batch + rows + cols
    x = ops.transpose(x, [spec.index(c) for c in order])
    full = tuple(sizes[c] for c in order)
    if x.shape != full:
        x = ops.broadcast_to(x, full)
    group = [math.prod(sizes[c] for c in g) for g in (batch, rows, cols)]
    return ops.reshape(x, group)
