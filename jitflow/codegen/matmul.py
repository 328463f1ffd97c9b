"""Lowering of matmul: out[b, m, n] = sum over k of x[b, m, k] * y[b, k, n]."""
from .scalar import RULES as SCALAR
from .views import View, contiguous_strides


def matmul(lo, node, inputs, outputs):
    """out[b, m, n] += x[b, m, k] * y[b, k, n], with n innermost so the loop vectorizes."""
    (x, y), (out,) = inputs, outputs
    em = lo.em
    *batch, rows, cols = out.shape
    depth = x.shape[-1]
    shape = tuple(batch) + (rows, depth, cols)
    lead = len(batch)
    x_view = _batched(x, shape, (x.strides[-2], x.strides[-1], 0))
    y_view = _batched(y, shape, (0, y.strides[-2], y.strides[-1]))
    out_strides = contiguous_strides(out.shape)
    out_view = View(out.base, out.dtype, shape, out_strides[:lead] + (cols, 0, 1))
    lo.fill(out, 0)
    multiply, add = SCALAR["mul"], SCALAR["add"]

    def body(offsets):
        a = em.cast(lo.read(x, offsets[0]), x.dtype, out.dtype)
        c = em.cast(lo.read(y, offsets[1]), y.dtype, out.dtype)
        total = em.load(out.base, out.dtype, offsets[2])
        product = multiply(em, a, c, dtype=out.dtype)
        em.store(add(em, total, product, dtype=out.dtype), out.base, out.dtype, offsets[2])
    lo.loop_nest(shape, [x_view, y_view, out_view], body)


def _batched(view, loop_shape, matrix_strides):
    """A matmul operand seen in the (batch..., rows, depth, cols) loop."""
    lead = len(view.shape) - 2
    batch_view = View(view.base, view.dtype, view.shape[:lead], view.strides[:lead],
                      view.offset, view.constant).broadcast_to(loop_shape[:-3])
    return View(view.base, view.dtype, loop_shape, batch_view.strides + matrix_strides,
                view.offset, view.constant)
