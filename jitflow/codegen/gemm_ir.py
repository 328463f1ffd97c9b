"""The IR of jitflow's sgemm (gemm.py loads it and declares its entry points).

The design is BLIS's:
 - The problem is described by strides (op(A)[i, p] at a + i * a_rows + p * a_depth, and
   so on), so transposes and column-major order are only other strides. When C's rows
   are not contiguous (column-major), or when the product pads far fewer elements that
   way (n = 10 fills a third of a 32-wide tile, m = 10 five-sixths of a 12-high one),
   the transposed product C^T = op(B)^T op(A)^T is computed instead.
 - K is cut into near-equal blocks of at most KC, N into blocks of NC columns, M into
   blocks of MC rows. op(B)'s block is packed into micro-panels of NR columns, each KC x
   NR, stored k-major (one row of NR floats per k); op(A)'s block into micro-panels of
   MR rows (MR floats per k). Panels past the matrix edge are padded with zeros, so the
   micro-kernel always computes whole tiles.
 - The micro-kernel keeps an MR x NR tile of C in vector registers (MR rows of NR / lanes
   vectors), and per k broadcasts MR values of A against NR / lanes vector loads of B,
   with one fused multiply-add each. It walks the A micro-panels of a block (in L2)
   against one B micro-panel, then the next.
 - A tile is written straight to C when it is whole; an edge tile goes through a tile
   on the stack, and only its elements inside C are copied. Nothing outside the
   matrices (as CBLAS defines them through m, n, k and the leading dimensions) is read
   or written.
 - Threads: a product of at least MIN_PARALLEL_FLOPS is cut into one share per thread,
   a contiguous, disjoint part of C's rows (in whole MR-row panels) or of its columns
   (whole NR-column panels), whichever balances the work better; the pool's workers
   (pool.py) each compute theirs as a product of its own, and a caller that finds the
   pool busy computes every share itself. An element's sum runs over the same K blocks
   in the same order whoever computes it, so any split gives the same bits.
 - Each product packs into buffers of its own (aligned_alloc), so that any number of
   threads may call at once; if they cannot be allocated, an unpacked loop computes the
   same bits instead.
"""
import collections
import contextlib

from llvmlite import ir

from . import pool
from .emitter import F32, F64, I32, I64, PTR, Emitter, define_function, entry_alloca

SGEMM = "jitflow_sgemm"
SGEMM_THREADS = "jitflow_sgemm_threads"
SGEMM_SHARES = "jitflow_sgemm_shares"
ROW_MAJOR, COLUMN_MAJOR = 101, 102
NO_TRANSPOSE, TRANSPOSE, CONJUGATE_TRANSPOSE = 111, 112, 113

# Below this many floating-point operations (2 m n k) a product runs on the calling
# thread alone. Measured on 2 cores, two threads against one, calls back to back (the
# pool's workers awake): 5.2 -> 3.8 us at 64^3 (0.5 MFLOP), 10.6 -> 6.7 us at 96^3,
# 28 -> 16 us for the (256, 10, 512) of an MLP's last layer (2.6 MFLOP). With calls 1 ms
# apart (workers asleep; waking one took 25-100 us here) two threads lost even at 256^3
# (170 against 190 us). Generated code calls gemm between split kernels, with the
# workers awake, as parallel.MIN_PARALLEL_ELEMENTS assumes too.
MIN_PARALLEL_FLOPS = 1 << 21
ALIGNMENT = 64  # bytes, of the packed panels: one cache line, one AVX-512 vector

VOID = ir.VoidType()
NULL = ir.Constant(PTR, None)


class Tile(collections.namedtuple("Tile", "rows vectors lanes depth block_rows block_cols")):
    """The micro-kernel's tile of C: `rows` (MR) rows of `vectors` vectors of `lanes`
    floats (NR = vectors * lanes columns); and the cache blocks: K in blocks of at most
    `depth` (KC), C in blocks of `block_rows` (MC) by `block_cols` (NC)."""

    @property
    def cols(self):
        return self.vectors * self.lanes


# 12 x 32 with AVX-512: 24 accumulators, 2 vectors of B and a broadcast of A among 32
# registers; the kernel then runs at 237 GFLOP/s on one Zen 5 core (its peak: two
# 16-lane FMAs a cycle). Per k it loads 128 bytes of B and 48 of A for 12 cycles of
# FMAs, little enough for L2 to supply: KC 512 (a 64 KiB B micro-panel, streamed from
# L2 rather than kept in the 48 KiB L1D) measured 0-5% faster than KC 256 (32 KiB, in
# L1) at 1024^3 and the MLP's shapes, as C is then read and written half as often.
# An A block (MC x KC, 384 KiB) stays in the 1 MiB L2; a B block (KC x NC, 4 MiB) in L3.
AVX512_TILE = Tile(rows=12, vectors=2, lanes=16, depth=512, block_rows=192, block_cols=2048)
# 16 registers (AVX's ymm, SSE's xmm): 6 x 2 vectors, 12 accumulators; blocks for a
# 32 KiB L1D (a 32 KiB B micro-panel at AVX) and a 256 KiB L2 (120 KiB A blocks).
# Not measured: this machine has AVX-512.
AVX_TILE = Tile(rows=6, vectors=2, lanes=8, depth=256, block_rows=120, block_cols=2048)
SSE_TILE = Tile(rows=6, vectors=2, lanes=4, depth=256, block_rows=120, block_cols=2048)


def tile_for(features):
    """The tile for a CPU with LLVM feature string `features` ("+avx512f,..."): the
    widest vectors it has. Narrower machines run the same IR, legalized by LLVM."""
    enabled = {flag[1:] for flag in features.split(",") if flag.startswith("+")}
    if "avx512f" in enabled:
        return AVX512_TILE
    return AVX_TILE if "avx" in enabled else SSE_TILE




def cblas_type(*leading):
    return ir.FunctionType(VOID, [*leading, I32, I32, I32, I32, I32, I32,
                                  F32, PTR, I32, PTR, I32, F32, PTR, I32])

# --- the problem, as strides -------------------------------------------------------------

# op(A)[i, p] at a + i * a_rows + p * a_depth, op(B)[p, j] at b + p * b_depth + j * b_cols,
# C[i, j] at c + i * c_rows + j * c_cols (in floats); C is m x n, the sum runs over k.
PROBLEM_FIELDS = ("a", "a_rows", "a_depth", "b", "b_depth", "b_cols", "c", "c_rows",
                  "c_cols", "m", "n", "k", "alpha", "beta")
PROBLEM = ir.LiteralStructType([PTR, I64, I64, PTR, I64, I64, PTR, I64, I64, I64, I64, I64,
                                F32, F32])
# A share of a problem for one worker: the problem, the axis it is split on
# (SPLIT_ROWS or SPLIT_COLS) and the number of shares.
SHARES = ir.LiteralStructType([PROBLEM, I64, I64])
SPLIT_ROWS, SPLIT_COLS = 0, 1


def _load_problem(b, pointer):
    return {name: b.load(b.gep(pointer, [I32(0), I32(i)], source_etype=PROBLEM),
                         typ=PROBLEM.elements[i])
            for i, name in enumerate(PROBLEM_FIELDS)}


def _store_problem(b, problem, pointer):
    for i, name in enumerate(PROBLEM_FIELDS):
        b.store(problem[name], b.gep(pointer, [I32(0), I32(i)], source_etype=PROBLEM))


def _transposed(problem):
    """The same product as C^T = op(B)^T op(A)^T: A and B change places."""
    p = problem
    return dict(p, a=p["b"], a_rows=p["b_cols"], a_depth=p["b_depth"],
                b=p["a"], b_depth=p["a_depth"], b_cols=p["a_rows"],
                c_rows=p["c_cols"], c_cols=p["c_rows"], m=p["n"], n=p["m"])


def _select_problem(b, condition, if_true, if_false):
    return {name: b.select(condition, if_true[name], if_false[name]) for name in PROBLEM_FIELDS}


def _element(b, base, index):
    return b.gep(base, [index], inbounds=True, source_etype=F32)


# --- the module --------------------------------------------------------------------------

def build_module(tile, threads):
    """The LLVM module (llvmlite.ir) defining SGEMM, which splits between `threads`
    threads, and SGEMM_THREADS, with micro-kernel tile and cache blocks `tile`."""
    return _Gemm(tile, threads).module


class _Gemm:
    """The module's functions, each defined by a method of its own, callees first."""

    def __init__(self, tile, threads):
        self.tile, self.threads = tile, threads
        self.module = ir.Module("jitflow_sgemm")
        self.vector = ir.VectorType(F32, tile.lanes)
        self.multiply_add = _multiply_add(self.module, self.vector, f"v{tile.lanes}f32")
        self.scalar_multiply_add = _multiply_add(self.module, F32, "f32")
        self.allocate = declare_function(self.module, "aligned_alloc", PTR, [I64, I64])
        self.release = declare_function(self.module, "free", VOID, [PTR])
        kernel = self._define_kernel()
        self.tile_function = self._define_tile(kernel)
        self.pack_rows = self._define_pack(tile.rows, "gemm.pack_rows")
        self.pack_cols = self._define_pack(tile.cols, "gemm.pack_cols")
        self.solve = self._define_solve(self._define_blocked(), self._define_naive())
        self.scale = self._define_scale()
        self.body = self._define_body()
        self._define_entry_threads()
        self._define_entry_shares()
        self._define_entry()

    # --- the micro-kernel -----------------------------------------------------------------
    def _define_kernel(self):
        """void kernel(ptr ap, ptr bp, i64 depth, ptr dst, i64 ld, float alpha,
        float scale): the MR x NR product of an A and a B micro-panel over `depth` (at
        least 1) values of k, then dst[r * ld + j] = alpha * product + scale * dst[...]
        (dst not read when scale is 0)."""
        tile, vector = self.tile, self.vector
        function, b = _function(self.module, "gemm.kernel", VOID,
                                [PTR, PTR, I64, PTR, I64, F32, F32])
        ap, bp, depth, dst, ld, alpha, scale = function.args
        for pointer in (ap, bp, dst):
            pointer.add_attribute("noalias")
        entry = b.block
        loop = function.append_basic_block("k")
        done = function.append_basic_block("k.end")
        b.branch(loop)
        b.position_at_end(loop)
        p = b.phi(I64, name="p")
        p.add_incoming(I64(0), entry)
        sums = [[b.phi(vector) for _ in range(tile.vectors)] for _ in range(tile.rows)]
        for row in sums:
            for value in row:
                value.add_incoming(ir.Constant(vector, None), entry)
        b_row = _element(b, bp, b.mul(p, I64(tile.cols)))
        b_vectors = [b.load(_element(b, b_row, I64(v * tile.lanes)), typ=vector,
                            align=4 * tile.lanes) for v in range(tile.vectors)]
        a_row = _element(b, ap, b.mul(p, I64(tile.rows)))
        following = b.add(p, I64(1), flags=["nuw", "nsw"])
        updated = []
        for r, row in enumerate(sums):
            a_value = self._splat(b, b.load(_element(b, a_row, I64(r)), typ=F32))
            updated.append([b.call(self.multiply_add, [a_value, b_vector, value])
                            for b_vector, value in zip(b_vectors, row)])
            for value, new in zip(row, updated[-1]):
                value.add_incoming(new, loop)
        p.add_incoming(following, loop)
        b.cbranch(b.icmp_signed("<", following, depth), loop, done)
        b.position_at_end(done)
        self._write_tile(b, updated, dst, ld, alpha, scale)
        b.ret_void()
        return function

    def _write_tile(self, b, sums, dst, ld, alpha, scale):
        """dst = alpha * sums + scale * dst, with the same operations in every path
        (dst * scale + alpha * sum, fused), so an edge tile rounds like a whole one."""
        alpha, scale_vector = self._splat(b, alpha), self._splat(b, scale)
        scaled = [[b.fmul(value, alpha) for value in row] for row in sums]
        pointers = [[_element(b, dst, b.add(b.mul(I64(r), ld), I64(v * self.tile.lanes)))
                     for v in range(self.tile.vectors)] for r in range(self.tile.rows)]
        reads = b.fcmp_unordered("!=", scale, ir.Constant(F32, 0.0))
        with b.if_else(reads) as (accumulate, overwrite):
            with accumulate:
                for row, row_pointers in zip(scaled, pointers):
                    for value, pointer in zip(row, row_pointers):
                        old = b.load(pointer, typ=self.vector, align=4)
                        updated = b.call(self.multiply_add, [old, scale_vector, value])
                        b.store(updated, pointer, align=4)
            with overwrite:
                for row, row_pointers in zip(scaled, pointers):
                    for value, pointer in zip(row, row_pointers):
                        b.store(value, pointer, align=4)

    def _splat(self, b, scalar):
        lanes = self.tile.lanes
        single = b.insert_element(ir.Constant(self.vector, ir.Undefined), scalar, I32(0))
        return b.shuffle_vector(single, ir.Constant(self.vector, ir.Undefined),
                                ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))

    # --- one tile of C ----------------------------------------------------------------------
    def _define_tile(self, kernel):
        """void tile(ptr ap, ptr bp, i64 depth, ptr c, i64 c_rows, i64 c_cols, i64 rows,
        i64 cols, float alpha, float scale): the kernel's tile, written to the rows x
        cols corner of it that lies in C at `c`."""
        tile = self.tile
        function, b = _function(self.module, "gemm.tile", VOID,
                                [PTR, PTR, I64, PTR, I64, I64, I64, I64, F32, F32])
        ap, bp, depth, c, c_rows, c_cols, rows, cols, alpha, scale = function.args
        buffer = entry_alloca(b, ir.ArrayType(F32, tile.rows * tile.cols), ALIGNMENT)
        whole = b.and_(b.and_(b.icmp_signed("==", rows, I64(tile.rows)),
                              b.icmp_signed("==", cols, I64(tile.cols))),
                       b.icmp_signed("==", c_cols, I64(1)))
        with b.if_else(whole) as (direct, through_buffer):
            with direct:
                b.call(kernel, [ap, bp, depth, c, c_rows, alpha, scale])
            with through_buffer:
                reads = b.fcmp_unordered("!=", scale, ir.Constant(F32, 0.0))
                with b.if_then(reads):
                    self._copy_corner(b, c, c_rows, c_cols, buffer, rows, cols, into_c=False)
                b.call(kernel, [ap, bp, depth, buffer, I64(tile.cols), alpha, scale])
                self._copy_corner(b, c, c_rows, c_cols, buffer, rows, cols, into_c=True)
        b.ret_void()
        return function

    def _copy_corner(self, b, c, c_rows, c_cols, buffer, rows, cols, into_c):
        with Emitter(b).for_range(rows, name="r") as r:
            with Emitter(b).for_range(cols, name="j") as j:
                in_c = _element(b, c, b.add(b.mul(r, c_rows), b.mul(j, c_cols)))
                in_buffer = _element(b, buffer, b.add(b.mul(r, I64(self.tile.cols)), j))
                source, target = (in_buffer, in_c) if into_c else (in_c, in_buffer)
                b.store(b.load(source, typ=F32), target)

    # --- packing ----------------------------------------------------------------------------
    def _define_pack(self, width, name):
        """void pack(ptr src, i64 lane_stride, i64 k_stride, i64 lanes, i64 depth,
        ptr dst): `lanes` lanes (rows of op(A), or columns of op(B)) of `depth` values,
        lane l's value p at src[l * lane_stride + p * k_stride], into micro-panels of
        `width` lanes, each `depth` rows of `width` floats, the last padded with zeros."""
        panel = self._define_panel(width, name + ".panel")
        function, b = _function(self.module, name, VOID, [PTR, I64, I64, I64, I64, PTR])
        src, lane_stride, k_stride, lanes, depth, dst = function.args
        panels = b.udiv(b.add(lanes, I64(width - 1)), I64(width))
        with Emitter(b).for_range(panels, name="panel") as index:
            first = b.mul(index, I64(width))
            valid = _min(b, I64(width), b.sub(lanes, first))
            b.call(panel, [_element(b, src, b.mul(first, lane_stride)), lane_stride, k_stride,
                           valid, depth, _element(b, dst, b.mul(first, depth))])
        b.ret_void()
        return function

    def _define_panel(self, width, name):
        """One micro-panel of `valid` lanes. Whole panels whose lanes or whose k values
        lie next to each other in memory are copied by vectors; the rest (edges, odd
        strides) one float at a time."""
        function, b = _function(self.module, name, VOID, [PTR, I64, I64, I64, I64, PTR])
        src, lane_stride, k_stride, valid, depth, dst = function.args
        dst.add_attribute("noalias")
        whole = b.icmp_signed("==", valid, I64(width))
        lanes_adjacent = b.and_(whole, b.icmp_signed("==", lane_stride, I64(1)))
        k_adjacent = b.and_(whole, b.icmp_signed("==", k_stride, I64(1)))
        with b.if_else(lanes_adjacent) as (rows_of_lanes, other):
            with rows_of_lanes:
                self._copy_lane_rows(b, width, src, k_stride, depth, dst)
            with other:
                with b.if_else(k_adjacent) as (transpose, scalar):
                    with transpose:
                        done = self._transpose_blocks(b, width, src, lane_stride, depth, dst)
                        self._copy_scalars(b, width, src, lane_stride, k_stride, I64(width), done,
                                           depth, dst)
                    with scalar:
                        self._copy_scalars(b, width, src, lane_stride, k_stride, valid, I64(0),
                                           depth, dst)
        b.ret_void()
        return function

    def _copy_lane_rows(self, b, width, src, k_stride, depth, dst):
        """All lanes of one k lie together: one `width`-float load and store per k."""
        row = ir.VectorType(F32, width)
        with Emitter(b).for_range(depth, name="p") as p:
            value = b.load(_element(b, src, b.mul(p, k_stride)), typ=row, align=4)
            b.store(value, _element(b, dst, b.mul(p, I64(width))), align=4)

    def _transpose_blocks(self, b, width, src, lane_stride, depth, dst):
        """Each lane's k values lie together: load `lanes` k values of each lane,
        transpose the square in registers, store one vector per k. Returns the number
        of k values done (a multiple of `lanes`); the rest is left to _copy_scalars."""
        lanes = self.tile.lanes
        blocks = b.udiv(depth, I64(lanes))
        with Emitter(b).for_range(blocks, name="block") as block:
            first_k = b.mul(block, I64(lanes))
            for group in range(0, width, lanes):
                count = min(lanes, width - group)
                rows = [b.load(_element(b, src, b.add(b.mul(I64(group + lane), lane_stride),
                                                      first_k)),
                               typ=self.vector, align=4) for lane in range(count)]
                rows += [ir.Constant(self.vector, ir.Undefined)] * (lanes - count)
                for q, column in enumerate(_transpose(b, rows)):
                    if count < lanes:
                        column = b.shuffle_vector(column, ir.Constant(self.vector, ir.Undefined),
                                                  ir.Constant(ir.VectorType(I32, count),
                                                              list(range(count))))
                    at = b.add(b.mul(b.add(first_k, I64(q)), I64(width)), I64(group))
                    b.store(column, _element(b, dst, at), align=4)
        return b.mul(blocks, I64(lanes))

    def _copy_scalars(self, b, width, src, lane_stride, k_stride, valid, start, depth, dst):
        """k values start..depth of `valid` lanes one float at a time, the panel's lanes
        from `valid` on zeroed."""
        with Emitter(b).for_range(b.sub(depth, start), name="p") as index:
            p = b.add(start, index)
            row = _element(b, dst, b.mul(p, I64(width)))
            with Emitter(b).for_range(valid, name="lane") as lane:
                value = b.load(_element(b, src, b.add(b.mul(lane, lane_stride),
                                                      b.mul(p, k_stride))), typ=F32)
                b.store(value, _element(b, row, lane))
            with Emitter(b).for_range(b.sub(I64(width), valid), name="pad") as pad:
                b.store(ir.Constant(F32, 0.0), _element(b, row, b.add(valid, pad)))

    # --- the blocked product ----------------------------------------------------------------
    def _define_blocked(self):
        """void blocked(ptr problem, ptr a_panels, ptr b_panels): the product through the
        cache blocks, packing into the two buffers."""
        tile = self.tile
        function, b = _function(self.module, "gemm.blocked", VOID, [PTR, PTR, PTR])
        pointer, a_panels, b_panels = function.args
        p = _load_problem(b, pointer)
        col_blocks = _ceil_div(b, p["n"], tile.block_cols)
        with Emitter(b).for_range(col_blocks, name="jc") as col_block:
            jc = b.mul(col_block, I64(tile.block_cols))
            nc = _min(b, I64(tile.block_cols), b.sub(p["n"], jc))
            with self._depth_blocks(b, p["k"]) as (pc, kc, first):
                scale = b.select(first, p["beta"], ir.Constant(F32, 1.0))
                b_block = _element(b, p["b"], b.add(b.mul(pc, p["b_depth"]),
                                                    b.mul(jc, p["b_cols"])))
                b.call(self.pack_cols, [b_block, p["b_cols"], p["b_depth"], nc, kc, b_panels])
                self._row_blocks(b, p, jc, nc, pc, kc, scale, a_panels, b_panels)
        b.ret_void()
        return function

    def _row_blocks(self, b, p, jc, nc, pc, kc, scale, a_panels, b_panels):
        tile = self.tile
        with Emitter(b).for_range(_ceil_div(b, p["m"], tile.block_rows), name="ic") as block:
            ic = b.mul(block, I64(tile.block_rows))
            mc = _min(b, I64(tile.block_rows), b.sub(p["m"], ic))
            a_block = _element(b, p["a"], b.add(b.mul(ic, p["a_rows"]), b.mul(pc, p["a_depth"])))
            b.call(self.pack_rows, [a_block, p["a_rows"], p["a_depth"], mc, kc, a_panels])
            with Emitter(b).for_range(_ceil_div(b, nc, tile.cols), name="jr") as col_panel:
                jr = b.mul(col_panel, I64(tile.cols))
                b_panel = _element(b, b_panels, b.mul(jr, kc))
                cols = _min(b, I64(tile.cols), b.sub(nc, jr))
                with Emitter(b).for_range(_ceil_div(b, mc, tile.rows), name="ir") as row_panel:
                    ir_ = b.mul(row_panel, I64(tile.rows))
                    rows = _min(b, I64(tile.rows), b.sub(mc, ir_))
                    c = _element(b, p["c"], b.add(b.mul(b.add(ic, ir_), p["c_rows"]),
                                                  b.mul(b.add(jc, jr), p["c_cols"])))
                    b.call(self.tile_function, [_element(b, a_panels, b.mul(ir_, kc)), b_panel,
                                                kc, c, p["c_rows"], p["c_cols"], rows, cols,
                                                p["alpha"], scale])

    @contextlib.contextmanager
    def _depth_blocks(self, b, k):
        """for (pc, kc, first) over K's blocks: as many as blocks of KC need, of near-equal
        sizes (KC 512: 784 = 392 + 392, not 512 + 272), cut where only k decides."""
        count = _ceil_div(b, k, self.tile.depth)
        with Emitter(b).for_range(count, name="pc") as block:
            start = b.udiv(b.mul(block, k), count)
            end = b.udiv(b.mul(b.add(block, I64(1)), k), count)
            yield start, b.sub(end, start), b.icmp_signed("==", block, I64(0))

    def _define_naive(self):
        """void naive(ptr problem): the product without packing, one element at a time,
        with the blocked product's operations in its order (the same bits): the way out
        when the packing buffers cannot be allocated."""
        function, b = _function(self.module, "gemm.naive", VOID, [PTR])
        p = _load_problem(b, function.args[0])
        with self._depth_blocks(b, p["k"]) as (pc, kc, first):
            scale = b.select(first, p["beta"], ir.Constant(F32, 1.0))
            with Emitter(b).for_range(p["m"], name="i") as i:
                with Emitter(b).for_range(p["n"], name="j") as j:
                    total = self._naive_sum(b, p, i, j, pc, kc)
                    pointer = _element(b, p["c"], b.add(b.mul(i, p["c_rows"]),
                                                        b.mul(j, p["c_cols"])))
                    self._write_scalar(b, total, pointer, p["alpha"], scale)
        b.ret_void()
        return function

    def _naive_sum(self, b, p, i, j, pc, kc):
        total = entry_alloca(b, F32, ALIGNMENT)  # promoted to a register by LLVM
        b.store(ir.Constant(F32, 0.0), total)
        with Emitter(b).for_range(kc, name="p") as index:
            depth = b.add(pc, index)
            a_value = b.load(_element(b, p["a"], b.add(b.mul(i, p["a_rows"]),
                                                       b.mul(depth, p["a_depth"]))), typ=F32)
            b_value = b.load(_element(b, p["b"], b.add(b.mul(depth, p["b_depth"]),
                                                       b.mul(j, p["b_cols"]))), typ=F32)
            running = b.load(total, typ=F32)
            b.store(b.call(self.scalar_multiply_add, [a_value, b_value, running]), total)
        return b.load(total, typ=F32)

    def _write_scalar(self, b, value, pointer, alpha, scale):
        scaled = b.fmul(value, alpha)
        reads = b.fcmp_unordered("!=", scale, ir.Constant(F32, 0.0))
        with b.if_else(reads) as (accumulate, overwrite):
            with accumulate:
                old = b.load(pointer, typ=F32)
                b.store(b.call(self.scalar_multiply_add, [old, scale, scaled]), pointer)
            with overwrite:
                b.store(scaled, pointer)

    def _define_solve(self, blocked, naive):
        """void solve(ptr problem): the product on this thread, with packing buffers of
        its own (so that any number of callers may run at once)."""
        tile = self.tile
        function, b = _function(self.module, "gemm.solve", VOID, [PTR])
        (pointer,) = function.args
        p = _load_problem(b, pointer)
        blocks = _ceil_div(b, p["k"], tile.depth)
        depth = b.udiv(b.add(p["k"], b.sub(blocks, I64(1))), blocks)  # the largest block
        rows = _round_up(b, _min(b, p["m"], I64(tile.block_rows)), tile.rows)
        cols = _round_up(b, _min(b, p["n"], I64(tile.block_cols)), tile.cols)
        a_panels = self._allocate_floats(b, b.mul(rows, depth))
        b_panels = self._allocate_floats(b, b.mul(cols, depth))
        allocated = b.and_(b.icmp_unsigned("!=", a_panels, NULL),
                           b.icmp_unsigned("!=", b_panels, NULL))
        with b.if_else(allocated) as (packed, unpacked):
            with packed:
                b.call(blocked, [pointer, a_panels, b_panels])
            with unpacked:
                b.call(naive, [pointer])
        b.call(self.release, [a_panels])
        b.call(self.release, [b_panels])
        b.ret_void()
        return function

    def _allocate_floats(self, b, count):
        size = _round_up(b, b.mul(count, I64(4)), ALIGNMENT)
        return b.call(self.allocate, [I64(ALIGNMENT), size])

    def _define_scale(self):
        """void scale(ptr problem): C = beta * C (zeros when beta is 0, whatever C held),
        BLAS's answer when alpha or k is 0."""
        function, b = _function(self.module, "gemm.scale", VOID, [PTR])
        p = _load_problem(b, function.args[0])
        with Emitter(b).for_range(p["m"], name="i") as i:
            with Emitter(b).for_range(p["n"], name="j") as j:
                pointer = _element(b, p["c"], b.add(b.mul(i, p["c_rows"]), b.mul(j, p["c_cols"])))
                self._write_scalar(b, ir.Constant(F32, 0.0), pointer, ir.Constant(F32, 0.0),
                                   p["beta"])
        b.ret_void()
        return function

    # --- threads ----------------------------------------------------------------------------
    def _define_body(self):
        """i32 body(ptr shares, i64 worker, i64 end, ptr barrier), run by the pool: solves
        shares worker..end-1 (one, or all of them for a caller left alone)."""
        function, b = _function(self.module, "gemm.body", I32, [PTR, I64, I64, PTR])
        shares, worker, end, _ = function.args
        problem = _load_problem(b, b.gep(shares, [I32(0), I32(0)], source_etype=SHARES))
        axis = b.load(b.gep(shares, [I32(0), I32(1)], source_etype=SHARES), typ=I64)
        count = b.load(b.gep(shares, [I32(0), I32(2)], source_etype=SHARES), typ=I64)
        part = entry_alloca(b, PROBLEM, ALIGNMENT)
        with Emitter(b).for_range(b.sub(end, worker), name="share") as index:
            share = b.add(worker, index)
            on_rows = b.icmp_signed("==", axis, I64(SPLIT_ROWS))
            begin = self._share_bound(b, problem, on_rows, share, count)
            finish = self._share_bound(b, problem, on_rows, b.add(share, I64(1)), count)
            with b.if_then(b.icmp_signed("<", begin, finish)):
                _store_problem(b, _share(b, problem, on_rows, begin, finish), part)
                b.call(self.solve, [part])
        b.ret(I32(0))
        return function

    def _share_bound(self, b, problem, on_rows, share, count):
        """Where share `share` of `count` starts: in whole panels, a function of the
        shapes only."""
        size = b.select(on_rows, problem["m"], problem["n"])
        unit = b.select(on_rows, I64(self.tile.rows), I64(self.tile.cols))
        units = b.udiv(b.add(size, b.sub(unit, I64(1))), unit)
        start = b.mul(b.udiv(b.mul(share, units), count), unit)
        return _min(b, start, size)

    # --- the entry points -------------------------------------------------------------------
    def _define_entry_threads(self):
        function, b = _function(self.module, SGEMM_THREADS, VOID, cblas_type(I32).args,
                                internal=False)
        threads, *cblas = function.args
        self._checked_product(function, b, cblas,
                              lambda problem, shares: self._run(b, problem, shares,
                                                                b.sext(threads, I64)),
                              scales=ir.Constant(ir.IntType(1), 1))

    def _define_entry_shares(self):
        """SGEMM_SHARES: shares first..end-1 of a product cut into `count`, on this
        thread; every share computed once, by whichever thread, gives the product."""
        function, b = _function(self.module, SGEMM_SHARES, VOID,
                                cblas_type(I64, I64, I64).args, internal=False)
        first, end, count, *cblas = function.args

        def product(problem, shares):
            with b.if_else(self._worth_splitting(b, problem, count)) as (in_shares, whole):
                with in_shares:
                    self._plan_shares(b, problem, shares, count)
                    b.call(self.body, [shares, first, end, NULL])
                with whole:  # too small to split: share 0's owner computes it all
                    with b.if_then(b.icmp_signed("==", first, I64(0))):
                        b.call(self.solve, [b.gep(shares, [I32(0), I32(0)],
                                                  source_etype=SHARES)])
        self._checked_product(function, b, cblas, product,
                              scales=b.icmp_signed("==", first, I64(0)))

    def _checked_product(self, function, b, cblas, product, scales):
        """Return at once on arguments CBLAS rejects; when alpha or k is 0, only scale C
        (if `scales`, an i1: one caller does it); else product(problem, shares), shares
        holding the problem."""
        order, trans_a, trans_b, m, n, k, alpha, a, lda, b_, ldb, beta, c, ldc = cblas
        ignored = function.append_basic_block("invalid_or_empty")
        valid = _valid_arguments(b, order, trans_a, trans_b, m, n, k, lda, ldb, ldc)
        proceed = function.append_basic_block("proceed")
        b.cbranch(valid, proceed, ignored)
        b.position_at_end(ignored)
        b.ret_void()
        b.position_at_end(proceed)
        problem = self._problem(b, order, trans_a, trans_b, m, n, k, alpha, a, lda, b_, ldb,
                                beta, c, ldc)
        shares = entry_alloca(b, SHARES, ALIGNMENT)
        pointer = b.gep(shares, [I32(0), I32(0)], source_etype=SHARES)
        _store_problem(b, problem, pointer)
        only_scaled = b.or_(b.icmp_signed("==", problem["k"], I64(0)),
                            b.fcmp_ordered("==", alpha, ir.Constant(F32, 0.0)))
        with b.if_else(only_scaled) as (scaled, multiplied):
            with scaled:
                with b.if_then(scales):
                    b.call(self.scale, [pointer])
            with multiplied:
                product(problem, shares)
        b.ret_void()

    def _problem(self, b, order, trans_a, trans_b, m, n, k, alpha, a, lda, b_, ldb, beta, c,
                 ldc):
        """The arguments as strides, C's rows contiguous unless the transposed product
        pads far more (see the module's docstring)."""
        row_major = b.icmp_signed("==", order, I32(ROW_MAJOR))
        lda, ldb, ldc = (b.sext(ld, I64) for ld in (lda, ldb, ldc))
        one = I64(1)
        # Row-major op(A) untransposed: A[i, p] at i * lda + p; each transpose (of op or
        # of the order) swaps the two strides.
        a_plain = b.icmp_signed("==", trans_a, I32(NO_TRANSPOSE))
        b_plain = b.icmp_signed("==", trans_b, I32(NO_TRANSPOSE))
        a_rows_lda = b.icmp_unsigned("==", a_plain, row_major)
        b_depth_ldb = b.icmp_unsigned("==", b_plain, row_major)
        given = {
            "a": a, "a_rows": b.select(a_rows_lda, lda, one),
            "a_depth": b.select(a_rows_lda, one, lda),
            "b": b_, "b_depth": b.select(b_depth_ldb, ldb, one),
            "b_cols": b.select(b_depth_ldb, one, ldb),
            "c": c, "c_rows": b.select(row_major, ldc, one),
            "c_cols": b.select(row_major, one, ldc),
            "m": b.sext(m, I64), "n": b.sext(n, I64), "k": b.sext(k, I64),
            "alpha": alpha, "beta": beta}
        swapped = _transposed(given)
        natural = _select_problem(b, row_major, given, swapped)
        other = _select_problem(b, row_major, swapped, given)
        # Far fewer padded elements: at most two thirds as many.
        fewer = b.icmp_unsigned("<", b.mul(self._padded_area(b, other), I64(3)),
                                b.mul(self._padded_area(b, natural), I64(2)))
        return _select_problem(b, fewer, other, natural)

    def _padded_area(self, b, problem):
        return b.mul(_round_up(b, problem["m"], self.tile.rows),
                     _round_up(b, problem["n"], self.tile.cols))

    def _run(self, b, problem, shares, threads):
        """Solve on this thread, or in shares on the pool for a large enough product."""
        with b.if_else(self._worth_splitting(b, problem, threads)) as (pooled, alone):
            with pooled:
                self._plan_shares(b, problem, shares, threads)
                b.call(pool.declare_run(self.module), [self.body, shares, threads])
            with alone:
                b.call(self.solve, [b.gep(shares, [I32(0), I32(0)], source_etype=SHARES)])

    def _worth_splitting(self, b, problem, count):
        """An i1: more than one share and at least MIN_PARALLEL_FLOPS of work."""
        m, n, k = (b.uitofp(problem[name], F64) for name in "mnk")
        flops = b.fmul(b.fmul(b.fmul(m, n), k), ir.Constant(F64, 2.0))
        return b.and_(b.icmp_signed(">", count, I64(1)),
                      b.fcmp_ordered(">=", flops, ir.Constant(F64, float(MIN_PARALLEL_FLOPS))))

    def _plan_shares(self, b, problem, shares, count):
        """Record in `shares` the axis to cut (_split_columns) and the share count."""
        axis = b.select(self._split_columns(b, problem, count), I64(SPLIT_COLS),
                        I64(SPLIT_ROWS))
        b.store(axis, b.gep(shares, [I32(0), I32(1)], source_etype=SHARES))
        b.store(count, b.gep(shares, [I32(0), I32(2)], source_etype=SHARES))

    def _split_columns(self, b, problem, threads):
        """Whether to split C's columns rather than its rows: the split whose largest
        share computes fewer (padded) tiles, so that no thread waits long for another
        (512 x 512: 256 columns each, where rows go 264 and 252 in 12-row panels); if
        even, the larger dimension, whose share of packing is then the smaller."""
        tile = self.tile
        rows, cols = problem["m"], problem["n"]

        def largest_share(size, unit):
            units = _ceil_div(b, size, unit)
            return b.mul(b.udiv(b.add(units, b.sub(threads, I64(1))), threads), I64(unit))

        by_rows = b.mul(largest_share(rows, tile.rows), _round_up(b, cols, tile.cols))
        by_cols = b.mul(_round_up(b, rows, tile.rows), largest_share(cols, tile.cols))
        even = b.icmp_unsigned("==", by_rows, by_cols)
        return b.select(even, b.icmp_signed(">", cols, rows),
                        b.icmp_unsigned("<", by_cols, by_rows))

    def _define_entry(self):
        function, b = _function(self.module, SGEMM, VOID, cblas_type().args, internal=False)
        entry_threads = self.module.globals[SGEMM_THREADS]
        b.call(entry_threads, [I32(self.threads), *function.args])
        b.ret_void()


def _valid_arguments(b, order, trans_a, trans_b, m, n, k, lda, ldb, ldc):
    """What CBLAS accepts (flags it knows, sizes at least 0, each leading dimension at
    least the length of the stored rows, or columns, it steps over), and a non-empty C."""
    def among(value, *choices):
        result = ir.Constant(ir.IntType(1), 0)
        for choice in choices:
            result = b.or_(result, b.icmp_signed("==", value, I32(choice)))
        return result

    def covers(ld, plain, if_plain, otherwise):
        """ld >= max(1, length): the length is `if_plain` for a matrix that lies in rows
        (untransposed and row-major, or transposed and column-major)."""
        lies_in_rows = b.icmp_unsigned("==", plain, row_major)
        length = b.select(lies_in_rows, if_plain, otherwise)
        length = b.select(b.icmp_signed(">", length, I32(1)), length, I32(1))
        return b.icmp_signed(">=", ld, length)

    row_major = b.icmp_signed("==", order, I32(ROW_MAJOR))
    transposes = (NO_TRANSPOSE, TRANSPOSE, CONJUGATE_TRANSPOSE)
    flags = b.and_(among(order, ROW_MAJOR, COLUMN_MAJOR),
                   b.and_(among(trans_a, *transposes), among(trans_b, *transposes)))
    sizes = b.and_(b.icmp_signed(">", m, I32(0)),
                   b.and_(b.icmp_signed(">", n, I32(0)), b.icmp_signed(">=", k, I32(0))))
    true = ir.Constant(ir.IntType(1), 1)
    leading = b.and_(
        covers(lda, b.icmp_signed("==", trans_a, I32(NO_TRANSPOSE)), k, m),
        b.and_(covers(ldb, b.icmp_signed("==", trans_b, I32(NO_TRANSPOSE)), n, k),
               covers(ldc, true, n, m)))
    return b.and_(flags, b.and_(sizes, leading))


def _share(b, problem, on_rows, begin, end):
    """The part of `problem` that computes C's rows (or columns) begin..end-1."""
    p = problem
    a_offset = b.select(on_rows, b.mul(begin, p["a_rows"]), I64(0))
    b_offset = b.select(on_rows, I64(0), b.mul(begin, p["b_cols"]))
    c_offset = b.mul(begin, b.select(on_rows, p["c_rows"], p["c_cols"]))
    size = b.sub(end, begin)
    return dict(p, a=_element(b, p["a"], a_offset), b=_element(b, p["b"], b_offset),
                c=_element(b, p["c"], c_offset),
                m=b.select(on_rows, size, p["m"]), n=b.select(on_rows, p["n"], size))


def _transpose(b, rows):
    """The transpose of a square of vectors (lanes a power of two), by log2(lanes)
    rounds of interleaving row i with row i + lanes / 2. (Measured: no slower than
    x86's unpack-then-move-blocks order; packing is bound by its loads.)"""
    lanes = len(rows)
    half = lanes // 2
    low = ir.Constant(ir.VectorType(I32, lanes),
                      [lane // 2 + (lane % 2) * lanes for lane in range(lanes)])
    high = ir.Constant(ir.VectorType(I32, lanes),
                       [half + lane // 2 + (lane % 2) * lanes for lane in range(lanes)])
    for _ in range(lanes.bit_length() - 1):
        rows = [b.shuffle_vector(rows[i], rows[i + half], mask)
                for i in range(half) for mask in (low, high)]
    return rows


def declare_function(module, name, result, params):
    return ir.Function(module, ir.FunctionType(result, params), name)


def _function(module, name, result, params, internal=True):
    """A function to define (that never unwinds), and a builder at its start."""
    return define_function(module, name, result, params, internal, attributes=("nounwind",))


def _multiply_add(module, type, suffix):
    """x * y + z: one fused multiply-add where the CPU has them (every AVX2 and AVX-512
    CPU), a multiply and an add elsewhere, rather than llvm.fma's call to the C
    library's fmaf per lane. (declare_intrinsic cannot name overloads on vectors.)"""
    return declare_function(module, f"llvm.fmuladd.{suffix}", type, [type] * 3)


def _min(b, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


def _ceil_div(b, x, divisor):
    return b.udiv(b.add(x, I64(divisor - 1)), I64(divisor))


def _round_up(b, x, multiple):
    return b.mul(_ceil_div(b, x, multiple), I64(multiple))
