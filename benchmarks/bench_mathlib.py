"""NumPy against mathlib's compiled loops, on each route, for every function and dtype.

    python benchmarks/bench_mathlib.py [n]

Each compiled kernel is the loop `out[i] = f(x[i])` (or `f(x[i], y[i])`) over n elements
(4M by default), single-threaded like NumPy, writing into a preallocated array as NumPy
does with `out=`. Times are the best of several runs, in milliseconds; "speedup" is
NumPy's time over the compiled loop's. NumPy has no logistic: its column is the stable
composite 1 / (1 + exp(-x)) written with NumPy (exp of -|x|, then a where).
"""
import ctypes
import sys
import time
from pathlib import Path

import llvmlite.ir as ir
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout
from jitflow.codegen.math import mathlib  # noqa: E402
from jitflow.codegen.jit import engine  # noqa: E402
from jitflow.codegen.jit.engine import CompiledModule  # noqa: E402

REPEATS = 7


def numpy_logistic(x, out):
    e = np.exp(-np.abs(x))
    np.divide(np.where(x < 0, e, 1), 1 + e, out=out)


def inputs(name, dtype, n, rng):
    """Arguments drawn where each function does its usual work."""
    uniform = lambda lo, hi: rng.uniform(lo, hi, n).astype(dtype)  # noqa: E731
    return {
        "exp": lambda: [uniform(-80, 80)], "expm1": lambda: [uniform(-10, 10)],
        "log": lambda: [np.exp(uniform(-30, 30))], "log1p": lambda: [uniform(-0.9, 10)],
        "tanh": lambda: [uniform(-10, 10)], "logistic": lambda: [uniform(-20, 20)],
        "sin": lambda: [uniform(-100, 100)], "cos": lambda: [uniform(-100, 100)],
        "tan": lambda: [uniform(-100, 100)],
        "pow": lambda: [uniform(0.01, 10), uniform(-8, 8)],
    }[name]()


def numpy_call(name):
    if name == "logistic":
        return numpy_logistic
    function = np.power if name == "pow" else getattr(np, name)
    return lambda *args: function(*args[:-1], out=args[-1])


def compile_kernels(dtype, route):
    """One module with a loop per function, emitted on `route`."""
    ftype = mathlib.F32 if dtype == np.float32 else mathlib.F64
    ptr, i64 = ir.PointerType(), ir.IntType(64)
    module = ir.Module(f"bench_{route}")
    mathlib.set_route(route)
    try:
        for name, arity in mathlib.ARITY.items():
            function = ir.Function(
                module, ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr, i64]), "k_" + name)
            x, y, out, n = function.args
            for pointer in (x, y, out):
                pointer.add_attribute("noalias")
            entry, loop, done = (function.append_basic_block(b)
                                 for b in ("entry", "loop", "done"))
            b = ir.IRBuilder(entry)
            b.cbranch(b.icmp_signed(">", n, i64(0)), loop, done)
            b.position_at_end(loop)
            i = b.phi(i64)
            i.add_incoming(i64(0), entry)
            args = [b.load(b.gep(p, [i], source_etype=ftype), typ=ftype) for p in (x, y)]
            value = mathlib.call(b, name, *args[:arity])
            b.store(value, b.gep(out, [i], source_etype=ftype))
            following = b.add(i, i64(1))
            i.add_incoming(following, loop)
            b.cbranch(b.icmp_signed("<", following, n), loop, done)
            b.position_at_end(done)
            b.ret_void()
    finally:
        mathlib.set_route(None)
    compiled = CompiledModule(module)
    signature = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3, ctypes.c_int64)
    kernels = {name: signature(compiled.address("k_" + name)) for name in mathlib.ARITY}
    return compiled, kernels


def best_time(run):
    run()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def compiled_call(kernel, args, out):
    x, y = args[0], args[-1]
    return lambda: kernel(x.ctypes.data, y.ctypes.data, out.ctypes.data, out.size)


def main(n=4_000_000):
    routes = ["inline"] + (["libmvec"] if engine.libmvec() is not None else [])
    triple, cpu, _ = engine.host()
    print(f"{n:,} elements, {cpu} ({triple}), best of {REPEATS}; NumPy {np.__version__}")
    header = f"{'function':<9} {'dtype':<7} {'numpy ms':>9}"
    for route in routes:
        header += f" {route + ' ms':>11} {'speedup':>7}"
    print(header)
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        compiled = {route: compile_kernels(dtype, route) for route in routes}
        for name in mathlib.ARITY:
            args = inputs(name, dtype, n, rng)
            out = np.empty(n, dtype)
            reference = best_time(lambda: numpy_call(name)(*args, out))
            row = f"{name:<9} {np.dtype(dtype).name:<7} {reference:9.2f}"
            for route in routes:
                elapsed = best_time(compiled_call(compiled[route][1][name], args, out))
                row += f" {elapsed:11.2f} {reference / elapsed:6.1f}x"
            if "libmvec" in routes and name == "logistic":
                row += " *"
            print(row)
    if "libmvec" in routes:
        print("* logistic has no libmvec variant: the libmvec route runs the inline code")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4_000_000)
