"""Structural equality of IR graphs: the same nodes, params, types, wiring and constant
bytes (what a round trip through a file must keep). A custom derivative's call carries
the user's function in the original and its saved rule once read: tests compare what
those compute."""
from jitflow.ir.graph import Lit


def assert_same_graph(got, expected, names=None, where="graph"):
    names = {} if names is None else names  # Var of `expected` -> Var of `got`
    assert len(got.inputs) == len(expected.inputs), where
    for g, e in zip(got.inputs, expected.inputs):
        _define(g, e, names, f"{where} input")
    assert len(got.nodes) == len(expected.nodes), where
    for i, (g, e) in enumerate(zip(got.nodes, expected.nodes)):
        here = f"{where}, node {i} ({e.op})"
        assert g.prim is e.prim, here
        if e.op not in ("custom_vjp_call", "custom_jvp_call"):
            assert _same_params(g.params_key(), e.params_key()), here
        assert len(g.inputs) == len(e.inputs), here
        for a, b in zip(g.inputs, e.inputs):
            _same_value(a, b, names, here)
        assert len(g.subgraphs) == len(e.subgraphs), here
        for k, (a, b) in enumerate(zip(g.subgraphs, e.subgraphs)):
            assert_same_graph(a, b, names, f"{here}, subgraph {k}")
        assert len(g.outputs) == len(e.outputs), here
        for a, b in zip(g.outputs, e.outputs):
            _define(a, b, names, here)
    assert len(got.outputs) == len(expected.outputs), where
    for a, b in zip(got.outputs, expected.outputs):
        _same_value(a, b, names, f"{where} output")


def _same_params(got, expected):
    """Equal parameters, a NaN equal to a NaN (pad's constant value, read back from a
    file, is another NaN object, which == calls unequal)."""
    if isinstance(got, tuple) and isinstance(expected, tuple):
        return len(got) == len(expected) and all(map(_same_params, got, expected))
    if isinstance(got, float) and isinstance(expected, float) and got != got:
        return expected != expected
    return got == expected


def _define(got, expected, names, where):
    assert got.type == expected.type, where
    names[expected] = got


def _same_value(got, expected, names, where):
    if isinstance(expected, Lit):
        assert isinstance(got, Lit) and got.key() == expected.key(), where
    else:
        assert names.get(expected) is got, where
