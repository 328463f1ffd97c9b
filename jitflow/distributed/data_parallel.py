"""Data-parallel training in Horovod's style: every process holds the whole model and
trains on its own share of each batch; the gradients are averaged over the processes
before every update, so all processes make the same update and stay identical.

    broadcast_variables(model.variables, root=0)   # the same start everywhere
    opt = DistributedOptimizer(jitflow.optim.SGD(0.1))
    opt.apply_gradients(zip(grads, variables))     # eager or in @jitflow.function

or, averaging where the gradients are taken, DistributedGradientTape in place of
jitflow.GradientTape (with any optimizer).

Tensor fusion: one all_reduce per gradient would pay MPI's latency once per weight
array, which for small biases costs more than their bytes. The gradients are instead
packed, per dtype, into flat buffers of up to `fusion_bytes` (Horovod's 64 MiB by
default; a single larger gradient goes alone), each averaged with one all_reduce and
cut back into the gradients' shapes. In compiled code the packing is a concatenate into
the buffer MPI reads, and the cutting views of the buffer MPI wrote.

Overlap (overlap=True, the default): the buffers are filled from the last gradient
back, the order in which backpropagation makes them, and each buffer's all_reduce is
split into a start and a wait (collectives.all_reduce_overlapped): compiled code starts
a buffer's reduction as soon as its gradients are computed and waits for it only where
the update needs it, so the rest of the backward pass runs while it is in flight. With
one buffer for all the gradients, nothing is left to overlap: a smaller fusion_bytes
makes several.
"""
import numpy as np

from .. import ops, pytree
from ..ops.slicing import slice_array
from ..tape import GradientTape
from ..trace import constant_type
from ..variables import Variable
from .collectives import all_reduce, all_reduce_overlapped, broadcast
from .runtime import size

FUSION_BYTES = 64 * 2 ** 20


def fusion_groups(types, fusion_bytes=FUSION_BYTES):
    """Lists of positions in `types` (TensorTypes) to pack together, from the last
    back (as backpropagation makes the gradients): runs of one dtype, cut where a
    buffer would pass fusion_bytes."""
    groups, open_groups = [], {}  # dtype -> (positions, bytes) of the buffer filling
    for i in reversed(range(len(types))):
        type = types[i]
        nbytes = type.size * type.dtype.itemsize
        positions, filled = open_groups.get(type.dtype, (None, 0))
        if positions is None or filled + nbytes > fusion_bytes:
            positions, filled = [], 0
            groups.append(positions)
        positions.append(i)
        open_groups[type.dtype] = (positions, filled + nbytes)
    return groups


def average_gradients(gradients, fusion_bytes=FUSION_BYTES, overlap=True):
    """Each gradient averaged over the processes (None stays None), through a few fused
    all_reduces, overlapped with other work in compiled code (see the module's
    docstring). The same on every process: all must pass gradients of the same shapes
    and dtypes in the same order."""
    gradients = list(gradients)
    present = [i for i, g in enumerate(gradients) if g is not None]
    types = [constant_type(gradients[i]).strong() for i in present]
    for group in fusion_groups(types, fusion_bytes):
        parts = [ops.reshape(gradients[present[i]], (types[i].size,)) for i in group]
        total = parts[0] if len(parts) == 1 else ops.concatenate(parts, axis=0)
        averaged = ops.divide(all_reduce_overlapped(total), size()) if overlap else \
            all_reduce(total, "mean")
        start = 0
        for i in group:
            piece = slice_array(averaged, starts=(start,), steps=(1,),
                                sizes=(types[i].size,))
            gradients[present[i]] = ops.reshape(piece, types[i].shape)
            start += types[i].size
    return gradients


def broadcast_variables(variables, root=0):
    """Give every process `root`'s values of `variables` (Variables; or a model, whose
    `weights` they are; or an optimizer, whose `variables()`), eagerly, as training
    starts."""
    for variable in _variables_of(variables):
        variable.assign(np.asarray(broadcast(variable.numpy(), root)))


def _variables_of(source):
    found = getattr(source, "weights", None)
    if found is None:
        found = getattr(source, "variables", source)
        found = found() if callable(found) else found
    found = list(found)
    for variable in found:
        if not isinstance(variable, Variable):
            raise TypeError(f"broadcast_variables: expected jitflow.Variables, got a "
                            f"{type(variable).__name__}")
    return found


class _AveragedGradients:
    """Put in front of an optimizer's class: apply_gradients averages first."""
    fusion_bytes = FUSION_BYTES
    overlap = True

    def apply_gradients(self, grads_and_vars):
        pairs = list(grads_and_vars)
        # Checked before any message goes out, so a bad pair raises here, not later.
        self._checked_pairs(pairs)
        gradients = [g if g is None or not constant_type(g).weak else ops.cast(g, v.dtype)
                     for g, v in pairs]
        if size() > 1:
            gradients = average_gradients(gradients, self.fusion_bytes, self.overlap)
        super().apply_gradients(zip(gradients, [v for _, v in pairs]))


def DistributedOptimizer(optimizer, fusion_bytes=FUSION_BYTES, overlap=True):
    """`optimizer` (a jitflow.optim optimizer) whose apply_gradients first averages the
    gradients over the processes, fused and, with overlap, overlapped with the backward
    pass in compiled code (see the module's docstring).

    As Horovod does, the result is an instance of a subclass of the optimizer's own
    class, so it is still an Optimizer of its kind (model.compile takes it); it shares
    the optimizer's state (`iterations`, slots, learning rate): one object's steps are
    the other's."""
    if not (callable(getattr(optimizer, "apply_gradients", None))
            and hasattr(optimizer, "_checked_pairs")):
        raise TypeError(f"DistributedOptimizer: expected a jitflow.optim optimizer, got "
                        f"{type(optimizer).__name__}")
    if isinstance(optimizer, _AveragedGradients):
        raise TypeError("DistributedOptimizer: the optimizer already averages its "
                        "gradients over the processes")
    if not isinstance(fusion_bytes, (int, np.integer)) or fusion_bytes < 1:
        raise ValueError(f"DistributedOptimizer: fusion_bytes must be a positive int, "
                         f"got {fusion_bytes!r}")
    kind = type(optimizer)
    distributed = type(f"Distributed{kind.__name__}", (_AveragedGradients, kind),
                       {"fusion_bytes": int(fusion_bytes), "overlap": bool(overlap),
                        "__module__": __name__})
    wrapped = object.__new__(distributed)
    wrapped.__dict__ = optimizer.__dict__
    return wrapped


class DistributedGradientTape(GradientTape):
    """A GradientTape whose gradient() gives the gradients averaged over the processes
    (fused, and overlapped unless overlap=False: see the module's docstring). Every
    process must ask for the same gradients: a Variable without one (None) on some
    process but not on another would leave the processes' all-reduces unmatched."""

    def __init__(self, *args, fusion_bytes=FUSION_BYTES, overlap=True, **kwargs):
        super().__init__(*args, **kwargs)
        self.fusion_bytes, self.overlap = int(fusion_bytes), bool(overlap)

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients="none"):
        gradients = super().gradient(target, sources, output_gradients,
                                     unconnected_gradients)
        if size() == 1:
            return gradients
        leaves, _, structure = pytree.flatten(gradients)  # None is no leaf
        return pytree.unflatten(structure, average_gradients(leaves, self.fusion_bytes,
                                                             self.overlap))


__all__ = ["DistributedOptimizer", "DistributedGradientTape", "broadcast_variables",
           "average_gradients", "fusion_groups", "FUSION_BYTES"]
