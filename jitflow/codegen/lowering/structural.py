"""Lowerings of the primitives that are not elementwise: arg reductions, scans, gathers,
concatenation, padding and iota (matmul and reductions have files of their own). Each
writes its contiguous output buffers.

Index arithmetic goes through Lowering.loop_nest, which hands the body one element
offset per view. An `index_view` has no memory: its offset *is* an index (a position
along some axes), which is how bodies learn where they are.
"""
import numpy as np

from ...ir.types import is_bfloat16, stored_like_np_pad
from ..control.branches import switch
from ..control.loops import scan, while_loop
from ..control.python_callbacks import pure_python_callback, python_callback
from ..control.while_grad import while_grad
from ..emitter import I64
from ..gemm.matmul import matmul
from ..linalg.complex_factorizations import LOWERINGS as COMPLEX_FACTORIZATIONS
from ..linalg.factorizations import LOWERINGS as FACTORIZATIONS
from ..loops.arg_reductions import arg_reduce
from ..loops.fourier import dft_rows
from ..loops.indexed import IndexedAxes
from ..loops.reduced_views import index_view
from ..loops.reductions import reduce
from ..loops.scatter import scatter, scatter_add
from ..loops.sorting import sort_along_axis
from ..math.scalar import RULES as SCALAR
from ..views import contiguous_strides


def cumsum(lo, node, inputs, outputs):
    """out[..., k, ...] = out[..., k-1, ...] + x[..., k, ...], sequentially like NumPy
    (cumprod: times)."""
    (x,), (out,) = inputs, outputs
    em, b = lo.em, lo.builder
    axis = node.params["axis"]
    step = contiguous_strides(out.shape)[axis]
    combine = SCALAR["mul" if node.op == "cumprod" else "add"]

    def body(offsets):
        first = b.icmp_signed("==", offsets[2], I64(0))
        previous_at = b.select(first, offsets[1], b.sub(offsets[1], I64(step)))
        previous = em.load(out.base, out.dtype, previous_at)
        value = em.cast(lo.read(x, offsets[0]), x.dtype, out.dtype)
        total = _rounded_each_step(em, combine, previous, value, out.dtype)
        # the first element is taken as it is: NumPy's cumsum of [-0.0] is [-0.0]
        em.store(b.select(first, value, total), out.base, out.dtype, offsets[1])
    # The lines along the other axes are independent: a view walking only those lets
    # the nest be split between threads along one of them, never along the scan.
    lines = index_view(x.shape, [a for a in range(len(x.shape)) if a != axis])
    lo.loop_nest(x.shape, [x, out, index_view(x.shape, (axis,)), lines], body, owner=3)


def _rounded_each_step(em, combine, x, y, dtype):
    """x + y (or x * y) in `dtype`; bfloat16's computed in float32 and rounded back, as
    ml_dtypes' loop does at every step of a running sum."""
    if not is_bfloat16(dtype):
        return combine(em, x, y, dtype=dtype)
    float32 = np.dtype(np.float32)
    wide = combine(em, em.cast(x, dtype, float32), em.cast(y, dtype, float32), dtype=float32)
    return em.cast(wide, float32, dtype)


def complex_cumprod(lo, node, inputs, outputs):
    """The running product of complex values held as parts, sequentially like NumPy's
    cumprod: out[k] = out[k-1] x[k], (pr xr - pi xi) + (pr xi + pi xr) i."""
    (xr, xi), (out_r, out_i) = inputs, outputs
    em, b = lo.em, lo.builder
    axis = node.params["axis"]
    step = contiguous_strides(out_r.shape)[axis]
    multiply, add, subtract = SCALAR["mul"], SCALAR["add"], SCALAR["sub"]
    dtype = out_r.dtype

    def body(offsets):
        first = b.icmp_signed("==", offsets[4], I64(0))
        pr, pi = (em.load(out.base, dtype, b.select(first, at, b.sub(at, I64(step))))
                  for out, at in ((out_r, offsets[2]), (out_i, offsets[3])))
        vr, vi = lo.read(xr, offsets[0]), lo.read(xi, offsets[1])
        real = subtract(em, multiply(em, pr, vr, dtype=dtype),
                        multiply(em, pi, vi, dtype=dtype), dtype=dtype)
        imag = add(em, multiply(em, pr, vi, dtype=dtype),
                   multiply(em, pi, vr, dtype=dtype), dtype=dtype)
        # the first element is taken as it is (NumPy's cumprod starts from it)
        em.store(b.select(first, vr, real), out_r.base, dtype, offsets[2])
        em.store(b.select(first, vi, imag), out_i.base, dtype, offsets[3])
    lines = index_view(xr.shape, [a for a in range(len(xr.shape)) if a != axis])
    lo.loop_nest(xr.shape, [xr, xi, out_r, out_i, index_view(xr.shape, (axis,)), lines],
                 body, owner=5)


def gather(lo, node, inputs, outputs):
    """out[..., i, ...] = x[..., idx[i], ...], after every index is checked."""
    x, indices, (out,) = inputs[0], inputs[1:], outputs
    source = IndexedAxes(lo, x, indices, node.params["axis"], out.shape)
    if not source.check():
        lo.fill(out, 0)
        return

    def body(offsets):
        lo.em.store(lo.read(x, source.position(offsets[:-1])), out.base, out.dtype,
                    offsets[-1])
    lo.loop_nest(out.shape, source.views + [out], body, owner=len(source.views))


def concatenate(lo, node, inputs, outputs):
    (out,), axis = outputs, node.params["axis"]
    start = 0
    for x in inputs:
        starts = [start if i == axis else 0 for i in range(len(out.shape))]
        lo.copy(x, out.slice(starts, [1] * len(out.shape), x.shape))
        start += x.shape[axis]


def pad(lo, node, inputs, outputs):
    """x with `value` around it. NumPy converts the value by assignment to the array's
    dtype (2.5 pads an int array with 2; inf raises OverflowError), even when every width
    is 0, but never for a 0-d array, which np.pad cannot pad: the same here, at compile
    time, since the value is static."""
    (x,), (out,) = inputs, outputs
    widths = node.params["widths"]
    if x.shape:
        value = stored_like_np_pad(node.params["value"], out.dtype)
        if any(any(pair) for pair in widths):
            lo.fill(out, value.item())
    starts = [lo_width for lo_width, _ in widths]
    lo.copy(x, out.slice(starts, [1] * len(out.shape), x.shape))


def iota(lo, node, inputs, outputs):
    (out,) = outputs
    em = lo.em

    def body(offsets):
        em.store(em.cast(offsets[0], np.dtype(np.int64), out.dtype), out.base, out.dtype,
                 offsets[1])
    lo.loop_nest(out.shape, [index_view(out.shape, (node.params["axis"],)), out], body,
                 owner=1)


STRUCTURAL = {
    "reduce_sum": reduce, "reduce_prod": reduce, "reduce_max": reduce, "reduce_min": reduce,
    "argmax": arg_reduce, "argmin": arg_reduce, "cumsum": cumsum, "cumprod": cumsum,
    "complex_cumprod": complex_cumprod,
    "gather": gather, "sort": sort_along_axis, "argsort": sort_along_axis, "dft": dft_rows,
    "concatenate": concatenate, "pad": pad, "matmul": matmul, "iota": iota,
    "scatter_add": scatter_add, "scatter": scatter, "switch": switch,
    "while": while_loop, "scan": scan, "while_grad": while_grad,
    "debug_callback": python_callback, "pure_callback": pure_python_callback,
    **FACTORIZATIONS, **COMPLEX_FACTORIZATIONS,
}
