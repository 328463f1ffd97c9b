"""Lowering of a one-phase region walked in memory order (reductions.py): the outputs
start as the reductions' identities, then one loop nest walks the domain and folds every
element into its output slot.

When the innermost loop runs along a kept axis (a column reduction), it is elementwise
over the outputs, and runs on vectors of output slots (vector_loops.py). Each slot folds its elements one after the
other, in the order of the reduced indices (in memory order), which is NumPy's order for
these reductions too. Max and min fold as NumPy's maximum and minimum do: NaN from
either side propagates, and ties take the element (accumulate.fold_in_order).
"""
import math

from .accumulate import VECTOR_BYTES, fold_in_order, identity
from .reduced_views import reduced_view
from .views import View, collapse


# Reduced indices folded per pass over the output slots, when the innermost loop runs
# along a kept axis: the slots are loaded and stored once per UNROLL elements each, and
# each still folds its elements in order, so the result is the same bits.
UNROLL = 4


def lower_columns(lo, region, operands, outputs, inline_checks, order):
    """Arguments as row_loops.lower_rows; `order`: the domain's axes from the outermost
    loop to the innermost (memory order of the operands)."""
    (phase,) = region.phases
    em, shape = lo.em, region.shape
    reductions = phase.reductions
    targets = [(r, outputs[region.outputs_row[r.outputs[0]]]) for r in reductions]
    for r, out in targets:
        lo.fill(out, identity(r.op, out.dtype))
    used = list(dict.fromkeys(v for n in phase.evaluate + reductions for v in n.inputs
                              if region.is_external(v)))
    stores = [(v, outputs[i]) for v, i in region.outputs_full.items()]
    views = [operands[v].broadcast_to(shape) for v in used] + [out for _, out in stores] + \
        [reduced_view(out, shape, region.axes) for _, out in targets]
    views = [view.transpose(order) for view in views]

    def elements(offsets, steps, count):
        """`count` elements along the split axis (steps: each view's stride there)."""
        slots = offsets[len(used) + len(stores):]
        folded = [em.load(out.base, out.dtype, slot) for (_, out), slot in zip(targets, slots)]
        for t in range(count):
            at = [em.advanced(offset, t * step) for offset, step in zip(offsets, steps)]
            env = _evaluate(lo, phase, inline_checks, operands, used, at)
            for (value, out), offset in zip(stores, at[len(used):]):
                em.store(env[value], out.base, out.dtype, offset)
            folded = [fold_in_order(em, r.op, out.dtype, acc,
                                    em.cast(env[r.inputs[0]], r.inputs[0].type.dtype,
                                            out.dtype))
                      for (r, out), acc in zip(targets, folded)]
        for (_, out), slot, value in zip(targets, slots, folded):
            em.store(value, out.base, out.dtype, slot)
    _walk(lo, tuple(shape[axis] for axis in order), views, len(views) - len(targets),
          elements)


def _evaluate(lo, phase, inline_checks, operands, used, offsets):
    env = {v: lo.read(operands[v], offset) for v, offset in zip(used, offsets)}
    for node in phase.evaluate:
        values = [env[v] for v in node.inputs]
        for i in inline_checks.get(id(node), ()):
            lo._check_python_int(values[i], node, i)
        env[node.outputs[0]] = lo._scalar(node, values)
    return env


def _walk(lo, shape, views, first_slot, elements):
    """Loop over `shape`; when the innermost axis is kept and the one outside it
    reduced (the output slot views, from `first_slot` on, have stride 0 there only),
    step that reduced axis UNROLL indices at a time."""
    loop_shape, strides = collapse(shape, *[view.strides for view in views])
    slots = strides[first_slot:]
    widest = max(view.dtype.itemsize for view in views)
    if loop_shape and loop_shape[-1] * widest <= VECTOR_BYTES:
        # The output slots are one vector, loaded and stored again on every pass over
        # the reduced axis unless LLVM's LICM keeps them in a register (measured on the
        # sum over the middle axis of 256x1024x16: 0.20 ms without, 0.12 with).
        lo.leave_loops_to_llvm()
    work = math.prod(shape)  # the elements folded, whichever way the loops step
    split = len(loop_shape) >= 2 and slots and loop_shape[-2] >= 2 * UNROLL and \
        all(s[-2] == 0 and s[-1] != 0 for s in slots)
    if not split:
        # Vector lanes may share nothing: each output slot must be its lane's own.
        own_slots = bool(loop_shape) and all(s[-1] != 0 for s in slots)
        lo.loop_nest(shape, views, lambda offsets: elements(offsets, [0] * len(views), 1),
                     owner=first_slot, work=work, vector=own_slots)
        return
    steps = [s[-2] for s in strides]
    passes, rest = divmod(loop_shape[-2], UNROLL)

    def collapsed(size, first, stride):
        """The views over the collapsed loop, `size` indices of the split axis from
        index `first`, `stride` of them apart."""
        shape = loop_shape[:-2] + (size, loop_shape[-1])
        return shape, [View(v.base, v.dtype, shape, s[:-2] + (s[-2] * stride, s[-1]),
                            v.offset + first * s[-2], v.constant)
                       for v, s in zip(views, strides)]
    lo.loop_nest(*collapsed(passes, 0, UNROLL), lambda offsets: elements(offsets, steps, UNROLL),
                 owner=first_slot, work=work, vector=True)
    if rest:
        lo.loop_nest(*collapsed(rest, passes * UNROLL, 1),
                     lambda offsets: elements(offsets, steps, 1), owner=first_slot,
                     work=work, vector=True)
