"""Lowering of a one-phase region walked in memory order (reductions.py): the outputs
start as the reductions' identities, then one loop nest walks the domain and folds every
element into its output slot.

When the innermost loop runs along a kept axis (a column reduction), it is elementwise
over the outputs, and runs on vectors of output slots (vector_loops.py); when those
slots fit in one vector, it holds them in registers through the whole reduced axis
(_walk_holding_slots). Each slot folds its elements one after the other, in the order
of the reduced indices (in memory order), which is NumPy's order for these reductions
too. Max and min fold as NumPy's maximum and minimum do: NaN from
either side propagates, and ties take the element (accumulate.fold_in_order).
"""
import math
from collections import namedtuple

from ...ir.sizes import Size
from ..emitter import I64
from ..sizes import Blocks
from ..views import View, collapse
from .accumulate import VECTOR_BYTES, fold_in_order, identity
from .reduced_views import reduced_view


# Reduced indices folded per pass over the output slots, when the innermost loop runs
# along a kept axis: the slots are loaded and stored once per UNROLL elements each, and
# each still folds its elements in order, so the result is the same bits.
UNROLL = 4

# How a region's walk reaches its output slots: load_slots(offsets) and
# store_slots(offsets, values) at the views' offsets, and fold(offsets, steps, count,
# values), which folds `count` elements, `steps` apart, into the slots' values.
Folds = namedtuple("Folds", "load_slots store_slots fold")


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

    slots_from = len(used) + len(stores)

    def load_slots(offsets):
        return [em.load(out.base, out.dtype, slot)
                for (_, out), slot in zip(targets, offsets[slots_from:])]

    def store_slots(offsets, folded):
        for (_, out), slot, value in zip(targets, offsets[slots_from:], folded):
            em.store(value, out.base, out.dtype, slot)

    def fold(offsets, steps, count, folded):
        """Fold `count` elements along the split axis (steps: each view's stride there)
        into `folded`, the output slots' values; returns them."""
        for t in range(count):
            at = [em.advanced(offset, t * step) for offset, step in zip(offsets, steps)]
            env = _evaluate(lo, phase, inline_checks, operands, used, at)
            for (value, out), offset in zip(stores, at[len(used):]):
                em.store(env[value], out.base, out.dtype, offset)
            folded = [fold_in_order(em, r.op, out.dtype, acc,
                                    em.cast(env[r.inputs[0]], r.inputs[0].type.dtype,
                                            out.dtype))
                      for (r, out), acc in zip(targets, folded)]
        return folded

    folds = Folds(load_slots, store_slots, fold)
    _walk(lo, tuple(shape[axis] for axis in order), views, len(views) - len(targets), folds)


def _evaluate(lo, phase, inline_checks, operands, used, offsets):
    env = {v: lo.read(operands[v], offset) for v, offset in zip(used, offsets)}
    for node in phase.evaluate:
        values = [env[v] for v in node.inputs]
        for i in inline_checks.get(id(node), ()):
            lo._check_python_int(values[i], node, i)
        env[node.outputs[0]] = lo._scalar(node, values)
    return env


def _walk(lo, shape, views, first_slot, folds):
    """Loop over `shape`; when the innermost axis is kept and the one outside it
    reduced (the output slot views, from `first_slot` on, have stride 0 there only),
    step that reduced axis UNROLL indices at a time."""
    loop_shape, strides = collapse(shape, *[view.strides for view in views])
    slots = strides[first_slot:]
    work = math.prod(shape)  # the elements folded, whichever way the loops step
    along_split = len(loop_shape) >= 2 and slots and \
        all(s[-2] == 0 and s[-1] != 0 for s in slots)
    widest = max(view.dtype.itemsize for view in views)
    if along_split and loop_shape[-1] * widest <= VECTOR_BYTES:
        _walk_holding_slots(lo, loop_shape, views, strides, first_slot, folds, work)
        return

    def elements(offsets, steps, count):
        folds.store_slots(offsets, folds.fold(offsets, steps, count,
                                              folds.load_slots(offsets)))
    if along_split and isinstance(loop_shape[-2], Size):
        _walk_run_time_count(lo, loop_shape, views, strides, first_slot, elements, work)
        return
    if not along_split or loop_shape[-2] < 2 * UNROLL:
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


def _walk_run_time_count(lo, loop_shape, views, strides, first_slot, elements, work):
    """_walk's loops when the reduced axis outside the innermost has a run-time length
    (ir/sizes.py): UNROLL indices per pass over its whole blocks of UNROLL, as code for
    one size does, then the indices left one per pass (their offsets moved past the
    blocks at run time: the nest over them starts at index 0)."""
    em = lo.em
    count = loop_shape[-2]
    steps = [s[-2] for s in strides]

    def nest(blocks, stride, body):
        shape = loop_shape[:-2] + (blocks, loop_shape[-1])
        nest_views = [View(v.base, v.dtype, loop_shape, s[:-2] + (s[-2] * stride, s[-1]),
                           v.offset, v.constant) for v, s in zip(views, strides)]
        lo.loop_nest(shape, nest_views, body, owner=first_slot, work=work, vector=True)

    whole = Blocks(count, UNROLL)
    nest(whole, UNROLL, lambda offsets: elements(offsets, steps, UNROLL))

    def one_left(offsets):
        done = em.mul(I64(whole), I64(UNROLL))
        elements([em.moved(offset, done, step) for offset, step in zip(offsets, steps)],
                 steps, 1)
    nest(whole.rest(), 1, one_left)


def _walk_holding_slots(lo, loop_shape, views, strides, first_slot, folds, work):
    """The walk when the kept innermost axis fits in one vector: for each vector of
    output slots, the whole reduced axis (the collapsed loop's second last) is folded
    in a loop of its own while the slots' values stay in registers (in stack slots
    that LLVM's SROA promotes), stored once at the end. The loop over the reduced
    axis folds UNROLL elements per pass, each slot's in order.

    Loading and storing the slots around every UNROLL elements instead took the sum
    over the middle axis of 256x1024x16 0.20 ms against 0.12 ms; LLVM's LICM would
    hoist them, but only in its full pipeline, which took 40 ms to compile the MLP
    training step's module holding its bias gradient (a 256x10 column sum)."""
    em = lo.em
    steps = [s[-2] for s in strides]
    count = loop_shape[-2]
    passes, rest = divmod(count, UNROLL) if isinstance(count, int) else (None, None)
    shape = loop_shape[:-2] + loop_shape[-1:]
    outer = [View(v.base, v.dtype, shape, s[:-2] + s[-1:], v.offset, v.constant)
             for v, s in zip(views, strides)]

    def slots_of(offsets):
        start = folds.load_slots(offsets)
        held = [lo.entry_alloca(value.type) for value in start]
        for value, slot in zip(start, held):
            em.b.store(value, slot)

        def fold_from(first, count):
            at = [em.moved(offset, first, step) for offset, step in zip(offsets, steps)]
            values = [em.b.load(slot, typ=value.type) for value, slot in zip(start, held)]
            for value, slot in zip(folds.fold(at, steps, count, values), held):
                em.b.store(value, slot)
        if passes is None:  # a run-time count (ir/sizes.py)
            whole = Blocks(count, UNROLL)
            with em.for_range(I64(whole), name="fold") as index:
                fold_from(em.mul(index, I64(UNROLL)), UNROLL)
            done = em.mul(I64(whole), I64(UNROLL))
            with em.for_range(I64(whole.rest()), name="fold.rest") as index:
                fold_from(em.b.add(done, index), 1)
        if passes:
            with em.for_range(passes, name="fold") as index:
                fold_from(em.mul(index, I64(UNROLL)), UNROLL)
        if rest:
            fold_from(passes * UNROLL, rest)
        folds.store_slots(offsets, [em.b.load(slot, typ=value.type)
                                    for value, slot in zip(start, held)])
    lo.loop_nest(shape, outer, slots_of, owner=first_slot, work=work, vector=True)

