"""jitflow.debug.print and jitflow.debug.callback: Python called on runtime values,
eagerly, in the interpreter and from native code, in program order, every call."""
import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp
from jitflow.ir.passes import optimize
from tests_support import golden


def lines(capsys):
    return capsys.readouterr().out.splitlines()


# --- order, formatting, every call --------------------------------------------------------

def test_prints_in_program_order_on_every_call(backend, capsys):
    @jitflow.function
    def f(x):
        y = x * 2
        jitflow.debug.print("y {} total={total:.1f}", y, total=y.sum())
        jitflow.debug.print("x+1 {}", x + 1)
        return y + 1

    for _ in range(2):
        np.testing.assert_array_equal(f(np.arange(3.0)), [1.0, 3.0, 5.0])
        assert lines(capsys) == ["y [0. 2. 4.] total=6.0", "x+1 [1. 2. 3.]"]


def test_eagerly_the_values_are_printed_at_once(capsys):
    jitflow.debug.print("{} and {name}", np.arange(2), name=3)
    assert lines(capsys) == ["[0 1] and 3"]


def test_callback_gets_values_of_their_own_dtype_shape_and_pytree(backend):
    seen = []

    @jitflow.function
    def f(x, n, flag):
        jitflow.debug.callback(lambda *a, **k: seen.append((a, k)), x.T, n + 1, "tag",
                               extras={"flag": flag, "c": 2.5,
                                       "ones": np.ones(2, np.float32)})
        return x

    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    f(x, np.int64(4), np.array([True, False]))
    ((args, kwargs),) = seen
    (xt, n, tag), extras = args, kwargs["extras"]
    flag, c, ones = extras["flag"], extras["c"], extras["ones"]
    np.testing.assert_array_equal(xt, x.T)
    assert xt.dtype == np.int32 and xt.shape == (3, 2)
    assert n == 5 and np.asarray(n).dtype == np.int64 and tag == "tag"
    assert flag.dtype == np.bool_ and flag.tolist() == [True, False]
    assert c == 2.5 and isinstance(c, float)  # a Python number stays one
    assert ones.dtype == np.float32 and ones.tolist() == [1.0, 1.0]


def test_constant_operands_are_not_printed_at_compile_time(backend, capsys):
    @jitflow.function
    def f(x):
        jitflow.debug.print("constant {}", jnp.ones(2) * 3)
        return x + 1
    f(np.float64(1.0))
    f(np.float64(2.0))
    assert lines(capsys) == ["constant [3. 3.]"] * 2


def test_a_large_result_is_printed_once_whole(backend):
    # large enough that native code splits its loops between threads
    seen = []

    @jitflow.function
    def f(x):
        y = jnp.exp(x) + 1
        jitflow.debug.callback(seen.append, y)
        return y * 2

    x = np.linspace(0, 1, 1 << 18)
    np.testing.assert_allclose(f(x), (np.exp(x) + 1) * 2, rtol=1e-12)
    (y,) = seen
    np.testing.assert_allclose(y, np.exp(x) + 1, rtol=1e-12)


# --- passes keep every print --------------------------------------------------------------

def test_dce_and_cse_keep_every_print(backend, capsys):
    def f(x):
        unused = x * 3
        jitflow.debug.print("v {}", unused)
        jitflow.debug.print("v {}", unused)  # the same op, operands and text: still two
        return x

    graph = optimize(jitflow.function(f).trace(np.arange(2.0)))
    assert [n.op for n in graph.nodes].count("debug_callback") == 2
    jitflow.function(f)(np.arange(2.0))
    assert lines(capsys) == ["v [0. 3.]"] * 2


def test_the_optimized_graph_keeps_prints_in_order_with_their_operands():
    def f(x):
        jitflow.debug.print("a {}", x * 3)
        jitflow.debug.print("b {}", x * 3)  # x * 3 is shared; the prints are not
        jitflow.debug.print("c {}", 1 + 2)  # folded operands, but printed at run time
        return x
    graph = optimize(jitflow.function(f).trace(np.arange(2.0)))
    assert str(graph) == golden("""
        graph(%0: f64[2]) {
          %1: f64[2] = mul %0, 3:~i64[]
          debug_callback %1, callback=print 'a {}'
          debug_callback %1, callback=print 'b {}'
          debug_callback 3:~i64[], callback=print 'c {}'
          return %0
        }""")


def test_a_loop_whose_results_are_unused_still_prints(backend, capsys):
    @jitflow.function
    def f(x):
        def body(i):
            jitflow.debug.print("i {}", i)
            return i + 1
        jitflow.while_loop(lambda i: i < 2, body, 0)
        return x

    f(np.float64(1.0))
    assert lines(capsys) == ["i 0", "i 1"]


def test_fusion_does_not_cross_a_print(capsys):
    def f(x):
        b = jnp.exp(x) * 3
        jitflow.debug.print("b {}", b)
        return b + (jnp.sin(x) + 1)
    graph = jitflow.function(f).lower(np.arange(3.0)).graph_ir()
    assert str(graph) == golden("""
        graph(%0: f64[3]) {
          %1: f64[3] = fused %0
            subgraph0(%2: f64[3]) {
              %3: f64[3] = exp %2
              %4: f64[3] = mul %3, 3:~i64[]
              return %4
            }
          debug_callback %1, callback=print 'b {}'
          %5: f64[3] = fused %0, %1
            subgraph0(%6: f64[3], %7: f64[3]) {
              %8: f64[3] = sin %6
              %9: f64[3] = add %8, 1:~i64[]
              %10: f64[3] = add %7, %9
              return %10
            }
          return %5
        }""")


def test_a_print_before_a_failing_operation_is_printed(backend, capsys):
    @jitflow.function
    def f(x, y):
        jitflow.debug.print("x+1 {}", x + 1)
        return (x + 1) ** y  # NumPy refuses negative integer powers of integers

    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.arange(3), np.int64(-1))
    assert lines(capsys) == ["x+1 [1 2 3]"]


def test_a_print_after_a_failed_operation_is_not_printed(backend, capsys):
    @jitflow.function
    def f(x, y):
        z = (x + 1) ** y  # fails first, as in NumPy
        jitflow.debug.print("z {}", z)
        return z

    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.arange(3), np.int64(-1))
    assert lines(capsys) == []


# --- control flow -------------------------------------------------------------------------

def test_prints_each_trip_of_while_loop_and_scan(backend, capsys):
    @jitflow.function
    def f(x):
        def body(carry):
            i, v = carry
            jitflow.debug.print("while {} {}", i, v)
            return i + 1, v * 2

        def step(total, row):
            jitflow.debug.print("scan {} {}", total, row)
            return total + row.sum(), total

        _, v = jitflow.while_loop(lambda c: c[0] < 3, body, (0, x))
        total, _ = jitflow.scan(step, np.float64(0), jnp.reshape(jnp.arange(4.0), (2, 2)))
        return v, total

    v, total = f(np.float32(1.5))
    assert (float(v), float(total)) == (12.0, 6.0)
    assert lines(capsys) == ["while 0 1.5", "while 1 3.0", "while 2 6.0",
                             "scan 0.0 [0. 1.]", "scan 1.0 [2. 3.]"]


def test_only_the_branch_taken_prints(backend, capsys):
    @jitflow.function
    def f(x):
        def yes(v):
            jitflow.debug.print("yes {}", v)
            return v + 1

        def no(v):
            jitflow.debug.print("no {}", v)
            return v - 1
        return jitflow.cond(x > 0, yes, no, x)

    assert float(f(np.float64(2.0))) == 3.0
    assert float(f(np.float64(-2.0))) == -3.0
    assert lines(capsys) == ["yes 2.0", "no -2.0"]


# --- transforms ---------------------------------------------------------------------------

def loss(w):
    jitflow.debug.print("w {}", w)
    return jnp.sum(w * w)


def test_under_grad_the_primal_values_are_printed(backend, capsys):
    w = np.array([1.0, -2.0])
    np.testing.assert_array_equal(jitflow.function(jitflow.grad(loss))(w), 2 * w)
    np.testing.assert_array_equal(jitflow.grad(loss)(w), 2 * w)  # eagerly
    assert lines(capsys) == ["w [ 1. -2.]"] * 2


def test_under_jvp_the_primal_values_are_printed(backend, capsys):
    w = np.array([1.0, -2.0])
    _, tangent = jitflow.function(lambda w, t: jitflow.jvp(loss, (w,), (t,)))(w, np.ones(2))
    assert float(tangent) == -2.0
    assert lines(capsys) == ["w [ 1. -2.]"]


def looped(w):
    def body(carry):
        i, v = carry
        jitflow.debug.print("while {} {}", i, v)
        return i + 1, v * w

    def step(c, x):
        jitflow.debug.print("scan {} {}", c, x)
        return c * x, c

    def yes(v):
        jitflow.debug.print("cond {}", v)
        return v * v
    _, v = jitflow.while_loop(lambda c: c[0] < 2, body, (0, w))
    v, _ = jitflow.scan(step, v, jnp.array([1.0, 3.0]))
    return jitflow.cond(v > 0, yes, lambda v: v, v)


LOOPED_LINES = ["while 0 2.0", "while 1 4.0", "scan 8.0 1.0", "scan 8.0 3.0", "cond 24.0"]


@pytest.mark.parametrize("transform", ["grad", "jvp"])
def test_control_flow_under_derivatives_prints_once_per_run(backend, capsys, transform):
    w = np.float64(2.0)  # looped(w) = (w**3 * 3)**2 = 9 w**6: the derivative is 54 w**5
    if transform == "grad":
        derivative = jitflow.function(jitflow.grad(looped))(w)
    else:
        derivative = jitflow.function(lambda w: jitflow.jvp(looped, (w,), (1.0,))[1])(w)
    assert float(derivative) == 54 * 2.0**5
    assert lines(capsys) == LOOPED_LINES
    jitflow.grad(looped)(w)  # eagerly
    assert lines(capsys) == LOOPED_LINES


def test_under_vmap_it_is_called_once_with_the_batch(backend):
    seen = []

    def f(x, c):
        jitflow.debug.callback(lambda a, b: seen.append((a, b)), x * 2, c)
        return x + c

    xs = np.arange(6.0).reshape(3, 2)
    out = jitflow.function(jitflow.vmap(f, in_axes=(0, None)))(xs, np.float64(1.0))
    np.testing.assert_array_equal(out, xs + 1)
    ((batch, c),) = seen
    np.testing.assert_array_equal(batch, xs * 2)  # the batch axis in front
    assert float(c) == 1.0  # not batched: as it is


# --- errors -------------------------------------------------------------------------------

def test_an_exception_in_the_callback_is_raised_from_the_call(backend, capsys):
    def fail(v):
        raise ValueError(f"bad value {v}")

    @jitflow.function
    def f(x):
        jitflow.debug.callback(fail, x)
        jitflow.debug.print("after {}", x)
        return x + 1

    for _ in range(2):  # the function stays usable, and the error comes back each time
        with pytest.raises(ValueError, match=r"bad value \[1. 1.\]"):
            f(np.ones(2))
        assert lines(capsys) == []  # nothing after the failed callback ran


def test_an_exception_inside_a_loop_body_ends_the_call(backend, capsys):
    @jitflow.function
    def f(x):
        def body(i):
            jitflow.debug.print("i {}", i)
            jitflow.debug.callback(lambda i: 1 / 0 if i == 1 else None, i)
            return i + 1
        return jitflow.while_loop(lambda i: i < 5, body, x)

    with pytest.raises(ZeroDivisionError):
        f(np.int64(0))
    assert lines(capsys) == ["i 0", "i 1"]
    assert int(f(np.int64(2))) == 5  # the next call does not see the old error
    assert lines(capsys) == ["i 2", "i 3", "i 4"]


def test_a_failed_scan_trip_ends_the_prints(backend, capsys):
    @jitflow.function
    def f(rows):
        def step(total, row):
            jitflow.debug.print("row {}", row)
            return total + 2 ** row, row  # NumPy refuses 2 ** -1 for integers
        return jitflow.scan(step, np.int64(0), rows)[0]

    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.array([1, -1, 1]))
    assert lines(capsys) == ["row 1", "row -1"]


def test_the_direct_entry_calls_back_and_raises(backend, capsys):
    calls = []

    @jitflow.function
    def f(x, y):
        jitflow.debug.callback(lambda v: calls.append(v) if v[0] >= 0 else 1 / 0, x)
        return x * y

    x, y = np.arange(3.0), np.full(3, 2.0)
    for _ in range(3):
        np.testing.assert_array_equal(f(x, y), x * 2)
    if backend == "native":
        assert f._direct is not None  # the calls above went through the direct entry
    assert len(calls) == 3
    with pytest.raises(ZeroDivisionError):
        f(-x - 1, y)
    np.testing.assert_array_equal(f(x, y), x * 2)
    assert len(calls) == 4


# --- check_numerics -----------------------------------------------------------------------

def test_check_numerics_raises_at_the_users_line(backend):
    @jitflow.function
    def f(x):
        y = jnp.log(x)
        y = jitflow.debug.check_numerics(y, "log of the input")  # the checked line
        return y * 2

    np.testing.assert_allclose(f(np.array([1.0, 2.0])), 2 * np.log([1.0, 2.0]))
    with pytest.raises(FloatingPointError) as info:
        f(np.array([[1.0, -1.0], [0.0, 3.0]]))
    text = str(info.value)
    assert "log of the input" in text and "1 NaN and 1 inf" in text
    assert "index (0, 1): nan" in text
    assert "test_debug.py" in text and "# the checked line" in text


def test_check_numerics_eagerly_and_on_integers(capsys):
    with pytest.raises(FloatingPointError, match="eager check"):
        jitflow.debug.check_numerics(np.array([np.inf]), "eager check")
    ints = np.arange(3)
    assert jitflow.debug.check_numerics(ints, "ints") is ints
    np.testing.assert_array_equal(jitflow.debug.check_numerics(np.ones(2), "ok"), np.ones(2))


def test_threads_each_see_their_own_callback_errors(backend):
    import threading
    seen = []

    def record(v):
        if v < 0:
            raise ValueError(f"negative {v}")
        seen.append(float(v))

    @jitflow.function
    def f(x):
        jitflow.debug.callback(record, x)
        return x + 1

    f(np.float64(0.0))  # compiled before the threads start
    outcomes = {}

    def work(sign):
        results = []
        for k in range(1, 51):
            try:
                results.append(float(f(np.float64(sign * k))))
            except ValueError as error:
                results.append(str(error).splitlines()[0])
        outcomes[sign] = results
    threads = [threading.Thread(target=work, args=(s,)) for s in (1, -1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes[1] == [k + 1.0 for k in range(1, 51)]
    assert outcomes[-1] == [f"negative {-float(k)}" for k in range(1, 51)]
    assert sorted(seen) == [0.0] + [float(k) for k in range(1, 51)]
