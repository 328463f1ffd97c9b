"""Alias scopes: each node's buffers are declared disjoint, never buffers of two nodes."""
import numpy as np
from hypothesis import given, strategies as st
from llvmlite import ir

import jitflow
import jitflow.numpy as jnp
from jitflow.codegen import NativeGraph
from jitflow.codegen.lowering.aliasing import AliasScopes
from jitflow.ir.interpret import eval_graph
from strategies import arrays, shapes


def _native_and_check(fn, *args):
    graph = jitflow.optimize(jitflow.function(fn).trace(*args))
    native = NativeGraph(graph, "f")
    for got, want in zip(native(list(args)), eval_graph(graph, list(args))):
        np.testing.assert_array_equal(got, np.asarray(want))
    return native


def test_loops_with_several_inputs_and_outputs_stay_vector_code_without_runtime_checks():
    # Without scopes, LLVM cannot tell the output buffers from the inputs (all come from
    # the argument array): its vectorizer checks every store against every load at run
    # time, and its other passes keep loads and stores apart.
    x = np.linspace(-3, 3, 4 * 512, dtype=np.float32).reshape(4, 512)
    y = x[::-1].copy()
    native = _native_and_check(lambda a, b: (a * b + 1, a - b), x, y)
    optimized = native.compiled.optimized_ir
    assert "load <16 x float>" in optimized and "store <16 x float>" in optimized
    assert "vector.memcheck" not in optimized


@given(st.data())
def test_nodes_reusing_freed_buffers_give_the_interpreters_results(data):
    # cumsum is not fused: each one writes a workspace buffer that the memory plan
    # hands on once it is dead, so later nodes write the bytes earlier ones read.
    shape = data.draw(shapes(min_dims=1, max_dims=2, min_side=1, max_side=40))
    x = data.draw(arrays(np.float64, shape, min_value=-4, max_value=4))

    def chain(x):
        a = jnp.cumsum(x, axis=0)
        b = jnp.cumsum(a * 0.5 + x, axis=0)
        c = jnp.cumsum(jnp.maximum(b, 0.5) - a, axis=0)
        return c * b, jnp.cumsum(c, axis=0) + a
    _native_and_check(chain, x)


def _function_with_bases(count):
    module = ir.Module("m")
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.PointerType()] * count),
                           "f")
    builder = ir.IRBuilder(function.append_basic_block("entry"))
    scopes = AliasScopes(module, function)
    return module, builder, scopes, [scopes.register(a) for a in function.args]


def _gep(builder, base, index):
    return builder.gep(base, [ir.Constant(ir.IntType(64), index)],
                       source_etype=ir.FloatType())


def test_scopes_follow_geps_to_their_buffer_and_stay_within_one_node():
    module, b, scopes, (x, y, z) = _function_with_bases(3)
    first = [b.load(_gep(b, x, 3), typ=ir.FloatType()), b.store(ir.Constant(
        ir.FloatType(), 1.0), _gep(b, _gep(b, y, 1), 2))]
    scopes.annotate_new()
    only_one_buffer = b.load(_gep(b, z, 0), typ=ir.FloatType())
    scopes.annotate_new()
    second = [b.load(z, typ=ir.FloatType()), b.store(ir.Constant(ir.FloatType(), 2.0), y)]
    scopes.annotate_new()
    b.ret_void()
    text = str(module)
    assert "jitflow.node.1.buffer.0" in text and "jitflow.node.2.buffer.1" in text
    assert "alias.scope" not in str(only_one_buffer)
    for node, (load, store) in enumerate((first, second), start=1):
        own_load = load.metadata["alias.scope"].operands[0]
        assert f"jitflow.node.{node}" in str(own_load.operands[0])
        # what the load is declared apart from is exactly the store's scope
        assert store.metadata["alias.scope"].operands == load.metadata["noalias"].operands
