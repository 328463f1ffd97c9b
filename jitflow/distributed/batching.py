"""vmap of the collectives: one collective for the whole batch.

all_reduce and broadcast act on each element alike, so the batch goes through as it is
(an operand vmap does not batch is repeated along the batch first, so the result has
the batch axis every batched value carries); so do all_reduce's start and wait, whose
requests pass from the one to the other untouched. all_gather and reduce_scatter work on
axis 0, which for a batched value is the batch: they run with the batch moved behind
the example's first axis, and it is moved back in front afterwards.
"""
from .. import ops
from ..batching.rules import RULES, batched_to_front
from ..ops.slicing import shape_of
from ..trace import bind


def _whole_batch(prim, args, batched, size, **params):
    (x,), (is_batched,) = args, batched
    return bind(prim, x if is_batched else batched_to_front(x, size), **params)


def _wait_whole_batch(prim, args, batched, size, **params):
    """The wait of the whole batch's all_reduce_start (_whole_batch): its requests,
    made for the whole batch and read by this wait alone, come as they are."""
    (x, requests), (is_batched, _) = args, batched
    return bind(prim, x if is_batched else batched_to_front(x, size), requests, **params)


def _batch_second(x, is_batched, size):
    """The batch axis moved to position 1: (n, B, ...), a 0-d example as one row."""
    x = x if is_batched else batched_to_front(x, size)
    shape = shape_of(x)
    if len(shape) == 1:
        return ops.reshape(x, (1,) + shape)
    return ops.transpose(x, (1, 0) + tuple(range(2, len(shape))))


def _batch_first(y):
    shape = shape_of(y)
    return ops.transpose(y, (1, 0) + tuple(range(2, len(shape))))


def _along_rows(prim, args, batched, size, **params):
    return _batch_first(bind(prim, _batch_second(args[0], batched[0], size), **params))


RULES.update({"all_reduce": _whole_batch, "broadcast_root": _whole_batch,
              "all_reduce_start": _whole_batch, "all_reduce_wait": _wait_whole_batch,
              "all_gather": _along_rows, "reduce_scatter": _along_rows})
