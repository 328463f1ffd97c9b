"""Structural primitives as ONNX nodes: reductions, shapes, matmul, slices, gathers
and scatters, concatenation, padding, iota, sorting and the Fourier transform."""
import numpy as np

from .dtypes import onnx_type
from .errors import UnsupportedError

BOOL = np.dtype(bool)
INT32 = np.dtype(np.int32)
INT64 = np.dtype(np.int64)
INT64_MIN = np.iinfo(np.int64).min  # a Slice end before the first element, stepping down


def out_dtype(node, index=0):
    return node.outputs[index].type.dtype


# --- reductions ----------------------------------------------------------------------------

def reduction(op_type, guard_nans=False, plus_zero=False):
    """A reduction over static axes in the output dtype (sum of bools: int64); none of
    them reduces over no axes (ONNX would reduce over all). max and min of floats
    propagate NaN, as NumPy's do and ONNX Runtime's do not; a float sum is +0.0 where it
    is zero, as NumPy's, which starts from +0.0 (ONNX Runtime's sum of -0.0 is -0.0)."""
    def rule(w, node):
        x, (axes, keepdims) = node.inputs[0], (node.params["axes"], node.params["keepdims"])
        dtype = out_dtype(node)
        work = INT32 if dtype == BOOL else dtype
        name = w.operand(x, work)
        if not axes:
            result = w.add("Identity", [name])
        else:
            result = w.add(op_type, [name, w.ints(axes)], keepdims=int(keepdims))
        if guard_nans and dtype.kind == "f" and axes:
            nans = w.add("ReduceMax", [w.add("Cast", [w.add("IsNaN", [name])],
                                             to=onnx_type(INT32)), w.ints(axes)],
                         keepdims=int(keepdims))
            result = w.add("Where", [w.add("Cast", [nans], to=onnx_type(BOOL)),
                                     w.constant(np.nan, dtype), result])
        if plus_zero and dtype.kind == "f":  # (its optimizer drops an Add of 0)
            zero = w.constant(0, dtype)
            result = w.add("Where", [w.add("Equal", [result, zero]), zero, result])
        return [w.cast(result, work, dtype)]
    return rule


def arg_reduction(op_type):
    """argmax/argmin, the first index of the extremum; a NaN is the extremum (its first
    index), as in NumPy. axis=None reduces the flattened array; the result is reshaped
    to the output's shape (with or without the kept axes)."""
    def rule(w, node):
        x, axis = node.inputs[0], node.params["axis"]
        dtype = x.type.dtype
        name = w.operand(x, INT32 if dtype == BOOL else dtype)
        if axis is None:
            name, axis = w.add("Reshape", [name, w.ints([-1])]), 0
        result = w.add(op_type, [name], axis=axis, keepdims=1)
        if dtype.kind == "f":
            nans = w.add("Cast", [w.add("IsNaN", [name])], to=onnx_type(INT32))
            has_nan = w.add("Cast", [w.add("ReduceMax", [nans, w.ints([axis])], keepdims=1)],
                            to=onnx_type(BOOL))
            result = w.add("Where", [has_nan, w.add("ArgMax", [nans], axis=axis, keepdims=1),
                                     result])
        return [w.add("Reshape", [result, w.ints(node.outputs[0].type.shape)])]
    return rule


def cumsum(w, node):
    x = w.operand(node.inputs[0], out_dtype(node))
    return [w.add("CumSum", [x, w.constant(np.int64(node.params["axis"]))])]


# --- shapes and products -------------------------------------------------------------------

def reshape(w, node):
    return [w.add("Reshape", [w.read(node.inputs[0]), w.ints(node.params["shape"])],
                  allowzero=1)]


def broadcast_to(w, node):
    return [w.add("Expand", [w.read(node.inputs[0]), w.ints(node.params["shape"])])]


def transpose(w, node):
    return [w.add("Transpose", [w.read(node.inputs[0])], perm=list(node.params["perm"]))]


_WIDER_PRODUCTS = {np.dtype(np.int8): np.dtype(np.int32), np.dtype(np.int16): np.dtype(np.int32),
                   np.dtype(np.uint8): np.dtype(np.uint32),
                   np.dtype(np.uint16): np.dtype(np.uint32)}


def matmul(w, node):
    """MatMul in the result dtype; a product of bools counts the true pairs in int64,
    and 8- and 16-bit integers (which ONNX's MatMul does not take) multiply in 32 bits,
    cast back, wrapping as NumPy's do. ONNX has no product of operands rounded to
    bfloat16 (jitflow.config.matmul_precision = "bfloat16"): refused."""
    if node.params.get("precision") is not None:
        raise UnsupportedError("ONNX has no matmul of this precision (trace with "
                               "jitflow.config.matmul_precision = 'float32' to export)",
                               [f"matmul precision={node.params['precision']!r}"],
                               ["matmul precision=None"])
    dtype = out_dtype(node)
    work = INT64 if dtype == BOOL else _WIDER_PRODUCTS.get(dtype, dtype)
    product = w.add("MatMul", [w.operand(v, work) for v in node.inputs])
    return [w.cast(product, work, dtype)]


# --- slices, gathers and scatters ----------------------------------------------------------

def slice_(w, node):
    starts, steps, sizes = (node.params[k] for k in ("starts", "steps", "sizes"))
    ends = [start + step * size for start, step, size in zip(starts, steps, sizes)]
    ends = [INT64_MIN if end < 0 else end for end in ends]
    axes = range(len(starts))
    return [w.add("Slice", [w.read(node.inputs[0]), w.ints(starts), w.ints(ends),
                            w.ints(axes), w.ints(steps)])]


def _permuted(w, name, perm):
    """A Transpose, left out when it would keep every axis where it is."""
    perm = [int(p) for p in perm]
    return name if perm == sorted(perm) else w.add("Transpose", [name], perm=perm)


def _index_tuples(w, indices, shape, axis):
    """The integer index arrays, broadcast together and stacked on a last axis as
    GatherND and ScatterND read them, negative ones counted from the end."""
    batch = np.broadcast_shapes(*(i.type.shape for i in indices))
    columns = []
    for k, index in enumerate(indices):
        name = w.add("Expand", [w.operand(index, INT64), w.ints(batch)])
        size = w.constant(np.int64(shape[axis + k]))
        negative = w.add("Less", [name, w.constant(np.int64(0))])
        name = w.add("Where", [negative, w.add("Add", [name, size]), name])
        columns.append(w.add("Unsqueeze", [name, w.ints([-1])]))
    stacked = columns[0] if len(columns) == 1 else w.add("Concat", columns, axis=-1)
    return stacked, len(batch)


def _indexed_first(ndim, axis, count):
    """The permutation that brings the `count` indexed axes from `axis` to the front."""
    indexed = list(range(axis, axis + count))
    return indexed + [a for a in range(ndim) if a not in indexed]


def gather(w, node):
    """x[:, ..., i, j, ...]: GatherND over x with the indexed axes moved to the front,
    then the batch axes moved back to where NumPy puts them (at `axis`)."""
    x, indices, axis = node.inputs[0], node.inputs[1:], node.params["axis"]
    shape = x.type.shape
    index, batch = _index_tuples(w, indices, shape, axis)
    front = _permuted(w, w.read(x), _indexed_first(len(shape), axis, len(indices)))
    taken = w.add("GatherND", [front, index])  # batch + before + after
    kept = len(shape) - len(indices)
    perm = list(range(batch, batch + axis)) + list(range(batch)) + \
        list(range(batch + axis, batch + kept))
    return [_permuted(w, taken, perm)]


def _scatter(w, target, updates, indices, axis, shape, reduction):
    """ScatterND into `target` (named, of `shape`) at the indexed axes; `updates` laid
    out as gather gives them (batch axes at `axis`)."""
    count = len(indices)
    index, batch = _index_tuples(w, indices, shape, axis)
    first = _indexed_first(len(shape), axis, count)
    front = _permuted(w, target, first)
    updates = _permuted(w, updates, list(range(axis, axis + batch)) + list(range(axis)) +
                        list(range(axis + batch, batch + len(shape) - count)))
    scattered = w.add("ScatterND", [front, index, updates], reduction=reduction)
    return _permuted(w, scattered, np.argsort(first))


def scatter_add(w, node):
    updates, indices = node.inputs[0], node.inputs[1:]
    shape, dtype = node.params["shape"], out_dtype(node)
    zeros = w.constant(np.zeros(shape, dtype))
    return [_scatter(w, zeros, w.read(updates), indices, node.params["axis"], shape, "add")]


def scatter(w, node):
    """x with x[..., i, j, ...] = updates; where indices repeat, ONNX Runtime writes the
    updates in order, so the last one stays, as in NumPy."""
    x, updates, indices = node.inputs[0], node.inputs[1], node.inputs[2:]
    return [_scatter(w, w.read(x), w.read(updates), indices, node.params["axis"],
                     x.type.shape, "none")]


# --- joining, padding, counting ------------------------------------------------------------

def concatenate(w, node):
    dtype = out_dtype(node)
    return [w.add("Concat", [w.operand(v, dtype) for v in node.inputs],
                  axis=node.params["axis"])]


def pad(w, node):
    x, widths = node.inputs[0], node.params["widths"]
    if not widths:  # a 0-d array: nothing to pad
        return [w.add("Identity", [w.read(x)])]
    pads = [lo for lo, _ in widths] + [hi for _, hi in widths]
    value = w.constant(np.asarray(node.params["value"]).astype(x.type.dtype))
    return [w.add("Pad", [w.read(x), w.ints(pads), value], mode="constant")]


def iota(w, node):
    """A constant: everything it depends on is static."""
    value, = node.prim.evaluate(**node.params)
    return [w.add("Identity", [w.constant(value)])]


def sort(w, node):
    x, axis = node.inputs[0], node.params["axis"]
    return [w.add("GatherElements", [w.read(x), _stable_order(w, x, axis)], axis=axis)]


def argsort(w, node):
    return [_stable_order(w, node.inputs[0], node.params["axis"])]


def _stable_order(w, x, axis):
    """The int64 positions that sort x along `axis` stably, NaNs last, as NumPy's
    stable sort: ONNX's TopK puts equal values in the order of their positions. NaNs
    sort as inf first, then a second stable TopK moves them after every number."""
    dtype, length = x.type.dtype, w.ints([x.type.shape[axis]])
    name = w.operand(x, INT32) if dtype == BOOL else w.read(x)
    if dtype.kind != "f":
        return w.add("TopK", [name, length], outputs=2, axis=axis, largest=0)[1]
    is_nan = w.add("IsNaN", [name])
    key = w.add("Where", [is_nan, w.constant(np.inf, dtype), name])
    order = w.add("TopK", [key, length], outputs=2, axis=axis, largest=0)[1]
    flags = w.add("GatherElements", [w.add("Cast", [is_nan], to=onnx_type(INT32)), order],
                  axis=axis)
    nans_last = w.add("TopK", [flags, length], outputs=2, axis=axis, largest=0)[1]
    return w.add("GatherElements", [order, nans_last], axis=axis)


def dft(w, node):
    """The transform of complex rows held as (rows, n) parts: ONNX's DFT of the
    (rows, n, 2) signal along axis 1. ONNX's inverse divides by n and jitflow's
    (sign +1) does not, so that one is conj(DFT(conj x)), exact in its signs."""
    inverse = node.params["sign"] > 0
    real, imag = (w.read(v) for v in node.inputs)
    if inverse:
        imag = w.add("Neg", [imag])
    last = w.ints([2])
    signal = w.add("Concat", [w.add("Unsqueeze", [real, last]),
                              w.add("Unsqueeze", [imag, last])], axis=2)
    spectrum = w.add("DFT", [signal, "", w.constant(np.array(1, np.int64))])
    real, imag = (w.add("Squeeze", [part, last])
                  for part in w.add("Split", [spectrum], outputs=2, axis=2, num_outputs=2))
    return [real, w.add("Neg", [imag]) if inverse else imag]


ARRAY_RULES = {
    "reduce_sum": reduction("ReduceSum", plus_zero=True), "reduce_prod": reduction("ReduceProd"),
    "reduce_max": reduction("ReduceMax", guard_nans=True),
    "reduce_min": reduction("ReduceMin", guard_nans=True),
    "argmax": arg_reduction("ArgMax"), "argmin": arg_reduction("ArgMin"),
    "cumsum": cumsum, "reshape": reshape, "broadcast_to": broadcast_to,
    "transpose": transpose, "matmul": matmul, "slice": slice_, "gather": gather,
    "scatter_add": scatter_add, "scatter": scatter, "concatenate": concatenate,
    "pad": pad, "iota": iota, "dft": dft, "sort": sort, "argsort": argsort,
}
