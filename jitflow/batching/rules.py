"""Batching rules: each primitive applied to a whole batch at once.

A batched value carries the batch as a new leading axis (axis 0). A rule gets the
node's operands, which operands are batched, the batch size and the node's params, and
returns the node's results for the whole batch, each batched. It is written with the
public ops, so a batched graph traces, differentiates and compiles like any other.
Primitives without a rule here run once per batch element (`per_element`): always
right, only slower.
"""
import numpy as np

from .. import ops
from ..ops.slicing import shape_of
from ..trace import bind, constant_type


def example_rank(x, batched):
    """The rank of one batch element of operand x."""
    return len(shape_of(x)) - (1 if batched else 0)


def align(x, batched, rank):
    """Batched x with size-1 axes after the batch axis, up to `rank` axes per element,
    so that NumPy's right-aligned broadcasting lines its axes up with the other
    operands' (an unbatched operand broadcasts along the batch axis by itself)."""
    if not batched:
        return x
    shape = shape_of(x)
    missing = rank - (len(shape) - 1)
    return ops.reshape(x, shape[:1] + (1,) * missing + shape[1:]) if missing else x


def batched_to_front(x, size):
    """Unbatched x repeated along a new batch axis in front (a broadcast, no copy)."""
    shape = shape_of(x)
    return ops.broadcast_to(x, (size,) + shape)


# --- elementwise primitives and matmul: NumPy broadcasting does the work -----------------

def broadcasting(prim, args, batched, size, **params):
    rank = max(example_rank(a, b) for a, b in zip(args, batched))
    aligned = [align(a, b, rank) for a, b in zip(args, batched)]
    return bind(prim, *aligned, **params)


def _matmul(prim, args, batched, size, **params):
    x, y = args
    if batched[0] and not batched[1] and len(shape_of(y)) == 2:
        # One product with every row of the batch: eagerly, NumPy would run one per
        # element (compiled code merges contiguous rows by itself, matmul.py).
        shape = shape_of(x)
        rows = ops.reshape(x, (int(np.prod(shape[:-1], dtype=np.int64)), shape[-1]))
        return ops.reshape(bind(prim, rows, y, **params), shape[:-1] + shape_of(y)[-1:])
    # Operands have rank >= 2; their leading axes broadcast like elementwise operands.
    return broadcasting(prim, args, batched, size, **params)


def _dft(prim, args, batched, size, *, sign):
    """Rows of every batch element, one after another."""
    shape = (size,) + shape_of(args[batched.index(True)])[-2:]
    rows = [ops.reshape(ops.broadcast_to(a, shape) if not b else a,
                        (shape[0] * shape[1], shape[2])) for a, b in zip(args, batched)]
    return tuple(ops.reshape(part, shape) for part in bind(prim, *rows, sign=sign))


# --- shapes ---------------------------------------------------------------------------------

def _reshape(prim, args, batched, size, *, shape):
    return ops.reshape(args[0], (size,) + tuple(shape))


def _broadcast_to(prim, args, batched, size, *, shape):
    x = align(args[0], True, len(shape))
    return ops.broadcast_to(x, (size,) + tuple(shape))


def _transpose(prim, args, batched, size, *, perm):
    return ops.transpose(args[0], (0,) + tuple(p + 1 for p in perm))


# --- reductions -----------------------------------------------------------------------------

def _reduction(prim, args, batched, size, *, axes, keepdims):
    return bind(prim, args[0], axes=tuple(a + 1 for a in axes), keepdims=keepdims)


def _arg_reduction(prim, args, batched, size, *, axis, keepdims):
    x = args[0]
    if axis is not None:
        return bind(prim, x, axis=axis + 1, keepdims=keepdims)
    element_shape = shape_of(x)[1:]  # over each element's flattened array
    flat = ops.reshape(x, (size, int(np.prod(element_shape, dtype=np.int64))))
    found = bind(prim, flat, axis=1, keepdims=False)
    rank = len(element_shape)
    return ops.reshape(found, (size,) + (1,) * rank) if keepdims else found


def _along_axis(prim, args, batched, size, *, axis):
    """Scans and sorts: each line along the axis on its own (operands of one shape: an
    unbatched one is broadcast along the batch)."""
    shape = (size,) + shape_of(args[batched.index(True)])[1:]
    return bind(prim, *(a if b else ops.broadcast_to(a, shape) for a, b in zip(args, batched)),
                axis=axis + 1)


# --- taking parts and putting them back -----------------------------------------------------

def _slice(prim, args, batched, size, *, starts, steps, sizes):
    return bind(prim, args[0], starts=(0,) + tuple(starts), steps=(1,) + tuple(steps),
                sizes=(size,) + tuple(sizes))


def _pad(prim, args, batched, size, *, widths, value):
    return bind(prim, args[0], widths=((0, 0),) + tuple(map(tuple, widths)), value=value)


def _concatenate(prim, args, batched, size, *, axis):
    parts = [a if b else batched_to_front(a, size) for a, b in zip(args, batched)]
    return bind(prim, *parts, axis=axis + 1)


def _gather(prim, args, batched, size, *, axis):
    if any(batched[1:]):  # indices that differ per element
        return per_element(prim, args, batched, size, {"axis": axis})
    return bind(prim, *args, axis=axis + 1)


def _scatter_add(prim, args, batched, size, *, axis, shape):
    if any(batched[1:]):
        return per_element(prim, args, batched, size, {"axis": axis, "shape": shape})
    return bind(prim, *args, axis=axis + 1, shape=(size,) + tuple(shape))


def _scatter(prim, args, batched, size, *, axis, unique):
    if any(batched[2:]):
        return per_element(prim, args, batched, size, {"axis": axis, "unique": unique})
    x, updates = [a if b else batched_to_front(a, size) for a, b in zip(args, batched[:2])]
    return bind(prim, x, updates, *args[2:], axis=axis + 1, unique=unique)


def _pure_callback(prim, args, batched, size, *, callback):
    """Once per batch element: the function was written for one."""
    return per_element(prim, args, batched, size, {"callback": callback})


def _debug_callback(prim, args, batched, size, *, callback):
    """Called once, on the whole batch: batched operands with the batch axis in front,
    the others as they are."""
    return bind(prim, *args, callback=callback)


RULES = {
    "debug_callback": _debug_callback,
    "pure_callback": _pure_callback,
    "matmul": _matmul,
    "reshape": _reshape,
    "broadcast_to": _broadcast_to,
    "transpose": _transpose,
    "reduce_sum": _reduction,
    "reduce_prod": _reduction,
    "reduce_max": _reduction,
    "reduce_min": _reduction,
    "argmax": _arg_reduction,
    "argmin": _arg_reduction,
    "cumsum": _along_axis,
    "cumprod": _along_axis,
    "complex_cumprod": _along_axis,
    "sort": _along_axis,
    "argsort": _along_axis,
    "slice": _slice,
    "pad": _pad,
    "concatenate": _concatenate,
    "gather": _gather,
    "scatter_add": _scatter_add,
    "scatter": _scatter,
    "dft": _dft,
    # numpy.linalg's factorizations batch over leading axes, broadcast like matmul's
    **dict.fromkeys(["solve", "slogdet", "cholesky", "eigh", "eig", "svd", "qr",
                     "complex_slogdet", "complex_eigh", "complex_svd", "complex_cholesky",
                     "complex_qr", "complex_eig", "complex_solve"],
                   broadcasting),
}


def batch_node(node, args, batched, size):
    """The node's outputs for the whole batch (a tuple, each batched)."""
    prim = node.prim
    params = dict(node.params)
    if node.subgraphs:
        params["subgraphs"] = node.subgraphs
    rule = RULES.get(prim.name)
    if rule is None and prim.elementwise:
        rule = broadcasting
    if rule is None or node.subgraphs:
        outs = per_element(prim, args, batched, size, params)
    else:
        outs = rule(prim, args, batched, size, **params)
    return tuple(outs) if prim.multiple_results else (outs,)


def per_element(prim, args, batched, size, params):
    """prim applied to each batch element in turn, the results stacked: the rule of
    primitives that own subgraphs (custom derivatives keep their rules this way) and
    of indices that differ between elements."""
    per_example = []
    for k in range(size):
        element = [_element(a, k) if b else a for a, b in zip(args, batched)]
        outs = bind(prim, *element, **params)
        per_example.append(outs if prim.multiple_results else (outs,))
    count = len(prim.infer_types(*(_element_type(a, b) for a, b in zip(args, batched)),
                                 **params))
    stacked = [_stack([outs[i] for outs in per_example], size, prim, args, batched,
                      params, i) for i in range(count)]
    return tuple(stacked) if prim.multiple_results else stacked[0]


def _element(x, k):
    shape = shape_of(x)
    one = ops.slice_array(x, starts=(k,) + (0,) * (len(shape) - 1),
                          steps=(1,) * len(shape), sizes=(1,) + shape[1:])
    return ops.reshape(one, shape[1:])


def _element_type(x, batched):
    type = constant_type(x)
    return type.with_shape(type.shape[1:]) if batched else type


def _stack(values, size, prim, args, batched, params, index):
    if size == 0:
        types = prim.infer_types(*(_element_type(a, b) for a, b in zip(args, batched)),
                                 **params)
        return np.zeros((0,) + types[index].shape, types[index].dtype)
    rows = [ops.reshape(v, (1,) + shape_of(v)) for v in values]
    return rows[0] if size == 1 else ops.concatenate(rows, axis=0)
