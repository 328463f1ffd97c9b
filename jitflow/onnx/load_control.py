"""ONNX's If and Loop as jitflow's cond and while_loop.

A condition known while tracing (a shape test, say) just picks the branch to run. A
Loop with per-iteration outputs (scan outputs) needs its trip count known and its
condition known at each step: it is unrolled.
"""
import numpy as np

from .. import numpy as jnp
from ..control_flow import cond, while_loop
from ..trace import Tracer


def if_(node, condition):
    then_branch, else_branch = node.attr("then_branch"), node.attr("else_branch")
    if not isinstance(condition, Tracer):
        return node.run_body(then_branch if bool(condition) else else_branch, [])
    return list(cond(_scalar(condition),
                     lambda: tuple(node.run_body(then_branch, [])),
                     lambda: tuple(node.run_body(else_branch, []))))


def loop(node, trip_count=None, keep_going=None, *initial):
    body = node.attr("body")
    scanned = len(body.output) - 1 - len(initial)
    if trip_count is not None:
        trip_count = _scalar(trip_count)
    if scanned:
        return _unrolled(node, body, trip_count, keep_going, initial)
    start = (np.int64(0), np.True_ if keep_going is None else _scalar(keep_going),
             *initial)

    def going_on(carry):
        more = carry[1]
        return more if trip_count is None else jnp.logical_and(carry[0] < trip_count, more)

    def step(carry):
        i, more, *values = carry
        outputs = node.run_body(body, [i, more, *values])
        return (i + 1, _scalar(outputs[0]), *outputs[1:])
    return list(while_loop(going_on, step, start)[2:])


def _scalar(value):
    """A one-element condition or count as a 0-d value (a constant stays one)."""
    return jnp.reshape(value, ()) if isinstance(value, Tracer) else np.reshape(value, ())


def _unrolled(node, body, trip_count, keep_going, values):
    trip_count = int(node.static(trip_count, "trip count (with scan outputs)")) \
        if trip_count is not None else None
    more = True if keep_going is None else \
        bool(node.static(keep_going, "condition (with scan outputs)"))
    scans, i = [], 0
    while more and (trip_count is None or i < trip_count):
        outputs = node.run_body(body, [np.int64(i), np.bool_(more), *values])
        more = bool(node.static(outputs[0], "condition (with scan outputs)"))
        values = outputs[1:1 + len(values)]
        scans.append(outputs[1 + len(values):])
        i += 1
    if not scans:
        raise node.fail("a Loop with scan outputs that runs no iteration has no "
                        "shape for them")
    return list(values) + [jnp.stack(column) for column in zip(*scans)]


CONTROL_OPS = {"If": if_, "Loop": loop}
