"""Products with precision="bfloat16" (ops/contraction.py) on Intel's tile unit
(matmul.py chooses between this and float32 products of rounded copies).

Each product packs its operands, rounding them, into scratch buffers and multiplies them
on the tile unit (amx.py); a single product (not a batch) is cut between the workers by
blocks of 32 rows.
"""
import numpy as np

from ...ir.sizes import product
from ..emitter import F32, I64, PTR
from . import amx, sgemm
from .amx_ir import PACK_A, PACK_B, PRODUCT
from .bfloat16_rounding import I16
from .common import VOID, declare_function

BLOCK = 32  # rows and columns of the tile unit's blocks of C, and K's step
TILE = 16  # rows of A, or columns of B, in one tile: the packing's unit

# The least rows, depth and columns of a product on the tile unit: a smaller one leaves
# most of each tile empty (padded with zeros). Measured on an Intel Xeon (Emerald
# Rapids), one thread, packing included (benchmarks/bench_amx.py): products of 10
# columns took 1.5-3 times as long on the tile unit as float32's sgemm, a product of
# depth 10 twice as long; 256 x 512 x 512 took a third.
MIN_TILE_SIZES = (TILE, BLOCK, BLOCK)


def fits_tiles(x, out):
    """Whether the product goes to the tile unit: the CPU has one, the product is at least
    MIN_TILE_SIZES, and its sizes fit the library's arguments."""
    sizes = (out.shape[-2], x.shape[-1], out.shape[-1])
    return amx.available() and all(least <= size < 2 ** 31
                                   for least, size in zip(MIN_TILE_SIZES, sizes))


def tile_products(lo, x, y, out):
    """out[b] = x[b] @ y[b] on the tile unit. A product alone (no batch) large enough is
    cut between the workers: its packing by 16 rows of A and 16 columns of B, its
    product by blocks of 32 rows. A batch large enough is cut between them along the
    batch, each worker packing into buffers of its own. x and y lie in memory (no
    constant views)."""
    m, k, n = out.shape[-2], x.shape[-1], out.shape[-1]
    rows, depth, cols = (_round_up(size) for size in (m, k, n))
    batch = product(out.shape[:-2])
    flops = 2.0 * m * n * k * batch
    parallel = lo.workers is not None and flops >= sgemm.MIN_PARALLEL_FLOPS
    packed = [lo.memory.scratch((size,), np.dtype(np.uint16), until=lo.node_index,
                                per_worker=parallel and batch > 1)
              for size in (rows * depth, depth * cols)]
    functions = _declare(lo.module)
    buffers = tuple(lo.em.element_pointer(v.base, v.dtype, I64(v.offset)) for v in packed)
    sizes = (m, k, n, rows, depth, cols)
    views = (x, y, out)
    if batch == 1:
        _one_product(lo, views, [I64(v.offset) for v in views], functions, buffers, sizes,
                     lo.workers.split if parallel else None)
        return
    lo.loop_nest(out.shape[:-2], [v.batch_axes() for v in views],
                 lambda offsets: _one_product(lo, views, offsets, functions, buffers, sizes,
                                              None),
                 owner=2 if parallel else None, work=int(flops) if parallel else None)


def _one_product(lo, views, offsets, functions, buffers, sizes, split):
    """Pack and multiply the product whose matrices start at `offsets` of `views`;
    split(units, innermost, emit_chunk): the workers' (lowering/parallel.py), or None
    for this thread alone."""
    (x, y, _), b = views, lo.builder
    x_at, y_at, out_at = (lo.em.element_pointer(v.base, v.dtype, offset)
                          for v, offset in zip(views, offsets))
    (pack_a, pack_b, product), (a_buffer, b_buffer) = functions, buffers
    m, k, n, rows, depth, cols = sizes
    run = split or (lambda units, innermost, emit: emit(I64(0), I64(units)))

    def part(begin, count, size):
        """(first index, indices in the part, those inside the operand's `size`) of a
        part of `count` units of TILE from unit `begin`."""
        first, length = b.mul(begin, I64(TILE)), b.mul(count, I64(TILE))
        inside = b.sub(I64(size), first)
        inside = b.select(b.icmp_signed("<", inside, I64(0)), I64(0), inside)
        return first, length, b.select(b.icmp_signed("<", inside, length), inside, length)

    def pack_rows(begin, count):
        first, length, inside = part(begin, count, m)
        b.call(pack_a, [_moved(b, x_at, b.mul(first, I64(x.strides[-2])), F32),
                        I64(x.strides[-2]), I64(x.strides[-1]), inside, I64(k),
                        _moved(b, a_buffer, b.mul(first, I64(depth)), I16), length,
                        I64(depth)])

    def pack_columns(begin, count):
        first, length, inside = part(begin, count, n)
        b.call(pack_b, [_moved(b, y_at, b.mul(first, I64(y.strides[-1])), F32),
                        I64(y.strides[-2]), I64(y.strides[-1]), I64(k), inside,
                        _moved(b, b_buffer, b.mul(first, I64(depth)), I16), I64(depth),
                        length])

    def multiply_rows(begin, count):
        end = b.mul(b.add(begin, count), I64(BLOCK))
        end = b.select(b.icmp_signed("<", end, I64(m)), end, I64(m))
        b.call(product, [a_buffer, b_buffer, I64(depth), b.mul(begin, I64(BLOCK)), end,
                         I64(m), I64(n), out_at, I64(n)])
    run(rows // TILE, False, pack_rows)
    run(cols // TILE, False, pack_columns)
    run(rows // BLOCK, False, multiply_rows)


def _moved(b, pointer, elements, element_type):
    return b.gep(pointer, [elements], source_etype=element_type)


def _declare(module):
    """The library's three functions, declared in `module` (once)."""
    packing = [PTR, I64, I64, I64, I64, PTR, I64, I64]
    product = [PTR, PTR, I64, I64, I64, I64, I64, PTR, I64]
    return tuple(module.globals.get(name) or declare_function(module, name, VOID, params)
                 for name, params in ((PACK_A, packing), (PACK_B, packing),
                                      (PRODUCT, product)))


def _round_up(size):
    return -(-size // BLOCK) * BLOCK

