"""The whole pipeline: golden IR, fixpoint iteration, dumping and checking."""
import numpy as np

import jitflow
import jitflow.numpy as jnp
from jitflow.ir.passes import PIPELINE
from tests_support import golden, trace


def test_pipeline_order_is_one_tuple():
    assert [p.__name__ for p in PIPELINE] == ["inline", "share_scans", "simplify", "constant_fold", "cse",
                                              "hoist", "tidy_operands", "dce"]


def test_optimize_reaches_a_fixpoint():
    def f(x, y):
        a = (x.T.T * 1) + jnp.exp(y) * (2.0 * 3.0)
        b = (x * 1).T.T + jnp.exp(y) * 6.0
        unused = jnp.sin(a)
        return a - b, a
    x = np.ones((2, 3), np.float32)
    graph = jitflow.function(f).trace(x, x)
    assert str(jitflow.optimize(graph)) == golden("""
        graph(%0: f32[2,3], %1: f32[2,3]) {
          %2: f32[2,3] = exp %1
          %3: f32[2,3] = mul %2, 6.0:~f64[]
          %4: f32[2,3] = add %0, %3
          %5: f32[2,3] = sub %4, %4
          return %5, %4
        }""")


def test_dump_prints_the_ir_after_every_pass(capsys, monkeypatch):
    monkeypatch.setattr(jitflow.config, "dump_ir", True)
    graph = jitflow.function(lambda x: x * 1).trace(np.ones(2))
    jitflow.optimize(graph)
    out = capsys.readouterr().out
    for name in ("simplify", "constant_fold", "cse", "dce"):
        assert f"--- after {name} ---" in out


def test_check_runs_verify_after_every_pass(monkeypatch):
    from jitflow.ir import passes
    from jitflow.ir.graph import Graph, VerifyError

    def broken(graph):  # drops the nodes but keeps the outputs: undefined values
        return Graph(graph.inputs, (), graph.outputs)
    graph = jitflow.function(lambda x: jnp.exp(x)).trace(np.ones(2))
    monkeypatch.setattr(jitflow.config, "check_ir", True)
    try:
        passes.optimize(graph, (broken,), check=True)
    except VerifyError as error:
        assert "never defined" in str(error)
    else:
        raise AssertionError("verify did not catch the broken pass")
