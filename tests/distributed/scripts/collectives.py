"""The collectives against NumPy on every rank: eager, interpreted, native, under vmap,
and their errors. Each rank's operand is made from its rank, so every rank can compute
the NumPy reference over all of them."""
import numpy as np

import jitflow
import jitflow.distributed as dist

jitflow.config.background_compile = False
rank, size = dist.rank(), dist.size()


def operand(r, dtype, shape):
    rng = np.random.default_rng(100 + r)
    values = rng.integers(-50, 50, shape) if np.dtype(dtype).kind == "i" else \
        rng.standard_normal(shape)
    return np.asarray(values, dtype)


def everyone(dtype, shape):
    return [operand(r, dtype, shape) for r in range(size)]


def references(dtype, shape):
    xs = np.stack(everyone(dtype, shape))
    gathered = np.concatenate([x.reshape((-1,) + shape[1:]) if shape else x[None]
                               for x in xs])
    scatter_rows = (shape[0] // size) if shape and shape[0] % size == 0 else None
    expected = {
        "sum": xs.sum(0, dtype=dtype), "mean": xs.mean(0), "max": xs.max(0),
        "min": xs.min(0), "gather": gathered, "broadcast": xs[size - 1],
    }
    if scatter_rows is not None:
        expected["scatter"] = xs.sum(0, dtype=dtype)[rank * scatter_rows:
                                                     (rank + 1) * scatter_rows]
    return expected


def collectives(x, with_scatter):
    results = {op: dist.all_reduce(x, op) for op in ("sum", "mean", "max", "min")}
    results["gather"] = dist.all_gather(x)
    results["broadcast"] = dist.broadcast(x, root=size - 1)
    if with_scatter:
        results["scatter"] = dist.reduce_scatter(x)
    return results


def check(results, expected, how):
    assert results.keys() == expected.keys(), (how, results.keys())
    for name, value in results.items():
        value, want = np.asarray(value), expected[name]
        assert value.dtype == want.dtype and value.shape == want.shape, \
            (how, name, value.dtype, want.dtype, value.shape, want.shape)
        np.testing.assert_allclose(value, want, rtol=1e-6 if want.dtype == np.float32
                                   else 1e-12, err_msg=f"{how} {name}")


for dtype in (np.float32, np.float64, np.int32, np.int64):
    for shape in ((), (4,), (2 * size, 3)):
        x, expected = operand(rank, dtype, shape), references(dtype, shape)
        with_scatter = "scatter" in expected
        check(collectives(x, with_scatter), expected, f"eager {dtype} {shape}")
        for backend in ("interpreter", "native"):
            jitflow.config.backend = backend
            step = jitflow.function(lambda x: collectives(x, with_scatter))
            check(step(x), expected, f"{backend} {dtype} {shape}")
            check(step(x), expected, f"{backend} again {dtype} {shape}")
jitflow.config.backend = "native"

# A strided operand (a transposed view) and a constant one go through copies.
x = operand(rank, np.float64, (3, 4))
step = jitflow.function(lambda x: (dist.all_reduce(x.T), dist.all_reduce(np.ones(3))))
summed, ones = step(x)
np.testing.assert_allclose(summed, sum(everyone(np.float64, (3, 4))).T, rtol=1e-12)
np.testing.assert_array_equal(ones, np.full(3, size, np.float64))

# Inside compiled loops (bodies compiled apart, called from the caller's code), once per
# iteration; and on operands large enough for their copies to be split between threads.
loop = jitflow.function(lambda c: jitflow.fori_loop(
    0, 3, lambda i, c: dist.all_reduce(c) / size + i, c))
np.testing.assert_allclose(loop(np.full(2, rank + 1.0)), np.full(2, (size + 1) / 2 + 3))
scanned = jitflow.function(lambda xs: jitflow.scan(
    lambda c, x: (c + dist.all_reduce(x), c), np.zeros(2), xs))
total, partial = scanned(np.full((4, 2), rank + 1.0))
whole = size * (size + 1) / 2
np.testing.assert_allclose(partial[:, 0], whole * np.arange(4))
np.testing.assert_allclose(total, np.full(2, 4 * whole))
big = np.arange(600 * 500, dtype=np.float64).reshape(600, 500)
sent, summed = jitflow.function(lambda x: (dist.broadcast(x * 2, root=size - 1),
                                           dist.all_reduce(x.T)))(big + rank)
np.testing.assert_array_equal(sent, (big + size - 1) * 2)
np.testing.assert_allclose(summed, (size * big + whole - size).T)

# NaN on one rank makes max and min NaN there, as np.max over the ranks.
x = np.array([1.0, 2.0, np.nan if rank == 0 else 3.0], np.float32)
for op in ("max", "min"):
    eager = lambda x: dist.all_reduce(x, op)  # noqa: E731
    for run in (eager, jitflow.function(eager)):
        np.testing.assert_array_equal(run(x), [1.0, 2.0, np.nan])

# vmap: each batch element is reduced or gathered on its own.
batch = np.stack([operand(rank, np.float32, (2 * size, 3)) + k for k in range(3)])
every = [np.stack([operand(r, np.float32, (2 * size, 3)) + k for k in range(3)])
         for r in range(size)]
for vmapped in (jitflow.vmap(lambda x: collectives(x, True)),
                jitflow.function(jitflow.vmap(lambda x: collectives(x, True)))):
    results = vmapped(batch)
    np.testing.assert_allclose(results["sum"], sum(every), rtol=1e-5)
    np.testing.assert_allclose(results["gather"], np.concatenate(every, axis=1), rtol=1e-6)
    np.testing.assert_allclose(results["scatter"], sum(every)[:, 2 * rank:2 * rank + 2],
                               rtol=1e-5)
    np.testing.assert_allclose(results["broadcast"], every[size - 1], rtol=1e-6)
# all_reduce as a start and a wait (DistributedOptimizer's), batched the same way.
for vmapped in (jitflow.vmap(dist.collectives.all_reduce_overlapped),
                jitflow.function(jitflow.vmap(dist.collectives.all_reduce_overlapped))):
    np.testing.assert_allclose(vmapped(batch), sum(every), rtol=1e-5)
scalars = jitflow.vmap(dist.all_gather)(np.arange(3.0) + 10 * rank)
np.testing.assert_array_equal(scalars, np.stack([np.arange(3.0) + 10 * r
                                                 for r in range(size)], axis=1))


def raises(kind, words, fn, *args):
    try:
        fn(*args)
    except kind as error:
        assert all(w in str(error) for w in words), str(error)
    else:
        raise AssertionError(f"no {kind.__name__} for {words}")


raises(TypeError, ["all_reduce", "bool"], dist.all_reduce, np.array([True]))
raises(ValueError, ["all_reduce", "'prod'"], dist.all_reduce, np.ones(2), "prod")
raises(ValueError, ["broadcast", "root"], dist.broadcast, np.ones(2), size)
uneven = np.ones(2 * size + 1) if size > 1 else np.array(1.0)
raises(ValueError, ["reduce_scatter", "split evenly"], dist.reduce_scatter, uneven)
raises(ValueError, ["reduce_scatter", "split evenly"],
       jitflow.function(dist.reduce_scatter), uneven)
print(f"rank {rank} done")
