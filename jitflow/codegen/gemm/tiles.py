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


# 12 x 32 with AVX-512: 24 accumulators, 2 vectors of B and a broadcast of A among 32
# registers; the kernel then runs at 237 GFLOP/s on one Zen 5 core (its peak: two
# 16-lane FMAs a cycle). Per k it loads 128 bytes of B and 48 of A for 12 cycles of
# FMAs, little enough for L2 to supply: KC 512 (a 64 KiB B micro-panel, streamed from
# L2 rather than kept in the 48 KiB L1D) measured 0-5% faster than KC 256 (32 KiB, in
# L1) at 1024^3 and the MLP's shapes, as C is then read and written half as often.
# An A block (MC x KC, 384 KiB) stays in the 1 MiB L2; a B block (KC x NC, 4 MiB) in L3.
# A 6 x 64 tile (10 loads per 24 FMAs, not 14) took 0.93-0.99 of the time on one
# thread of an Intel Xeon (Emerald Rapids) and 0.91-0.97 on two over the MLP's, the
# transformer's and 1024^3 products, but 1.8 times as long for a convnet's weight
# gradients (9x16x4096 and 144x32x1024, A transposed), whose 16 or 32 columns it pads
# to 64, and 1.2-1.4 for its 1024x144x32 and 1024x32x144.
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
