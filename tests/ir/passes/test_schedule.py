"""The scheduling of nonblocking work (ir/passes/schedule.py), on graphs of stand-in
primitives (made here, not registered): starts as early as their operands allow, in
their order, waits as late as their users allow; effects keep their order, which a
wait alone may pass."""
import numpy as np

from jitflow.ir.graph import Graph, Node, Var
from jitflow.ir.passes.schedule import schedule
from jitflow.ir.primitive import Primitive
from jitflow.ir.types import TensorType

T = TensorType((3,), np.dtype(np.float64))


def _primitive(name, **kinds):
    return Primitive(name, lambda *types, **params: T, lambda *arrays, **params: None,
                     **kinds)


PURE = {name: _primitive(name) for name in ("grad", "sin", "update")}
START = _primitive("start", pure=False, schedule="early")
WAIT = _primitive("wait", pure=False, schedule="late")
PRINT = _primitive("print", pure=False)


class Builder:
    def __init__(self):
        self.x, self.nodes, self.names = Var(T), [], {}

    def add(self, name, prim, *operands):
        out = Var(T)
        self.nodes.append(Node(prim, [self.names.get(o, self.x) for o in operands], {},
                               [out]))
        self.names[name] = out
        return self

    def graph(self, *outputs):
        return Graph([self.x], self.nodes, [self.names[o] for o in outputs])


def scheduled(builder, *outputs):
    graph = builder.graph(*outputs)
    name_of = {id(node): name for name, node in zip(builder.names, graph.nodes)}
    return [name_of[id(node)] for node in schedule(graph).nodes]


def backward_pass():
    """Two gradients, each all-reduced (start, wait) and used by an update, as traced:
    all the gradients first, then the communication."""
    return (Builder().add("g1", PURE["grad"], "x").add("g2", PURE["grad"], "x")
            .add("s1", START, "g1").add("w1", WAIT, "g1", "s1")
            .add("s2", START, "g2").add("w2", WAIT, "g2", "s2")
            .add("u1", PURE["update"], "w1").add("u2", PURE["update"], "w2")
            .add("t", PURE["sin"], "x"))


def test_starts_go_early_waits_late_and_the_work_between_overlaps():
    assert scheduled(backward_pass(), "u1", "u2", "t") == [
        "g1", "s1", "g2", "s2", "t", "w1", "u1", "w2", "u2"]


def test_a_start_does_not_pass_an_earlier_effect_but_a_wait_passes_later_ones():
    builder = (Builder().add("g1", PURE["grad"], "x").add("p1", PRINT, "x")
               .add("s1", START, "g1").add("w1", WAIT, "g1", "s1")
               .add("p2", PRINT, "x").add("u1", PURE["update"], "w1"))
    assert scheduled(builder, "u1") == ["g1", "p1", "s1", "p2", "w1", "u1"]


def test_starts_keep_their_order_and_an_unused_wait_goes_last():
    builder = (Builder().add("g1", PURE["grad"], "x").add("g2", PURE["grad"], "g1")
               .add("s2", START, "g1").add("s1", START, "g2")
               .add("w2", WAIT, "g1", "s2").add("w1", WAIT, "g2", "s1")
               .add("t", PURE["sin"], "x"))
    assert scheduled(builder, "t") == ["g1", "s2", "g2", "s1", "t", "w2", "w1"]


def test_a_graph_without_scheduled_work_is_left_as_it_is():
    graph = (Builder().add("g1", PURE["grad"], "x").add("p", PRINT, "g1")
             .add("t", PURE["sin"], "x").graph("t"))
    assert schedule(graph) is graph
