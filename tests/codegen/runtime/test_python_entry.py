"""The entry Python calls with the arrays themselves: the checked path's results, bit for
bit; a decline (FALLBACK) for any argument it was not compiled for; errors raised; no
references leaked."""
import concurrent.futures
import ctypes
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
from jitflow.codegen import FALLBACK
from jitflow.codegen import NativeGraph
from jitflow.codegen.runtime.python_entry import RELEASE_GIL_BYTES, SPARE_WORKSPACE
from strategies import DTYPES, arrays, shapes


def native_for(fn, *args):
    return NativeGraph(jitflow.optimize(jitflow.function(fn).trace(*args)), "f")


def same_bits(a, b):
    return type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype and \
        np.shape(a) == np.shape(b) and np.asarray(a).tobytes() == np.asarray(b).tobytes()


def three_results(x, y):
    return x * y, (x * y).sum(), x


def three_results_drawn(data, dtype, shape):
    """(NativeGraph of three_results, x, y) for two drawn arrays."""
    x = data.draw(arrays(dtype, shape))
    y = data.draw(arrays(dtype, shape))
    return native_for(three_results, x, y), x, y


@settings(max_examples=30, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(DTYPES), shape=shapes())
def test_results_are_the_checked_paths_bit_for_bit(data, dtype, shape):
    native, x, y = three_results_drawn(data, dtype, shape)
    checked = [out[()] if out.ndim == 0 else out for out in native([x, y])]
    direct = native.python_entry(x, y)
    assert type(direct) is tuple and len(direct) == 3
    for got, want in zip(direct, checked, strict=True):
        assert same_bits(got, want)
    assert direct[2] is not x  # a fresh array, never the input
    single = native_for(lambda x: x.sum(), x).python_entry(x)
    assert same_bits(single, np.asarray(native_for(lambda x: x.sum(), x)([x])[0])[()])


def declined_arguments():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    raw = np.zeros(6 * 8 + 1, np.uint8)
    misaligned = np.frombuffer(raw.data, np.float64, count=6, offset=1).reshape(2, 3)

    class Subclass(np.ndarray):
        pass
    return {
        "too few": (x,), "too many": (x, x, x), "a list": (x.tolist(), x),
        "a scalar": (x, 2.0), "float32": (x.astype(np.float32), x),
        "int64": (x.astype(np.int64), x), "byte-swapped": (x.astype(">f8"), x),
        "rank 1": (x.reshape(6), x), "rank 3": (x.reshape(1, 2, 3), x),
        "transposed shape": (x.reshape(3, 2), x), "reversed": (x[:, ::-1], x),
        "non-contiguous": (np.arange(12.0).reshape(2, 6)[:, ::2], x),
        "misaligned": (misaligned, x), "a subclass": (x.view(Subclass), x),
    }


@pytest.mark.parametrize("case", list(declined_arguments()))
def test_arguments_not_compiled_for_are_declined(case):
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    native = native_for(lambda a, b: a * b + 1, x, x)
    args = declined_arguments()[case]
    assert native.python_entry(*args) == FALLBACK
    assert native.python_entry_into(*args, np.empty((2, 3))) == FALLBACK


def test_the_function_takes_the_checked_path_when_declined():
    f = jitflow.function(lambda a, b: a * b + 1)
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    for _ in range(3):
        np.testing.assert_array_equal(f(x, x), x * x + 1)
    assert f._direct is not None
    for args in declined_arguments().values():
        if len(args) == 2 and not isinstance(args[1], float):
            a = np.asarray(args[0])
            if a.shape == x.shape and a.dtype.isnative:
                np.testing.assert_array_equal(f(a, x), a * x + 1)


def test_signatures_called_in_turn_each_run_natively():
    f = jitflow.function(lambda a: a * 2)
    small, large = np.arange(4.0), np.arange(9.0)
    for _ in range(3):
        np.testing.assert_array_equal(f(small), small * 2)
        np.testing.assert_array_equal(f(large), large * 2)
    info = f.cache_info()
    assert info.traces == 2 and info.hits == 4


def test_errors_are_raised_with_the_functions_name():
    f = jitflow.function(lambda table, index: table[index] * 2)
    table, index = np.arange(5.0), np.array([1, 4])
    for _ in range(3):
        np.testing.assert_array_equal(f(table, index), table[index] * 2)
    assert f._direct is not None
    with pytest.raises(IndexError, match="<lambda>: an index is out of bounds"):
        f(table, np.array([1, 5]))


def test_no_reference_is_leaked():
    x, index, bad = np.arange(8, dtype=np.float32), np.array([0]), np.array([9])
    native = native_for(three_results, x, x)
    failing = native_for(lambda t, i: t[i], x, index)
    counts = (x, bad, x.dtype, np.ndarray)
    before = [sys.getrefcount(obj) for obj in counts]
    for _ in range(1000):
        results = native.python_entry(x, x)
        assert failing.python_entry(x, bad) > 0  # an error: its output is released
    held = sys.getrefcount(results[0])  # (not inside the assert: pytest keeps a copy)
    assert held == 2  # by the tuple only (and the call)
    del results
    assert [sys.getrefcount(obj) for obj in counts] == before


def test_python_scalars_keep_the_checked_path():
    native = native_for(lambda x, s: x * s, np.arange(3.0), 2.0)
    assert native.python_entry is None
    native = native_for(lambda x: (x, 2.0), np.arange(3.0))
    assert native.python_entry is None


def test_large_graphs_release_the_gil():
    elements = RELEASE_GIL_BYTES // 8
    large = native_for(lambda x: x + 1, np.zeros(elements))
    small = native_for(lambda x: x + 1, np.zeros(elements // 4))
    assert releases_gil(large) and not releases_gil(small)
    assert same_bits(large.python_entry(np.ones(elements)), np.ones(elements) + 1)


def test_the_entry_code_is_shared_between_signatures():
    # Each signature's entry is a table and a call of the code all signatures share.
    args = [np.ones((2, 3), np.float32)] * 8
    native = native_for(lambda *a: tuple(x + 1 for x in a), *args)
    results = native.python_entry(*args)
    assert len(results) == 8 and all(same_bits(r, args[0] + 1) for r in results)
    entry = re.search(r'define ptr @"jitflow_python_call"\(.*?\n\}', native.llvm_ir, re.S)
    assert entry.group(0).count("\n") == 5 and "jitflow_python_call_with" in entry.group(0)


def with_workspace(x):
    # The matmul's result is a real intermediate: it lives in the workspace.
    return np.tanh(x @ x.T).sum(axis=0)


def spare_workspace(native):
    address = native.compiled.global_address(SPARE_WORKSPACE)
    return ctypes.c_void_p.from_address(address).value


def test_calls_reuse_one_workspace_instead_of_allocating_each_time():
    x = np.arange(64.0).reshape(8, 8) / 64
    native = native_for(with_workspace, x)
    assert native.workspace_size > 0 and spare_workspace(native) is None
    expected = with_workspace(x)
    np.testing.assert_allclose(native.python_entry(x), expected, rtol=1e-12)
    kept = spare_workspace(native)
    assert kept is not None
    np.testing.assert_allclose(native.python_entry(x), expected, rtol=1e-12)
    assert spare_workspace(native) == kept
    # the checked path keeps its own
    native([x])
    first = native._spare_workspaces[0].ctypes.data
    native([x])
    assert [w.ctypes.data for w in native._spare_workspaces] == [first]


def test_concurrent_calls_each_get_a_workspace_of_their_own():
    # Large enough that the entry releases the GIL: the calls really overlap.
    x = np.random.default_rng(0).standard_normal((256, 256))
    native = native_for(with_workspace, x)
    expected = native.python_entry(x)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: native.python_entry(x), range(64)))
    assert all(same_bits(r, expected) for r in results)


def releases_gil(native):
    """The flag in the signature's table (python_call.py): inputs, outputs, workspace
    bytes, then whether to release the GIL."""
    table = re.search(r'@"jitflow_signature" = internal constant .*?\]\} '
                      r'\{i64 \d+, i64 \d+, i64 \d+, i64 (\d),', native.llvm_ir)
    return table.group(1) == "1"


def test_arguments_in_containers_go_to_native_code_by_their_leaves():
    f = jitflow.function(lambda p, x: ({k: v * x for k, v in p[0].items()}, p[1] + 1))
    params = ({"a": np.arange(3.0), "b": np.ones(3)}, np.arange(3, dtype=np.int32))
    x = np.full(3, 2.0)
    for _ in range(3):
        scaled, shifted = f(params, x)
        np.testing.assert_array_equal(scaled["a"], params[0]["a"] * x)
        np.testing.assert_array_equal(shifted, params[1] + 1)
    assert f.cache_info().hits == 2 and f._direct is None  # only flat calls go direct


def test_a_container_of_one_array_is_not_taken_for_the_array():
    f = jitflow.function(lambda p, x: p[0] * x)
    a, x = np.arange(6.0).reshape(2, 3), np.ones(3)
    for _ in range(3):
        np.testing.assert_array_equal(f((a,), x), a * x)
    for _ in range(3):
        np.testing.assert_array_equal(f(a, x), a[0] * x)
    for _ in range(2):
        np.testing.assert_array_equal(f((a,), x), a * x)
    assert f.cache_info().traces == 2


@pytest.mark.parametrize("fn, x", [
    (lambda x: (x * 2,), np.ones((1, 16, 4))),   # not iterated: (16, 4) for (1, 16, 4)
    (lambda x: [x.sum()], np.ones(3)),            # not iterated: a NumPy scalar
    (lambda x: {"a": x + 1}, np.ones(1)),         # not iterated: () for (1,)
    (lambda x: (x[:0],), np.ones((2, 3))),        # not iterated: nothing for (0, 3)
    (lambda x: None, np.ones(2)),                 # not () for no results
    (lambda x: (), np.ones(2))])
def test_a_container_of_one_result_is_rebuilt_around_it(fn, x):
    # The entry returns a single result bare; the repeated calls that take it must put
    # it back in its container.
    f = jitflow.function(fn)
    expected = fn(x)
    for _ in range(3):
        got = f(x)
        assert type(got) is type(expected)
        for g, e in zip(jitflow.pytree.flatten(got)[0], jitflow.pytree.flatten(expected)[0],
                        strict=True):
            assert same_bits(g, e)
    assert f.cache_info().hits == 2


def test_an_output_too_large_for_memory_raises_memory_error_and_jitflow_goes_on():
    # in a process of its own, whose address space is limited below the output's size
    script = textwrap.dedent("""
        import resource
        import numpy as np
        import jitflow
        import jitflow.numpy as jnp
        jitflow.config.background_compile = False
        big = jitflow.function(lambda x: jnp.broadcast_to(x, (60000, 60000)) * 2)
        big.lower(np.ones(1, np.float32))  # compiled before the limit
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, hard))
        try:
            big(np.ones(1, np.float32))
        except MemoryError:
            print("MemoryError")
        print(jitflow.function(lambda x: x + 1)(np.ones(2)).tolist())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["MemoryError", "[2.0,", "2.0]"]


# --- outputs passed in (out=) -----------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(DTYPES), shape=shapes())
def test_outputs_passed_in_get_the_fresh_results_bits(data, dtype, shape):
    native, x, y = three_results_drawn(data, dtype, shape)
    fresh = native.python_entry(x, y)
    outs = [np.empty(np.shape(r), np.asarray(r).dtype) for r in fresh]
    results = native.python_entry_into(x, y, *outs)
    assert type(results) is tuple and len(results) == 3
    for result, out in zip(results, outs):  # (0-d ones come back as NumPy scalars)
        assert result is out or (out.ndim == 0 and same_bits(result, out[()]))
    for out, want in zip(outs, fresh, strict=True):
        assert np.asarray(want).tobytes() == out.tobytes()


def declined_outputs():
    """Outputs for three_results(x, x), x float64[2, 3], that the entry must decline."""
    x = np.arange(6.0).reshape(2, 3)
    fine = [np.empty((2, 3)), np.empty(()), np.empty((2, 3))]
    read_only = np.empty((2, 3))
    read_only.flags.writeable = False
    buffer = np.empty(12)
    return x, fine, {
        "too few": fine[:2], "none": [], "float32": [fine[0].astype(np.float32), *fine[1:]],
        "shape": [np.empty((3, 2)), *fine[1:]], "read-only": [read_only, *fine[1:]],
        "non-contiguous": [np.empty((2, 6))[:, ::2], *fine[1:]],
        "the argument itself": [x, *fine[1:]],
        "overlapping the argument": [np.lib.stride_tricks.as_strided(
            x.reshape(6)[1:], (2, 3), x.strides), *fine[1:]],
        "overlapping another output": [buffer[:6].reshape(2, 3), fine[1],
                                       buffer[5:11].reshape(2, 3)],
        "the same output twice": [fine[0], fine[1], fine[0]],
    }


@pytest.mark.parametrize("case", list(declined_outputs()[2]))
def test_outputs_it_cannot_write_are_declined_untouched(case):
    x, _, cases = declined_outputs()
    native = native_for(three_results, x, x)
    outs = cases[case]
    before = [out.copy() for out in outs]
    counts = [sys.getrefcount(out) for out in outs]
    assert native.python_entry_into(x, x, *outs) == FALLBACK
    assert [sys.getrefcount(out) for out in outs] == counts
    for out, kept in zip(outs, before):
        assert out.tobytes() == kept.tobytes()


def update(w, g):
    total = (w * g).sum()  # read first: the update may be written over w or g
    return w - 0.5 * g, total


@pytest.mark.parametrize("target, taken", [
    (lambda w, g: w, True),                   # the very buffer it may be written over
    (lambda w, g: g, False),                  # allowed, but only one argument is
    (lambda w, g: np.lib.stride_tricks.as_strided(w.reshape(-1)[1:], w.shape, w.strides),
     False),                                  # one ahead: each write meets a later read
])
def test_an_output_is_taken_over_an_argument_only_as_the_buffer_it_may_write(target,
                                                                             taken):
    w, g = np.arange(8.0).reshape(2, 4), np.linspace(0, 1, 8).reshape(2, 4)
    native = native_for(update, w, g)
    assert native.in_place == {0: {0, 1}}
    out = target(w, g)
    total = np.empty(())
    before, expected = out.copy(), update(w.copy(), g.copy())
    result = native.python_entry_into(w, g, out, total)
    if not taken:
        assert result == FALLBACK
        assert out.tobytes() == before.tobytes()
        return
    assert result[0] is out
    np.testing.assert_array_equal(w, expected[0])
    np.testing.assert_allclose(total, expected[1], rtol=1e-12)


def test_outputs_next_to_the_arguments_and_empty_ones_are_taken():
    buffer = np.arange(12.0)
    x, out = buffer[:6].reshape(2, 3), buffer[6:].reshape(2, 3)  # adjacent, not shared
    native = native_for(lambda a: (a + 1, a[:0] * 2), x)
    empty = np.empty((0, 3))
    results = native.python_entry_into(x, out, empty)
    assert results[0] is out and results[1] is empty
    np.testing.assert_array_equal(out, np.arange(6.0).reshape(2, 3) + 1)


def test_outputs_passed_in_leak_no_reference():
    x, _, _ = declined_outputs()
    native = native_for(three_results, x, x)
    outs = [np.empty((2, 3)), np.empty(()), np.empty((2, 3))]
    failing = native_for(lambda t, i: t[i], x[0], np.array([0]))
    counts = [sys.getrefcount(out) for out in outs]
    for _ in range(1000):
        native.python_entry_into(x, x, *outs)
        assert failing.python_entry_into(x[0], np.array([9]), np.empty(1)) > 0
    assert [sys.getrefcount(out) for out in outs] == counts


def test_large_outputs_passed_in_go_direct_though_fresh_ones_are_pooled():
    x = np.arange(1 << 20, dtype=np.float64)  # an 8 MiB result: from the output pool
    native = native_for(lambda a: a * 2, x)
    assert native.python_entry is None
    out = np.empty_like(x)
    assert native.python_entry_into(x, out) is out
    np.testing.assert_array_equal(out, x * 2)
