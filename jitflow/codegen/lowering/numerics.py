"""The checks of config.debug_nans / debug_infs in native code (Lowering's nan_checks):
every elementwise operation's float results are tested where they are computed, and
the graph's float outputs once more at the end, flagging NAN_MADE or INF_MADE.

A loop body's tests are gathered and flagged once per iteration, as one "any lane of
any of them" condition, rather than once per operation: each flag is a horizontal
reduction of the vector and a read-modify-write of the error status, and a fused body of
twenty operations paid twenty of each on every vector. Only tests made in the block the
body began in are gathered (that block dominates the body's end, where they are
flagged); any other is flagged where it is made.
"""
import functools

import numpy as np

from ..errors import INF_MADE, NAN_MADE
from ..views import View


class _Pending:
    """The tests gathered in one run of a loop body: code -> conditions."""

    def __init__(self, em):
        self.em = em
        self.block = em.b.block
        self.conditions = {}


class NumericsChecks:
    def __init__(self, lowering, kinds):
        self.lo = lowering
        self.kinds = tuple(kinds)
        self._pending = None

    def check(self, value, dtype):
        """Test `value` (a float scalar or vector of `dtype`) for the kinds refused."""
        b = self.lo.builder
        if "NaN" in self.kinds:
            self._flag(b.fcmp_unordered("uno", value, value), NAN_MADE)
        if "inf" in self.kinds:
            magnitude = self.lo.em.intrinsic("llvm.fabs", value)
            self._flag(b.fcmp_ordered("==", magnitude, self.lo.em.const(np.inf, dtype)),
                       INF_MADE)

    def gathered(self, body):
        """`body` (a loop body: body(offsets)) flagging its tests together at its end."""
        def run(offsets):
            outer = self._pending
            self._pending = pending = _Pending(self.lo.em)
            try:
                body(offsets)
            finally:
                self._pending = outer
            self._flag_together(pending)
        return run

    def check_outputs(self, graph, output_pointer):
        """Test the graph's float outputs, the last code of the call: a value that came
        in with the inputs, or that a reduction, product or call made, shows there.
        output_pointer(i) is output i's buffer."""
        for i, var in enumerate(graph.outputs):
            if var.type.dtype.kind != "f" or var.type.size == 0:
                continue
            view = View.contiguous(output_pointer(i), var.type.dtype, var.type.shape)

            def body(offsets, view=view):
                self.check(self.lo.read(view, offsets[0]), view.dtype)
            self.lo.loop_nest(view.shape, [view], body, vector=True)

    def _flag(self, condition, code):
        pending = self._pending
        if pending is not None and pending.em is self.lo.em and \
                pending.block is self.lo.builder.block:
            pending.conditions.setdefault((code, str(condition.type)), []).append(condition)
        else:
            self.lo.em.error.flag_if(condition, code)

    def _flag_together(self, pending):
        b = pending.em.b
        for (code, _), conditions in pending.conditions.items():
            pending.em.error.flag_if(functools.reduce(b.or_, conditions), code)
