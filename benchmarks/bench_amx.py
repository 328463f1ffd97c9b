"""The tile unit's bfloat16 product (codegen/gemm/amx.py) against jitflow's float32 sgemm,
both on one thread, in the same process, on bench_gemm.py's shapes.

    python benchmarks/bench_amx.py [rounds]

"amx" is the whole product from float32 operands: both packed (rounded to bfloat16)
into buffers allocated once, then multiplied; "product" the multiplication alone, on
operands packed before. Each round times every case best-of-N (bench_gemm.best_time);
the table reports each one's best over the rounds, and sgemm's time over amx's (above
1: the tile unit is faster). Needs a CPU with AMX-BF16 (Intel Sapphire Rapids and
later).
"""
import sys

import numpy as np

from bench_gemm import SHAPES, best_over_rounds, jitflow_call, operands, row_heading
from jitflow.codegen.gemm import amx
from jitflow.codegen.gemm import sgemm as gemm
from peers import cpu_name


def round_up(size, multiple):
    return -(-size // multiple) * multiple


def amx_calls(op_a, op_b, c):
    """(whole product, multiplication alone) as no-argument callables."""
    pack_a, pack_b, product = amx.functions()
    (m, k), n = op_a.shape, op_b.shape[1]
    rows, depth, cols = round_up(m, 32), round_up(k, 32), round_up(n, 32)
    packed_a = np.empty(rows * depth, np.uint16)
    packed_b = np.empty(depth * cols, np.uint16)
    a_args = (op_a.ctypes.data, op_a.strides[0] // 4, op_a.strides[1] // 4, m, k,
              packed_a.ctypes.data, rows, depth)
    b_args = (op_b.ctypes.data, op_b.strides[0] // 4, op_b.strides[1] // 4, k, n,
              packed_b.ctypes.data, depth, cols)
    product_args = (packed_a.ctypes.data, packed_b.ctypes.data, depth, 0, m, m, n,
                    c.ctypes.data, n)
    held = (op_a, op_b, c, packed_a, packed_b)

    def whole(held=held):
        pack_a(*a_args)
        pack_b(*b_args)
        product(*product_args)
    return whole, lambda held=held: product(*product_args)


def main(rounds):
    if not amx.available():
        sys.exit("this CPU has no AMX-BF16 tile unit (or the kernel refused it)")
    print(f"CPU: {cpu_name()}, one thread")
    alone = gemm.sgemm_threads_function()
    rng = np.random.default_rng(0)
    cases = []
    for m, n, k, transpose_a, transpose_b, name in SHAPES:
        op_a, op_b, c = operands(m, n, k, transpose_a, transpose_b, rng)
        whole, product = amx_calls(op_a, op_b, np.empty_like(c))
        runs = {"sgemm": jitflow_call(alone, op_a, op_b, c, 1), "amx": whole,
                "product": product}
        cases.append((m, n, k, transpose_a, transpose_b, name, runs))
    best = best_over_rounds(cases, rounds)
    print(f"{'product':>10} {'m':>5} {'n':>5} {'k':>5} op  {'sgemm ms':>9} {'GFLOP/s':>7} "
          f"{'amx ms':>9} {'GFLOP/s':>7} {'product':>8} {'ratio':>6}")
    for case in cases:
        flops, name = 2 * case[0] * case[1] * case[2], case[5]
        ours, tiles, alone_product = (best[(name, label)]
                                      for label in ("sgemm", "amx", "product"))
        print(f"{row_heading(case)}  {ours * 1e3:9.4f} {flops / ours / 1e9:7.1f} "
              f"{tiles * 1e3:9.4f} {flops / tiles / 1e9:7.1f} "
              f"{flops / alone_product / 1e9:8.1f} {ours / tiles:6.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
