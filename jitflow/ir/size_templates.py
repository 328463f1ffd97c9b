"""Size templates: one graph standing for a function's graphs at every size n of a
dynamic axis (jitflow.function's dynamic_axes), so that one compile serves them all.

A template is made from the graphs of two sizes, n1 and n2, ready for code generation:
where they hold the same thing it holds it too; where an int differs (a shape, a slice's
start, a reshape's target) it holds the Size through both points (ir/sizes.py); where a
0-d integer constant differs (the count `mean` divides by) it holds a SizeLit; where
another constant differs it becomes an input the caller passes, its value at each size
taken from that size's graph (one element, broadcast, for a constant whose elements are
all the same, as the 1/n of a mean's gradient). A constant inside a fused region gets
there as one more input of the region. Anything else that differs (another operation,
a constant in a loop's body) is NotGeneral.

Another size n3 uses the template only if the template made from the graphs at n1 and
n3 prints exactly as the first: every int the graph holds then lies on the same line
through n1, n2 and n3, every constant not passed in is the same, and the structure is
the same. Each size's graph is checked this way before the code runs on it.
"""
import numpy as np

from .graph import Graph, Lit, Node, Var, _exact, uniform_element
from .primitive import REGISTRY
from .printer import format_graph
from .sizes import MIN_N, Size
from .types import TensorType, int64

SIZE_TYPE = TensorType((), int64)  # the template's last input: n, a 0-d int64


class NotGeneral(Exception):
    """The two graphs differ in more than sizes and top-level constants."""


class SizeLit(Lit):
    """A 0-d integer constant that is a run-time size: `value` holds the Size."""
    __slots__ = ()

    def __init__(self, size, type):
        self.type = type
        self.value = np.array(size, dtype=object)
        self._key = None

    def key(self):
        return (self.type, repr(self.value.item()))


class Template:
    """graph: inputs are the function's, then the constants passed in (`passed` of
    them), then n; text: its printed form, which another size's template must equal."""

    def __init__(self, graph, passed):
        self.graph = graph
        self.passed = passed
        self.text = format_graph(graph)


def generalize(first, n_first, second, n_second):
    """(Template of `first` at size n_first and `second` at n_second, second's values of
    the constants passed in); raises NotGeneral."""
    if min(n_first, n_second) < MIN_N or n_first == n_second:
        raise NotGeneral(f"sizes {n_first} and {n_second}: a template needs two "
                         f"different sizes of at least {MIN_N}")
    walk = _Generalizing(n_first, n_second)
    graph = walk.graph(first, second, top=True)
    inputs = list(graph.inputs) + [var for var, _ in walk.passed] + [Var(SIZE_TYPE)]
    template = Template(Graph(inputs, graph.nodes, graph.outputs), len(walk.passed))
    return template, [value for _, value in walk.passed]


class _Generalizing:
    def __init__(self, n_first, n_second):
        self.n_first, self.n_second = n_first, n_second
        self.made = {}     # a Var of the first graph -> the template's
        self.matched = {}  # a Var of the second graph -> the template's
        self.passed = []   # (template input, second's value) of constants passed in
        self._before = []  # top-level nodes to put before the node being made
        self._region = None  # in a fused region's body: [(outer value, body input)]

    def graph(self, first, second, top=False):
        for part in ("inputs", "nodes", "outputs"):
            if len(getattr(first, part)) != len(getattr(second, part)):
                raise NotGeneral(f"the graphs have different numbers of {part}")
        inputs = [self._define(a, b) for a, b in zip(first.inputs, second.inputs)]
        nodes = []
        for a, b in zip(first.nodes, second.nodes):
            node = self._node(a, b, top)
            if top:
                nodes += self._before
                self._before = []
            nodes.append(node)
        outputs = [self._operand(a, b, top) for a, b in zip(first.outputs, second.outputs)]
        if top:  # (a constant output passed in may need a broadcast)
            nodes += self._before
        return Graph(inputs, nodes, outputs)

    def _node(self, first, second, top):
        if first.prim is not second.prim or first.params.keys() != second.params.keys():
            raise NotGeneral(f"{first.op} where the other size has {second.op}")
        params = {key: self._param(value, second.params[key], f"{first.op}'s {key}")
                  for key, value in first.params.items()}
        region, self._region = self._region, [] if first.op == "fused" and top else None
        subgraphs = [self.graph(a, b) for a, b in _paired(first.subgraphs,
                                                           second.subgraphs, first.op)]
        extra, self._region = self._region or [], region
        if extra:  # constants the body reads come in as inputs, after the others
            body = subgraphs[0]
            subgraphs[0] = Graph(list(body.inputs) + [inner for _, inner in extra],
                                 body.nodes, body.outputs)
        inputs = [self._operand(a, b, top) for a, b in _paired(first.inputs,
                                                               second.inputs, first.op)]
        inputs += [outer for outer, _ in extra]
        outputs = [self._define(a, b) for a, b in _paired(first.outputs, second.outputs,
                                                          first.op)]
        return Node(first.prim, inputs, params, outputs, subgraphs)

    def _define(self, first, second):
        var = Var(self._type(first.type, second.type))
        self.made[first], self.matched[second] = var, var
        return var

    def _operand(self, first, second, top):
        if isinstance(first, Var) and isinstance(second, Var):
            var = self.made.get(first)
            if var is None or self.matched.get(second) is not var:
                raise NotGeneral("an operation reads different values at the two sizes")
            return var
        if not (isinstance(first, Lit) and isinstance(second, Lit)):
            raise NotGeneral("a value at one size is a constant at the other")
        if first.key() == second.key():
            return first
        type = self._type(first.type, second.type)
        if type.shape == () and type.dtype.kind in "iu":
            return SizeLit(self._int(int(first.value), int(second.value), "a constant"),
                           type)
        if top:
            return self._carried(first, second, type)
        if self._region is None:
            raise NotGeneral(f"a constant {first.type} in a loop's body changes with the "
                             f"size")
        inner = Var(type)
        self._region.append((self._carried(first, second, type), inner))
        return inner

    def _carried(self, first, second, type):
        """A top-level value of `type` holding the constant at each size: an input
        passed in, or one element of it (passed in, or a constant where it is the same
        at both sizes) broadcast."""
        one_first, one_second = uniform_element(first.value), uniform_element(second.value)
        if one_first is None or one_second is None:
            var = Var(type)
            self.passed.append((var, second.value))
            return var
        element = TensorType((), type.dtype, type.weak)
        if one_first.tobytes() == one_second.tobytes():
            source = Lit(one_first, element)
        else:
            source = Var(element)
            self.passed.append((source, one_second))
        if type.shape == ():
            return source
        view = Var(type)
        self._before.append(Node(REGISTRY["broadcast_to"], [source],
                                 {"shape": type.shape}, [view]))
        return view

    def _type(self, first, second):
        if first.dtype != second.dtype or first.weak != second.weak or \
                len(first.shape) != len(second.shape):
            raise NotGeneral(f"a value of type {first} is {second} at the other size")
        return TensorType(tuple(self._int(a, b, "a shape") for a, b in
                                zip(first.shape, second.shape)), first.dtype, first.weak)

    def _param(self, first, second, what):
        if type(first) is not type(second):
            raise NotGeneral(f"{what} is {first!r} at one size, {second!r} at the other")
        if isinstance(first, int) and not isinstance(first, bool):
            return self._int(first, second, what)
        if isinstance(first, (tuple, list)):
            if len(first) != len(second):
                raise NotGeneral(f"{what} has a different length at the other size")
            return type(first)(self._param(a, b, what) for a, b in zip(first, second))
        try:
            same = _exact(first) == _exact(second)
            same = bool(same)
        except (TypeError, ValueError):  # (an array, say): not compared here
            same = False
        if not same:
            raise NotGeneral(f"{what} is {first!r} at one size, {second!r} at the other")
        return first

    def _int(self, first, second, what):
        """The Size through (n_first, first) and (n_second, second), or the int."""
        if first == second:
            return first
        per, remainder = divmod(second - first, self.n_second - self.n_first)
        if remainder:
            raise NotGeneral(f"{what} is {first} at size {self.n_first} and {second} at "
                             f"{self.n_second}: not a whole multiple of the size")
        return Size.of(per, first - per * self.n_first)


def _paired(first, second, op):
    if len(first) != len(second):
        raise NotGeneral(f"{op} has different operands at the two sizes")
    return zip(first, second)

