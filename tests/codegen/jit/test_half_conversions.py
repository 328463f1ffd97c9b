"""float16 on a target without F16C (plain x86-64): LLVM calls __extendhfsf2 and
__truncsfhf2 there, which jitflow compiles itself (a process lacking them crashed)."""
import os
import subprocess
import sys

PROGRAM = """
import numpy as np, jitflow
jitflow.config.background_compile = False
x = np.array([1.5, np.nan, -3e38, -0.0, 65519, 65520, 1e-7, -2.0**-24, 3e-8, 2.0**-14],
             np.float32)
h = x.astype(np.float16)
f = jitflow.function(lambda x, h, d: (x.astype(np.float16), np.max(h) + h, np.cumsum(h),
                                      d.astype(np.float16), h.astype(np.float64)))
for got, want in zip(f(x, h, x.astype(np.float64)),
                     (h, np.max(h) + h, np.cumsum(h), x.astype(np.float64).astype(np.float16),
                      h.astype(np.float64))):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")) or \\
        np.array_equal(got, want, equal_nan=True), (got, want)
print("same")
"""


def test_float16_compiles_and_runs_for_plain_x86_64():
    environment = dict(os.environ, JITFLOW_CPU="x86-64", JITFLOW_GRAPH_CACHE="0")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", PROGRAM], env=environment,
                          text=True, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "same" in done.stdout
