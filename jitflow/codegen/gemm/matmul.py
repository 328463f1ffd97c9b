"""Lowering of matmul: out[b, m, n] = sum over k of x[b, m, k] * y[b, k, n].

Float results go to a gemm routine, one call per batch element, from a loop nest over
the batch axes (stride 0 on the axes an operand broadcasts): float32 to jitflow's own
sgemm (sgemm.py) or OpenBLAS's (blas.py), as JITFLOW_SGEMM says, float64 to OpenBLAS's
dgemm when it is loaded. Small float32 products that would go to jitflow's sgemm are
computed in the graph's own code instead, with the same bits (small_products.py). An operand of the result's dtype whose matrix has a unit stride
on one axis is passed where it lies, described by a transpose flag and leading
dimension, so transposes and slices still cost no copy. Any other operand (strided on
both axes, broadcast inside the matrix, a uniform constant, another dtype) is first
copied, converted, into a contiguous scratch buffer.

When the graph's code runs on several workers (lowering/parallel.py), a large float32
product is cut into one share per worker, and each worker computes its own; a batch of
float32 products each too small to cut is cut along the batch instead.

Integer and bool results, empty products and runs without a gemm use a generated loop
nest instead.

A product of precision "bfloat16" (config.matmul_precision) runs on Intel's tile unit
where the CPU has one and the product is large enough (bfloat16_products.py); else its
operands are copied rounded to bfloat16 and multiplied as above.
"""
import math
import os

import numpy as np

from ...ir.sizes import product
from ..emitter import I32, I64
from ..jit import target
from ..jit.engine import host
from ..math.scalar import RULES as SCALAR
from ..views import View, contiguous_strides
from . import blas, sgemm
from .bfloat16_products import fits_tiles, tile_products
from .bfloat16_rounding import bfloat16_rounded
from .small_products import emit_small_product, emit_small_rows, is_small_product
from .tiles import tile_for

SGEMM_VARIABLE = "JITFLOW_SGEMM"
SGEMM_ROUTES = ("auto", "jitflow", "blas")


def matmul(lo, node, inputs, outputs):
    (x, y), (out,) = inputs, outputs
    if node.params.get("precision") == "bfloat16":
        _bfloat16_product(lo, x, y, out)
    else:
        _product(lo, x, y, out)


def _product(lo, x, y, out):
    x, out = _rows_of_the_batch(x, y, out)
    if not _fits_blas(x, out):
        _generated_kernel(lo, x, y, out)
    elif out.dtype == np.float32 and own_sgemm(out.shape[-1]):
        if is_small_product(x, y, out, tile_for(host()[2]), lo.typical):
            _small_products(lo, x, y, out)
        else:
            _own_sgemm_per_batch(lo, x, y, out)
    else:
        routine = blas.gemm(lo.module, out.dtype)
        if routine is None:
            _generated_kernel(lo, x, y, out)
        else:
            _gemm_per_batch(lo, x, y, out)(
                lambda arguments: lo.builder.call(routine, arguments))


def _bfloat16_product(lo, x, y, out):
    """out = x @ y of operands rounded to bfloat16, their products summed in float32:
    on the tile unit where it takes the product (bfloat16_products.py), else as float32
    on rounded copies."""
    x, out = _rows_of_the_batch(x, y, out)
    if fits_tiles(x, out):
        x, y = (_contiguous_copy(lo, v, v.dtype) if v.constant is not None else v
                for v in (x, y))
        tile_products(lo, x, y, out)
    else:
        _product(lo, _contiguous_copy(lo, x, x.dtype, bfloat16_rounded),
                 _contiguous_copy(lo, y, y.dtype, bfloat16_rounded), out)


def _rows_of_the_batch(x, y, out):
    """x[b] @ y with one matrix y for the whole batch is one product of all the rows of
    x with y, when x's rows lie evenly spaced (contiguous): one gemm of b * m rows
    rather than b of m rows (a batch of vectors times a matrix was b matrix-vector
    products, each reading all of y)."""
    if len(y.shape) != 2 or len(x.shape) <= 2 or not x.is_contiguous():
        return x, out
    rows = product(x.shape[:-1])
    return x.reshape((rows, x.shape[-1])), out.reshape((rows, out.shape[-1]))


def own_sgemm(columns):
    """Whether a float32 product with `columns` columns takes jitflow's sgemm:
    JITFLOW_SGEMM (read when a matmul is lowered) "jitflow" or "blas"; "auto", the
    default, takes ours wherever OpenBLAS is off or missing, and where it measured faster
    than OpenBLAS (benchmarks/bench_gemm.py, OpenBLAS held to the same instruction set
    with OPENBLAS_CORETYPE):
    - with AVX-512, always (on an AMD Zen 4, two threads: 1.0-1.6x OpenBLAS's AVX-512
      kernels on the MLP's shapes, 3x on k = 10; one thread: 0.97-1.23x);
    - with AVX2 and FMA, for products of at least a micro-tile's width of columns (the
      same CPU generating AVX2 code, against OpenBLAS's Haswell kernels: two threads
      0.98-1.27x, 3x on k = 10; one thread 0.90-1.00x), not narrower ones (0.6x at 10
      columns, where OpenBLAS's narrow kernels win);
    - elsewhere (SSE only) never: no FMA, and its tile was never tuned."""
    route = os.environ.get(SGEMM_VARIABLE, "auto").strip().lower() or "auto"
    if route not in SGEMM_ROUTES:
        raise ValueError(f"{SGEMM_VARIABLE} must be one of {', '.join(SGEMM_ROUTES)}, "
                         f"not {route!r}")
    if route != "auto":
        return route == "jitflow"
    if not (blas.wanted() and blas.library() is not None):
        return True
    features = target.features()
    if "avx512f" in features:
        return True
    return {"avx2", "fma"} <= features and columns >= tile_for(host()[2]).cols


def _fits_blas(x, out):
    """gemm takes positive sizes within its 32-bit integers. An empty product is all
    zeros or nothing at all, which the generated kernel gives without a call."""
    sizes = (out.shape[-2], x.shape[-1], out.shape[-1])
    return all(0 < size <= blas.INT_MAX for size in sizes)


# --- BLAS ------------------------------------------------------------------------------

def _gemm_per_batch(lo, x, y, out):
    """out[b] = x[b] @ y[b] by one gemm call per batch index b. Emits the operands'
    copies, if any, and returns emit(call_gemm), which emits the loop over the batch:
    call_gemm(arguments) emits a call with cblas_?gemm's arguments (alpha 1, beta 0:
    gemm then never reads out, whose bytes may be anything)."""
    a, b = _readable_by_blas(lo, x, out.dtype), _readable_by_blas(lo, y, out.dtype)
    (transpose_a, lda), (transpose_b, ldb) = _blas_layout(a), _blas_layout(b)
    rows, depth, cols = out.shape[-2], x.shape[-1], out.shape[-1]
    one, zero = lo.em.const(1, out.dtype), lo.em.const(0, out.dtype)

    def emit(call_gemm, parallel_work=None):
        """parallel_work: the loop over the batch may be split between workers, each
        computing whole products (it does that much work in all)."""
        def call(offsets):
            a_at, b_at, out_at = (lo.em.element_pointer(v.base, v.dtype, offset)
                                  for v, offset in zip((a, b, out), offsets))
            call_gemm([I32(blas.ROW_MAJOR), I32(transpose_a), I32(transpose_b),
                       I32(rows), I32(cols), I32(depth),
                       one, a_at, I32(lda), b_at, I32(ldb), zero, out_at, I32(cols)])
        lo.loop_nest(out.shape[:-2], [v.batch_axes() for v in (a, b, out)], call,
                     owner=None if parallel_work is None else 2, work=parallel_work)
    return emit


def _own_sgemm_per_batch(lo, x, y, out):
    """_gemm_per_batch with jitflow's sgemm, on a graph with workers: a batch of products
    each too small to cut (attention's heads) is cut between the workers, each
    computing whole products; a large product is cut into a share per worker; anything
    else runs on one thread. Each product's bits are the same whoever computes it."""
    product_flops, batch = _typical_work(lo, x, out)
    flops = product_flops * batch
    emit = _gemm_per_batch(lo, x, y, out)
    if lo.workers is None or flops < sgemm.MIN_PARALLEL_FLOPS or \
            (product_flops < sgemm.MIN_PARALLEL_FLOPS and batch >= lo.threads):
        routine = sgemm.declare_threads(lo.module)
        parallel = lo.workers is not None and flops >= sgemm.MIN_PARALLEL_FLOPS
        emit(lambda arguments: lo.builder.call(routine, [I32(1), *arguments]),
             parallel_work=int(flops) if parallel else None)
        return
    routine, count = sgemm.declare_shares(lo.module), I64(lo.threads)

    def shares(first, number):
        end = lo.builder.add(first, number)
        emit(lambda arguments: lo.builder.call(routine, [first, end, count, *arguments]))
    lo.workers.split(lo.threads, False, shares)


SHORT_COPY_ELEMENTS = 1 << 15


def _small_products(lo, x, y, out):
    """out[b] = x[b] @ y[b] for small products, in this code (small_products.py): the
    same bits as jitflow's sgemm. A y whose rows are not contiguous is copied first
    (its values, so the bits stay). Where it is worth it, they are split between the
    workers: a batch of them in whole products, one product by its rows (an MLP's
    256x512 by 512x10 output layer took 52 us on one thread inside its training step)."""
    if y.strides[-1] != 1 and y.shape[-1] > 1:
        # A short copy's scalar loop does not need LLVM's: its full pipeline on the
        # module cost an MLP step's cold compile 15 ms of CPU for W3.T's 5120 floats.
        short = lo.typical(y.size) <= SHORT_COPY_ELEMENTS
        y = _contiguous_copy(lo, y, y.dtype, llvm_loops=not short)
    product_flops, batch = _typical_work(lo, x, out)
    flops = product_flops * batch
    parallel = lo.workers is not None and flops >= sgemm.MIN_PARALLEL_FLOPS
    tile = tile_for(host()[2])
    if parallel and product(out.shape[:-2]) == 1:
        offsets = [I64(v.offset) for v in (x, y, out)]
        lo.workers.split(out.shape[-2], False, lambda first, count: emit_small_rows(
            lo, x, y, out, offsets, tile, first, count))
        return
    lo.loop_nest(out.shape[:-2], [v.batch_axes() for v in (x, y, out)],
                 lambda offsets: emit_small_product(lo, x, y, out, offsets, tile),
                 owner=2 if parallel else None, work=int(flops) if parallel else None)


def _typical_work(lo, x, out):
    """(floating-point operations per product, products) of out = x @ y, at the
    typical size where sizes are run-time ones: they only decide how to split it."""
    rows, cols, depth = (lo.typical(size) for size in (*out.shape[-2:], x.shape[-1]))
    return 2.0 * rows * cols * depth, lo.typical(product(out.shape[:-2]))


def _readable_by_blas(lo, view, dtype):
    """`view`, or a contiguous copy of it in `dtype` where BLAS cannot read it."""
    if view.dtype == dtype and view.constant is None and _blas_layout(view) is not None:
        return view
    return _contiguous_copy(lo, view, dtype)


def _blas_layout(view):
    """(transpose flag, leading dimension) with which row-major BLAS reads the matrix in
    view's last two axes where it lies, or None if it cannot. Untransposed, BLAS reads
    element (i, j) at i * ld + j; transposed, at j * ld + i; ld must be at least the
    length of what it reads as a row. The stride of a size-1 axis is never used."""
    rows, cols = view.shape[-2:]
    row_stride, col_stride = view.strides[-2:]
    if col_stride == 1 or cols == 1:
        ld = row_stride if rows > 1 else cols
        if cols <= ld <= blas.INT_MAX:
            return blas.NO_TRANSPOSE, ld
    if row_stride == 1 or rows == 1:
        ld = col_stride if cols > 1 else rows
        if rows <= ld <= blas.INT_MAX:
            return blas.TRANSPOSE, ld
    return None


def _contiguous_copy(lo, view, dtype, rounding=None, llvm_loops=True):
    """`view` copied, converted to `dtype`, into a contiguous scratch buffer that lives
    as long as this node. Batch axes the view broadcasts (stride 0) have size 1 in the
    copy: reading it broadcasts them again, so each matrix is copied only once.
    rounding(builder, value): applied to each value of `dtype` before it is stored.
    llvm_loops: as Lowering.loop_nest takes it."""
    lead = len(view.shape) - 2
    shape = tuple(1 if axis < lead and stride == 0 else size
                  for axis, (size, stride) in enumerate(zip(view.shape, view.strides)))
    source = View(view.base, view.dtype, shape, view.strides, view.offset, view.constant)
    copy = lo.memory.scratch(shape, np.dtype(dtype), until=lo.node_index)
    if rounding is None:
        lo.copy(source, copy, llvm_loops=llvm_loops)
        return copy.broadcast_to(view.shape)

    def body(offsets):
        value = lo.em.cast(lo.read(source, offsets[0]), source.dtype, copy.dtype)
        lo.em.store(rounding(lo.builder, value), copy.base, copy.dtype, offsets[1])
    lo.loop_nest(shape, [source, copy], body, owner=1, vector=True)
    return copy.broadcast_to(view.shape)


# --- the generated kernel -----------------------------------------------------------------

# Integer and bool arithmetic is exact (integers wrap): any grouping of the products
# gives the same sum, so the kernel adds this many per load and store of out.
EXACT_GROUP = 4

# Bytes of y one block of k reads while every row of out passes over it: half of a
# typical 512 KiB-1 MiB L2 cache.
BLOCK_BYTES = 256 * 1024


def _generated_kernel(lo, x, y, out):
    """out[b, m, n] += x[b, m, k] * y[b, k, n] over (b, m, k, n), n innermost: the inner
    loop scales rows of y into a row of out, all contiguous, so it vectorizes (y is
    copied first if its rows are strided). Float elements add their products one at a
    time in k order, like NumPy's own loop; integers wrap, and bool adds by or and
    multiplies by and."""
    if y.shape[-1] > 1 and y.strides[-1] != 1 and y.constant is None:
        y = _contiguous_copy(lo, y, y.dtype)
    lo.fill(out, 0)
    depth = x.shape[-1]
    group = EXACT_GROUP if out.dtype.kind in "biu" else 1
    grouped = depth // group * group
    _add_products(lo, x, y, out, 0, grouped, group)
    _add_products(lo, x, y, out, grouped, depth - grouped, 1)


def _add_products(lo, x, y, out, start, count, group):
    """out[b, m, n] += x[b, m, k] * y[b, k, n] for k in [start, start + count), adding
    `group` products to out at a time (count is a multiple of group). The k range is
    cut in blocks whose rows of y stay in cache while every row of out passes over
    them; each element still sees its products in k order."""
    if count == 0:
        return
    block = _block_depth(count, out.shape[-1], y.dtype.itemsize, group)
    blocks = count // block
    _add_product_blocks(lo, x, y, out, start, blocks, block, group)
    _add_product_blocks(lo, x, y, out, start + blocks * block, 1, count - blocks * block,
                        group)


def _block_depth(depth, cols, itemsize, group):
    """Rows of y per block: as many as fit BLOCK_BYTES, a multiple of group."""
    fitting = BLOCK_BYTES // max(cols * itemsize, 1) // group * group
    return min(depth, max(fitting, group))


def _add_product_blocks(lo, x, y, out, start, blocks, block, group):
    """_add_products over `blocks` consecutive blocks of `block` rows of y from k =
    start."""
    if blocks == 0 or block == 0:
        return
    em = lo.em
    *batch, rows, cols = out.shape
    shape = tuple(batch) + (blocks, rows, block // group, cols)
    x_step, y_step = x.strides[-1], y.strides[-2]
    x_view = _batched(x, shape, (block * x_step, x.strides[-2], group * x_step, 0),
                      start * x_step)
    y_view = _batched(y, shape, (block * y_step, 0, group * y_step, y.strides[-1]),
                      start * y_step)
    out_strides = contiguous_strides(out.shape)
    out_view = View(out.base, out.dtype, shape,
                    out_strides[:len(batch)] + (0, cols, 0, 1), out.offset)
    multiply, add = SCALAR["mul"], SCALAR["add"]

    def body(offsets):
        total = em.load(out.base, out.dtype, offsets[2])
        for term in range(group):
            a = em.cast(lo.read(x, _moved(lo, offsets[0], term * x_step)), x.dtype,
                        out.dtype)
            c = em.cast(lo.read(y, _moved(lo, offsets[1], term * y_step)), y.dtype,
                        out.dtype)
            total = add(em, total, multiply(em, a, c, dtype=out.dtype), dtype=out.dtype)
        em.store(total, out.base, out.dtype, offsets[2])
    # Each output element is its own: the nest may be split between threads along
    # its rows (or batch), every element still adding its terms in the order of k.
    lo.loop_nest(shape, [x_view, y_view, out_view], body, owner=2,
                 work=math.prod(shape) * group)


def _moved(lo, offset, elements):
    return offset if elements == 0 else lo.builder.add(offset, I64(elements))


def _batched(view, loop_shape, matrix_strides, shift):
    """A matmul operand seen in a loop over its batch axes (broadcast) followed by axes
    of `matrix_strides`, starting `shift` elements into its matrices."""
    lead = len(view.shape) - 2
    lead_out = len(loop_shape) - len(matrix_strides)
    batch_view = View(view.base, view.dtype, view.shape[:lead], view.strides[:lead],
                      view.offset, view.constant).broadcast_to(loop_shape[:lead_out])
    return View(view.base, view.dtype, loop_shape, batch_view.strides + matrix_strides,
                view.offset + shift, view.constant)
