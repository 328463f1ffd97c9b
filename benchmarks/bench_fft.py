"""numpy.fft's transforms compiled by jitflow (native code's mixed-radix FFT, real
inputs as complex transforms of half the length) against NumPy's own pocketfft and, where installed, JAX's
(device arrays, compiled with jax.jit), on batches of signals. Prints each median time
over rounds, its range, and the ratios NumPy / jitflow and JAX / jitflow (above 1:
jitflow is faster). Results are checked to agree before timing; the calls alternate,
in rounds, so that drift hits all alike. Also a fused use: the power spectrum
|rfft(x)|^2 summed over a batch.

    python benchmarks/bench_fft.py
"""
import numpy as np

import jitflow
from peers import mean_time_per_call

ROUNDS = 7
BATCH_TIME = 0.05

CASES = {
    "fft": lambda xp, x: xp.fft.fft(x),
    "rfft": lambda xp, x: xp.fft.rfft(x.real),
    "irfft": lambda xp, x: xp.fft.irfft(x),
    "power spectrum": lambda xp, x: (xp.abs(xp.fft.rfft(x.real)) ** 2).sum(axis=0),
}
SHAPES = [(256, 64), (64, 1024), (8, 4096), (16, 1000)]  # (batch, n)


def jax_version(program):
    try:
        import jax
        import jax.numpy as jn
    except ImportError:
        return None, None
    jax.config.update("jax_enable_x64", True)
    return jax.jit(lambda x: program(jn, x)), jax.device_put


def main():
    rng = np.random.default_rng(0)
    print(f"{'transform':15} {'batch x n':>10} {'NumPy':>9} {'jitflow (range)':>22} "
          f"{'JAX':>9} {'NumPy/jf':>8} {'JAX/jf':>7}")
    for name, program in CASES.items():
        for batch, n in SHAPES:
            x = rng.standard_normal((batch, n)) + 1j * rng.standard_normal((batch, n))
            compiled = jitflow.function(lambda x: program(np, x))
            expected = program(np, x)
            np.testing.assert_allclose(compiled(x), expected, rtol=1e-9,
                                       atol=1e-9 * np.max(np.abs(expected)))
            jitted, put = jax_version(program)
            on_device = put(x) if put else None
            times = {"numpy": [], "jitflow": [], "jax": []}
            for _ in range(ROUNDS):
                times["numpy"].append(mean_time_per_call(lambda: program(np, x),
                                                         seconds=BATCH_TIME))
                times["jitflow"].append(mean_time_per_call(compiled, x, seconds=BATCH_TIME))
                if jitted is not None:
                    times["jax"].append(mean_time_per_call(
                        lambda: jitted(on_device).block_until_ready(), seconds=BATCH_TIME))
            mine = np.median(times["jitflow"])
            spread = f"{min(times['jitflow']) * 1e6:.0f}-{max(times['jitflow']) * 1e6:.0f}"
            jax_time = np.median(times["jax"]) if times["jax"] else float("nan")
            print(f"{name:15} {f'{batch}x{n}':>10} {np.median(times['numpy']) * 1e6:8.0f}u "
                  f"{mine * 1e6:9.0f}u ({spread:>9}) {jax_time * 1e6:8.0f}u "
                  f"{np.median(times['numpy']) / mine:8.2f} {jax_time / mine:7.2f}")


if __name__ == "__main__":
    main()
