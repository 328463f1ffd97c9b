"""The schedule of a region: a fused body with reductions (or a reduction on its own).

All reductions of a region reduce the same `axes` of the same `shape`, the domain. Every
body value lives in one of two spaces:

- full: the domain's shape, one value per element (the elementwise members);
- row: one value per index of the kept axes (reduction results and per-row scalars).

A rowwise region (fuse.rowwise) runs each row in phases: phase p walks the row once,
computing the elements that depend on p reductions, accumulating the reductions whose
operand it computes, and storing outputs; between phases the row values just completed,
and the row scalars depending on them, are computed. Softmax has three phases: the max;
exp(x - max), summed and kept; the kept exp divided by the sum.

A value of an earlier phase needed again is kept in a row buffer (or read back from the
output that holds it) when it is expensive (exp, log, division, ...): a load from cache
costs less than a second evaluation. A cheap one (x - max) is recomputed from its
operands instead: that costs about what a buffer's store and load would, and leaves
the cache to the rows. A column region (reducing outer axes) has one phase only.
"""
from ...ir.graph import Lit, Var
from ...ir.passes.fuse import REDUCTIONS, reduced_shapes, rowwise

# Worth a buffer rather than a second evaluation: calls into the math library, divisions.
EXPENSIVE = frozenset({"exp", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos",
                       "tan", "pow", "sqrt", "div", "floor_divide", "mod"})


class Phase:
    """One walk over a row: `evaluate` the members computed per element (body order),
    accumulate `reductions`, `store` values (outputs and buffers), `read` buffered values
    of earlier phases; then compute the row scalars of `after` (body order)."""

    def __init__(self, index):
        self.index = index
        self.evaluate, self.reductions, self.store, self.read, self.after = [], [], [], [], []

    def __repr__(self):
        return (f"Phase({self.index}: evaluate {[n.op for n in self.evaluate]}, "
                f"reduce {[n.op for n in self.reductions]}, after {[n.op for n in self.after]})")


class Region:
    """shape, axes, kept (the other axes), rowwise, phases; `buffered` holds the full
    values kept for later phases, `outputs_full` / `outputs_row` the body outputs by
    space (Var -> position in body.outputs)."""

    def __init__(self, body):
        self.body = body
        reductions = [n for n in body.nodes if n.op in REDUCTIONS]
        self.shape = reductions[0].inputs[0].type.shape
        self.axes = reductions[0].params["axes"]
        self.kept = tuple(i for i in range(len(self.shape)) if i not in self.axes)
        self.rowwise = rowwise(self.shape, self.axes)
        self.row_shapes = reduced_shapes(self.shape, self.axes)
        self.producer = {v: n for n in body.nodes for v in n.outputs}
        self.level = {}
        self.row_space = set()
        self._classify()
        outputs = {v: i for i, v in enumerate(body.outputs) if isinstance(v, Var)}
        self.outputs_full = {v: i for v, i in outputs.items() if v not in self.row_space}
        self.outputs_row = {v: i for v, i in outputs.items() if v in self.row_space}
        self.buffered = set()
        self.phases = self._schedule()

    def is_row(self, value):
        return isinstance(value, Var) and value in self.row_space

    def is_external(self, value):
        return isinstance(value, Lit) or value not in self.producer

    # --- spaces and levels -------------------------------------------------------------
    def _classify(self):
        """level: how many reductions a value waits for, one after the other."""
        for node in self.body.nodes:
            levels = [self.level.get(v, 0) for v in node.inputs if isinstance(v, Var)]
            if node.op in REDUCTIONS:
                self._check_reduction(node)
                self.level[node.outputs[0]] = max(levels) + 1
                self.row_space.add(node.outputs[0])
            else:
                self.level[node.outputs[0]] = max(levels, default=0)
                if node.outputs[0].type.shape != self.shape:
                    self._check_row_scalar(node)
                    self.row_space.add(node.outputs[0])

    def _check_reduction(self, node):
        if node.inputs[0].type.shape != self.shape or node.params["axes"] != self.axes:
            raise ValueError(f"region: {node.op} over {node.params['axes']} of "
                             f"{node.inputs[0].type.shape} in a region of {self.shape} "
                             f"over {self.axes}")

    def _check_row_scalar(self, node):
        if node.outputs[0].type.shape not in self.row_shapes or not self.rowwise:
            raise ValueError(f"region: {node.op} of shape {node.outputs[0].type.shape} "
                             f"fits neither {self.shape} nor its rows")

    # --- phases --------------------------------------------------------------------------
    def _schedule(self):
        full_levels = [self.level[v] for n in self.body.nodes for v in n.outputs
                       if v not in self.row_space]
        operand_levels = [self.level.get(n.inputs[0], 0) for n in self.body.nodes
                          if n.op in REDUCTIONS]
        count = max(full_levels + operand_levels) + 1
        if count > 1 and not self.rowwise:
            raise ValueError("region: a column region cannot read its own reductions")
        phases = [Phase(p) for p in range(count)]
        for phase in reversed(phases):  # later phases decide what earlier ones keep
            self._plan(phase)
        for node in self.body.nodes:
            if node.outputs[0] in self.row_space and node.op not in REDUCTIONS:
                phases[self.level[node.outputs[0]] - 1].after.append(node)
        return phases

    def _plan(self, phase):
        p = phase.index
        phase.reductions = [n for n in self.body.nodes if n.op in REDUCTIONS
                            and self.level.get(n.inputs[0], 0) == p]
        roots = [n.inputs[0] for n in phase.reductions]
        roots += [v for v in self.outputs_full if self.level[v] == p]
        roots += [v for v in self.buffered if self.level[v] == p]
        computed, read = set(), set()
        for root in roots:
            self._need(root, p, computed, read)
        phase.evaluate = [n for n in self.body.nodes if id(n) in computed]
        phase.read = sorted(read, key=self.position)
        phase.store = sorted({v for v in roots if not self.is_external(v) and
                              (v in self.outputs_full or v in self.buffered)},
                             key=self.position)

    def _need(self, value, p, computed, read):
        """Arrange for `value` to be known at each element of phase p."""
        if self.is_external(value) or value in self.row_space:
            return
        node = self.producer[value]
        if id(node) in computed or value in read:
            return
        earlier = self.level[value] < p
        if earlier and (value in self.outputs_full or value in self.buffered):
            read.add(value)
            return
        if earlier and node.op in EXPENSIVE:
            self.buffered.add(value)
            read.add(value)
            return
        computed.add(id(node))
        for operand in node.inputs:
            self._need(operand, p, computed, read)

    def position(self, value):
        """Where `value` is defined in the body: orders values as the body does."""
        return [v for n in self.body.nodes for v in n.outputs].index(value)
