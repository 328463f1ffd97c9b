"""Reading TensorBoard event files back with tensorboard's own EventAccumulator."""
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.util import tensor_util


def accumulator(logdir):
    """Everything in `logdir`'s event files, nothing sampled away."""
    guidance = {event_accumulator.TENSORS: 0, event_accumulator.GRAPH: 1}
    found = event_accumulator.EventAccumulator(str(logdir), size_guidance=guidance)
    found.Reload()
    return found


def series(found, tag):
    """[(step, value as an ndarray)] of a tensor summary tag."""
    return [(event.step, tensor_util.make_ndarray(event.tensor_proto))
            for event in found.Tensors(tag)]


def plugin(found, tag):
    return found.SummaryMetadata(tag).plugin_data.plugin_name
