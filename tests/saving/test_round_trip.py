"""IR graphs through a file and back: the same graph, node for node, for the fuzzer's
random programs over every operation it draws, for control flow (and its derivatives),
and for custom derivatives, whose saved rules give the user's rules' derivatives."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jitflow
from graph_equality import assert_same_graph
from jitflow.ir.interpret import eval_graph
from jitflow.ir.primitive import REGISTRY
from jitflow.ir.types import type_of_value
from jitflow.saving import NotSerializableError, read_graph, write_graph
from jitflow.saving.custom_rules import replay
from jitflow.trace import bind
from test_ops import CASES, COMPUTING
from test_program_fuzzer import programs, traced

ROUND_TRIPS = settings(deadline=None, suppress_health_check=list(HealthCheck))


def round_trip(graph, path, as_text=False):
    write_graph(graph, path, as_text=as_text)
    return read_graph(path)


def assert_same_values(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape
        assert g.tobytes() == e.tobytes()  # bit for bit: NaNs and signed zeros too


def assert_same_outcome(loaded, graph, inputs):
    """The loaded graph computes the original's values, or raises as it does (a Python
    int a narrow dtype cannot hold, an index out of bounds: errors of values)."""
    with np.errstate(all="ignore"):
        try:
            expected = eval_graph(graph, inputs)
        except Exception as error:
            with pytest.raises(type(error)):
                eval_graph(loaded, inputs)
            return
        assert_same_values(eval_graph(loaded, inputs), expected)


@ROUND_TRIPS
@given(program=programs())
def test_fuzzer_programs_come_back_the_same(program, tmp_path_factory):
    try:
        graph = traced(program, "interpreter").trace(*program.inputs)
    except Exception:  # a program NumPy refuses: nothing to save
        return
    path = tmp_path_factory.mktemp("graphs") / "program.jitflow"
    if holds_python_callbacks(graph):
        with pytest.raises(NotSerializableError, match="callback"):
            round_trip(graph, path)
        return  # (run-time checks of nanargmax, ravel_multi_index, a traced q: refused)
    loaded = round_trip(graph, path)
    assert_same_graph(loaded, graph)
    assert str(loaded) == str(graph)
    assert_same_graph(jitflow.optimize(loaded), jitflow.optimize(graph))
    assert_same_outcome(loaded, graph, program.inputs)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs())
def test_fuzzer_programs_saved_and_loaded_compile_to_the_same_results(program,
                                                                      tmp_path_factory):
    """jitflow.save and jitflow.load: the loaded function, compiled to native code,
    gives the original's results bit for bit (a few programs: each compiles twice)."""
    original = traced(program, "native")
    path = tmp_path_factory.mktemp("functions") / "program.jitflow"
    with np.errstate(all="ignore"):
        try:
            expected = original(*program.inputs)
        except Exception:  # a program NumPy refuses: nothing to save
            return
        if holds_python_callbacks(original.trace(*program.inputs)):
            return  # (refused by name: test_fuzzer_programs_come_back_the_same)
        loaded = jitflow.load(jitflow.save(original, path, *program.inputs))
        assert_same_values(loaded(*program.inputs), expected)


def holds_python_callbacks(graph):
    """Whether a node of the graph, or of its subgraphs, calls back into Python: the
    format holds no code, so such graphs are refused."""
    return any(node.op in ("debug_callback", "pure_callback") or
               any(holds_python_callbacks(sub) for sub in node.subgraphs)
               for node in graph.nodes)


# --- control flow, derivatives, custom derivatives ---------------------------------------

def _loop(x):
    def body(carry):
        i, v = carry
        return i + 1, np.sin(v) * 1.5
    return jitflow.while_loop(lambda c: c[0] < 3, body, (0, x))[1].sum()


def _branches(x):
    return jitflow.cond(x.sum() > 0, lambda v: np.exp(v), lambda v: -v * 2.0, x).sum()


def _scanned(x):
    def step(carry, row):
        carry = carry * 0.5 + row
        return carry, np.tanh(carry)
    final, ys = jitflow.scan(step, np.zeros(x.shape[1]), x)
    return final.sum() + ys.sum()


def _fori(x):
    return jitflow.fori_loop(0, 4, lambda i, v: v * np.cos(v) + i, x).sum()


@jitflow.custom_vjp
def _clipped_gradient(x):
    return np.log1p(np.exp(x))


_clipped_gradient.defvjp(lambda x: (_clipped_gradient(x), x),
                         lambda x, ct: (np.clip(ct, -0.1, 0.1),))


@jitflow.custom_jvp
def _smooth(x):
    return np.sqrt(x * x + 1.0)


@_smooth.defjvp
def _smooth_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    value = np.sqrt(x * x + 1.0)
    return value, x / value * t


def _custom(x):
    return _clipped_gradient(x).sum() + _smooth(x).sum()


PROGRAMS = [_loop, _branches, _scanned, _fori, _custom]


def _hessian_vector(fn):
    return lambda x: jitflow.jvp(jitflow.grad(fn), (x,), (np.ones_like(x),))[1]
X = np.array([[0.5, -1.25, 2.0], [0.25, 1.5, -0.75]])


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("derivative", ["value", "grad", "hessian_vector"])
@pytest.mark.parametrize("as_text", [False, True], ids=["zip", "text"])
def test_control_flow_and_its_derivatives_come_back_the_same(fn, derivative, as_text,
                                                             tmp_path):
    if derivative == "grad":
        fn = jitflow.grad(fn)
    elif derivative == "hessian_vector":
        fn = _hessian_vector(fn)
    graph = jitflow.function(fn).trace(X)
    loaded = round_trip(graph, tmp_path / "graph.jitflow", as_text)
    assert_same_graph(loaded, graph)
    assert_same_values(eval_graph(loaded, [X]), eval_graph(graph, [X]))


def test_structured_primitives_are_all_met():
    """The programs above hold every primitive that owns subgraphs."""
    met = set()

    def walk(graph):
        for node in graph.nodes:
            met.add(node.op)
            for sub in node.subgraphs:
                walk(sub)
    for fn in PROGRAMS:
        walk(jitflow.function(jitflow.grad(fn)).trace(X))
        walk(jitflow.function(fn).trace(X))
    assert {"while", "while_grad", "switch", "scan", "custom_vjp_call",
            "custom_jvp_call"} <= met


def _closing_over(x):
    """A custom_vjp closing over a traced value (differentiating that is an error)."""
    scale = x.sum()

    @jitflow.custom_vjp
    def scaled(v):
        return v * scale
    scaled.defvjp(lambda v: (scaled(v), None), lambda _, ct: (ct * 10.0,))
    return scaled(x).sum()


@pytest.mark.parametrize("fn", [_custom, _scanned, _closing_over], ids=lambda f: f.__name__)
def test_loaded_custom_derivatives_use_the_saved_rules(fn, tmp_path):
    """Gradients (and jvps of gradients) of a loaded graph are those of the user's
    rules, not of the forward body: the clipped gradient stays clipped."""
    graph = jitflow.function(fn).trace(X)
    loaded = round_trip(graph, tmp_path / "graph.jitflow")
    replayed = lambda x: replay(loaded, [x])[0]  # noqa: E731
    if fn is _closing_over:
        with pytest.raises(ValueError, match="closes over a traced value"):
            jitflow.grad(fn)(X)
        with pytest.raises(ValueError, match="closes over a traced value"):
            jitflow.grad(replayed)(X)
        return
    np.testing.assert_array_equal(jitflow.grad(replayed)(X), jitflow.grad(fn)(X))
    tangent = (np.ones_like(X),)
    np.testing.assert_array_equal(
        jitflow.jvp(jitflow.grad(replayed), (X,), tangent)[1],
        jitflow.jvp(jitflow.grad(fn), (X,), tangent)[1])
    compiled = jitflow.function(jitflow.grad(replayed))
    np.testing.assert_allclose(compiled(X), jitflow.grad(fn)(X), rtol=1e-12)


def test_special_values_and_weak_constants_are_kept_exactly(tmp_path):
    @jitflow.function
    def f(x, s):
        table = np.array([np.nan, -0.0, np.inf, -np.inf, 1e-310, 2.0**-1074], np.float64)
        big = np.array([2**63 - 1, -2**63], np.int64)
        return x * table, s * 0.1, big + 1, np.pad(x, 1, constant_values=-0.0)
    x = np.arange(6.0)
    graph = f.trace(x, 3)
    for as_text in (False, True):
        loaded = round_trip(graph, tmp_path / f"g{as_text}", as_text)
        assert_same_graph(loaded, graph)
        with np.errstate(all="ignore"):
            assert_same_values(eval_graph(loaded, [x, 3]), eval_graph(graph, [x, 3]))


# --- every registered primitive, with test_ops' operands and parameters ------------------

@pytest.mark.parametrize("name", COMPUTING)
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_primitive_comes_back_the_same(name, data, tmp_path_factory):
    operands, params = CASES[name].draw(data)
    operands = list(CASES[name].fix(*operands))
    try:
        REGISTRY[name].infer_types(*(type_of_value(v) for v in operands), **params)
    except Exception:  # operands the primitive refuses (test_ops checks how)
        return
    as_argument = [data.draw(st.booleans()) for _ in operands]

    def fn(*arguments):
        supplied = iter(arguments)
        return bind(REGISTRY[name], *(next(supplied) if argument else value
                                      for value, argument in zip(operands, as_argument)),
                    **params)
    arguments = [v for v, argument in zip(operands, as_argument) if argument]
    graph = jitflow.function(fn).trace(*arguments)
    loaded = round_trip(graph, tmp_path_factory.mktemp("graphs") / "graph.jitflow",
                        as_text=data.draw(st.booleans()))
    assert_same_graph(loaded, graph)
    assert_same_outcome(loaded, graph, arguments)


def test_a_python_callback_is_refused_by_name(tmp_path):
    @jitflow.function
    def f(x):
        jitflow.debug.print("x is {}", x)
        return x + 1
    with pytest.raises(NotSerializableError, match="debug_callback.*callback"):
        write_graph(f.trace(np.ones(2)), tmp_path / "g.jitflow")


def test_a_fused_graph_as_native_code_runs_it_comes_back_the_same(tmp_path):
    f = jitflow.function(lambda x: np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1))
    fused = f.lower(X)._native.graph
    assert "fused" in {node.op for node in fused.nodes}
    loaded = round_trip(fused, tmp_path / "fused.jitflow")
    assert_same_graph(loaded, fused)
    assert_same_values(eval_graph(loaded, [X]), eval_graph(fused, [X]))
