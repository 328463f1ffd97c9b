"""The shapes jitflow's sgemm (sgemm_ir.py) is built for: the micro-kernel's tile of C and
the cache blocks around it, and which of them suits the host's CPU."""
import collections


class Tile(collections.namedtuple("Tile", "rows vectors lanes depth block_rows block_cols")):
    """The micro-kernel's tile of C: `rows` (MR) rows of `vectors` vectors of `lanes`
    floats (NR = vectors * lanes columns); and the cache blocks: K in blocks of at most
    `depth` (KC), C in blocks of `block_rows` (MC) by `block_cols` (NC)."""

    @property
    def cols(self):
        return self.vectors * self.lanes


# 6 x 64 with AVX-512: 24 accumulators, 4 vectors of B and a broadcast of A among 32
# registers. Per k it loads 256 bytes of B and 6 floats of A for 12 cycles of FMAs: 10
# loads where the 12 x 32 tile made 14. On an Intel Xeon (Emerald Rapids), paired with
# 12 x 32 over the MLP's, the transformer's and 1024^3 products, it took 0.93-0.99 of
# the time on one thread and 0.91-0.97 on two; 1.03-1.06 at 300x257x129, whose 257
# columns pad to 320 where 12 x 32 pads them to 288. 12 x 32
# ran at 237 GFLOP/s on one Zen 5 core (its peak: two 16-lane FMAs a cycle); 6 x 64 was
# not measured there. KC 512 (a 128 KiB B micro-panel, streamed from L2, while the
# 12 KiB A micro-panel stays in L1) measured as fast as 256 and 384 on the Xeon, and
# reads and writes C half as often. An A block (MC x KC, 384 KiB) stays in L2 (1-2 MiB);
# a B block (KC x NC, 4 MiB) in L3.
AVX512_TILE = Tile(rows=6, vectors=4, lanes=16, depth=512, block_rows=192, block_cols=2048)
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
