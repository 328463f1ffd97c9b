"""The micro-kernel of jitflow's sgemm (sgemm_ir.py), and the function that writes its
tile to C.

The micro-kernel keeps an MR x NR tile of C in vector registers (MR rows of NR / lanes
vectors), and per k broadcasts MR values of A against NR / lanes vector loads of B, with
one fused multiply-add each. A tile is written straight to C when it is whole; an edge
tile goes through a tile on the stack, and only its elements inside C are copied.

`library` is the module being built (gemm_ir._Gemm): its tile, vector type, module and
fused multiply-add.
"""
from llvmlite import ir

from ..emitter import F32, I32, I64, PTR, Emitter, entry_alloca
from .common import ALIGNMENT, VOID, element, new_function


# k values per trip of the kernel's main loop, where vectors have 16 lanes (AVX-512's 32
# registers). Stepping pointers once per 4 k values rather than computing each k's
# addresses anew leaves the FMA ports to the FMAs; on an Intel Xeon (Emerald Rapids,
# one thread) it took 2-10% off the transformer's product shapes against MKL (paired
# with the loop of one k per trip, 40 rounds). With 16 registers (AVX, SSE) the loop
# takes one k per trip: the 6 x 16 tile's 12 accumulators, 2 vectors of B and a
# broadcast leave one register, and LLVM, loading the next k's B early, spilled
# accumulators to the stack (7-19% slower, AVX2 code on that Xeon).
UNROLL = 4


def _unroll(tile):
    return UNROLL if tile.lanes >= 16 else 1


def _define_kernel(library):
    """void kernel(ptr ap, i64 a_step, ptr bp, i64 depth, ptr dst, i64 ld, float alpha,
    float scale): the MR x NR product of an A and a B micro-panel over `depth` (at
    least 1) values of k, then dst[r * ld + j] = alpha * product + scale * dst[...]
    (dst not read when scale is 0). k's MR values of A lie together, the next k's
    a_step floats on (MR in a packed panel, more in A itself: blocking.py); B's panel
    is packed. A main loop takes _unroll(tile) values of k per trip, a tail loop the
    rest; each accumulator adds its k values in order either way."""
    tile, vector = library.tile, library.vector
    function, b = new_function(library.module, "gemm.kernel", VOID,
                               [PTR, I64, PTR, I64, PTR, I64, F32, F32])
    ap, a_step, bp, depth, dst, ld, alpha, scale = function.args
    b_step = I64(tile.cols)
    for pointer in (ap, bp, dst):
        pointer.add_attribute("noalias")
    zeros = [[ir.Constant(vector, None)] * tile.vectors for _ in range(tile.rows)]
    state, steps = (zeros, ap, bp), (a_step, b_step)
    unroll = _unroll(tile)
    state = _k_loop(library, b, "k", state, steps, b.udiv(depth, I64(unroll)), unroll)
    if unroll > 1:
        state = _k_loop(library, b, "k.tail", state, steps, b.urem(depth, I64(unroll)), 1)
    _write_tile(library, b, state[0], dst, ld, alpha, scale)
    b.ret_void()
    return function


def _k_loop(library, b, name, state, strides, trips, steps):
    """`trips` trips (perhaps none) of `steps` values of k each, from `state`: the
    sums and the pointers into the A and B micro-panels, whose k values lie `strides`
    (a_step, b_step) floats apart. Returns the state after."""
    tile, vector = library.tile, library.vector
    function, entry = b.function, b.block
    body = function.append_basic_block(name)
    done = function.append_basic_block(name + ".end")
    b.cbranch(b.icmp_signed(">", trips, I64(0)), body, done)
    b.position_at_end(body)
    trip = b.phi(I64, name="trip")
    a_row, b_row = b.phi(PTR, name="a_row"), b.phi(PTR, name="b_row")
    sums = [[b.phi(vector) for _ in range(tile.vectors)] for _ in range(tile.rows)]
    for phi, initial in zip([trip, a_row, b_row, *_flat(sums)], [I64(0), *_values(state)]):
        phi.add_incoming(initial, entry)
    updated = sums
    a_step, b_step = strides
    for step in range(steps):
        updated = _k_step(library, b, updated, _ahead(b, a_row, a_step, step),
                          _ahead(b, b_row, b_step, step))
    after = (updated, _ahead(b, a_row, a_step, steps), _ahead(b, b_row, b_step, steps))
    following = b.add(trip, I64(1), flags=["nuw", "nsw"])
    latch = b.block
    for phi, value in zip([trip, a_row, b_row, *_flat(sums)], [following, *_values(after)]):
        phi.add_incoming(value, latch)
    b.cbranch(b.icmp_signed("<", following, trips), body, done)
    b.position_at_end(done)
    merged = []
    for before, looped in zip(_values(state), _values(after)):
        phi = b.phi(before.type)
        phi.add_incoming(before, entry)
        phi.add_incoming(looped, latch)
        merged.append(phi)
    rows = [merged[2 + r * tile.vectors:2 + (r + 1) * tile.vectors] for r in range(tile.rows)]
    return rows, merged[0], merged[1]


def _ahead(b, row, step, count):
    """The pointer `count` k values past `row`."""
    return row if count == 0 else element(b, row, b.mul(step, I64(count)))


def _k_step(library, b, sums, a_values, b_values):
    """The sums after the k value at `a_values` and `b_values`: NR / lanes vectors of
    B, each of the MR values of A broadcast against them, one fused multiply-add each."""
    tile, vector = library.tile, library.vector
    b_vectors = [b.load(element(b, b_values, I64(v * tile.lanes)), typ=vector,
                        align=4 * tile.lanes) for v in range(tile.vectors)]
    updated = []
    for r, row in enumerate(sums):
        a_value = _splat(library, b, b.load(element(b, a_values, I64(r)), typ=F32))
        updated.append([b.call(library.multiply_add, [a_value, b_vector, value])
                        for b_vector, value in zip(b_vectors, row)])
    return updated


def _flat(sums):
    return [value for row in sums for value in row]


def _values(state):
    """A kernel loop's state as one list: the A and B pointers, then the sums."""
    sums, a_row, b_row = state
    return [a_row, b_row, *_flat(sums)]


def _write_tile(library, b, sums, dst, ld, alpha, scale):
    """dst = alpha * sums + scale * dst, with the same operations in every path
    (dst * scale + alpha * sum, fused), so an edge tile rounds like a whole one."""
    tile = library.tile
    alpha, scale_vector = _splat(library, b, alpha), _splat(library, b, scale)
    scaled = [[b.fmul(value, alpha) for value in row] for row in sums]
    pointers = [[element(b, dst, b.add(b.mul(I64(r), ld), I64(v * tile.lanes)))
                 for v in range(tile.vectors)] for r in range(tile.rows)]
    reads = b.fcmp_unordered("!=", scale, ir.Constant(F32, 0.0))
    with b.if_else(reads) as (accumulate, overwrite):
        with accumulate:
            for row, row_pointers in zip(scaled, pointers):
                for value, pointer in zip(row, row_pointers):
                    old = b.load(pointer, typ=library.vector, align=4)
                    updated = b.call(library.multiply_add, [old, scale_vector, value])
                    b.store(updated, pointer, align=4)
        with overwrite:
            for row, row_pointers in zip(scaled, pointers):
                for value, pointer in zip(row, row_pointers):
                    b.store(value, pointer, align=4)


def _splat(library, b, scalar):
    """`scalar` in every lane of the tile's vector type."""
    vector, lanes = library.vector, library.tile.lanes
    single = b.insert_element(ir.Constant(vector, ir.Undefined), scalar, I32(0))
    return b.shuffle_vector(single, ir.Constant(vector, ir.Undefined),
                            ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))


def define_tile(library):
    """void tile(ptr ap, i64 a_step, ptr bp, i64 depth, ptr c, i64 c_rows, i64 c_cols,
    i64 rows, i64 cols, float alpha, float scale): the kernel's tile, written to the
    rows x cols corner of it that lies in C at `c`. (Defines the kernel first.)"""
    kernel = _define_kernel(library)
    tile = library.tile
    function, b = new_function(library.module, "gemm.tile", VOID,
                               [PTR, I64, PTR, I64, PTR, I64, I64, I64, I64, F32, F32])
    ap, a_step, bp, depth, c, c_rows, c_cols, rows, cols, alpha, scale = function.args
    panels = [ap, a_step, bp, depth]
    buffer = entry_alloca(b, ir.ArrayType(F32, tile.rows * tile.cols), ALIGNMENT)
    whole = b.and_(b.and_(b.icmp_signed("==", rows, I64(tile.rows)),
                          b.icmp_signed("==", cols, I64(tile.cols))),
                   b.icmp_signed("==", c_cols, I64(1)))
    with b.if_else(whole) as (direct, through_buffer):
        with direct:
            b.call(kernel, [*panels, c, c_rows, alpha, scale])
        with through_buffer:
            reads = b.fcmp_unordered("!=", scale, ir.Constant(F32, 0.0))
            with b.if_then(reads):
                _copy_corner(library, b, c, c_rows, c_cols, buffer, rows, cols, into_c=False)
            b.call(kernel, [*panels, buffer, I64(tile.cols), alpha, scale])
            _copy_corner(library, b, c, c_rows, c_cols, buffer, rows, cols, into_c=True)
    b.ret_void()
    return function


def _copy_corner(library, b, c, c_rows, c_cols, buffer, rows, cols, into_c):
    with Emitter(b).for_range(rows, name="r") as r:
        with Emitter(b).for_range(cols, name="j") as j:
            in_c = element(b, c, b.add(b.mul(r, c_rows), b.mul(j, c_cols)))
            in_buffer = element(b, buffer, b.add(b.mul(r, I64(library.tile.cols)), j))
            source, target = (in_buffer, in_c) if into_c else (in_c, in_buffer)
            b.store(b.load(source, typ=F32), target)
