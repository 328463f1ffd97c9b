"""Compiled functions called from several threads at once: each signature is traced
and built once, every thread gets NumPy's answer, and one thread's trace never records
another thread's operations."""
import threading

import numpy as np

import jitflow
import jitflow.numpy as jnp

THREADS = 8


def _in_threads(work, count=THREADS):
    """Run work(i) on `count` threads started together; re-raise the first error."""
    errors, start = [], threading.Barrier(count)

    def run(i):
        try:
            start.wait()
            work(i)
        except BaseException as error:  # noqa: BLE001 (handed to the main thread)
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def test_concurrent_first_calls_trace_each_signature_once(backend):
    @jitflow.function
    def affine(x):
        return x * 2 + 1

    lengths = (3, 4, 5, 6)

    def work(i):
        for _ in range(20):
            x = np.arange(lengths[i % len(lengths)], dtype=np.float32)
            np.testing.assert_array_equal(affine(x), x * 2 + 1)

    _in_threads(work)
    assert affine.cache_info().traces == len(lengths)


def test_traces_on_several_threads_record_only_their_own_operations(backend):
    def chain(scale):
        def fn(x):
            for _ in range(50):  # a long trace, so that the threads' traces overlap
                x = jnp.tanh(x) * scale
            return x
        return fn

    def reference(x, scale):
        for _ in range(50):
            x = np.tanh(x) * np.float32(scale)
        return x

    def work(i):
        step = jitflow.function(chain(i + 1))
        x = np.linspace(-1, 1, 7, dtype=np.float32)
        np.testing.assert_allclose(step(x), reference(x, i + 1), rtol=1e-5)
        # eager work on this thread while others trace stays eager
        assert isinstance(jnp.tanh(x), np.ndarray)

    _in_threads(work)


def test_a_method_called_from_threads_traces_once_per_instance(backend):
    class Scaled:
        def __init__(self, factor):
            self.factor = np.full(3, factor, np.float32)

        @jitflow.function
        def apply(self, x):
            return x * self.factor

    models = [Scaled(1.0), Scaled(2.0)]
    x = np.ones(3, np.float32)

    def work(i):
        model = models[i % 2]
        for _ in range(10):
            np.testing.assert_array_equal(model.apply(x), model.factor)

    _in_threads(work)
    assert [m.apply.cache_info().traces for m in models] == [1, 1]
