"""SummaryWriter: scalars, histograms and graphs written to TensorBoard event files.

The files are written by the tensorboard package's own EventFileWriter, and the
summaries made by its own functions (scalar_pb, histogram_pb), so TensorBoard reads
them as it reads TensorFlow's: scalars and histograms in its current tensor form, the
graph as a GraphDef.
"""
import time

import numpy as np
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.plugins.histogram.summary_v2 import histogram_pb
from tensorboard.plugins.scalar.summary_v2 import scalar_pb
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ..drawing import picture
from .graph_def import graph_def

HISTOGRAM_BUCKETS = 30  # TensorBoard's own default


class SummaryWriter:
    """Writes one event file in `logdir` (made if missing). Use it as a context manager
    or close() it; flush() makes what was written so far visible to TensorBoard."""

    def __init__(self, logdir, max_queue=10, flush_millis=120_000, filename_suffix=""):
        self.logdir = str(logdir)
        self._writer = EventFileWriter(self.logdir, max_queue_size=max_queue,
                                       flush_secs=max(1, flush_millis // 1000),
                                       filename_suffix=filename_suffix)
        self._closed = False

    def scalar(self, name, value, step, description=None):
        """One point of the curve `name` (a real number) at `step`."""
        self.add_summary(scalar_pb(name, _real(value, name, "scalar"), description), step)

    def histogram(self, name, values, step, buckets=HISTOGRAM_BUCKETS, description=None):
        """The distribution of `values` (an array of real numbers) at `step`."""
        array = _real(values, name, "histogram")
        self.add_summary(histogram_pb(name, array, buckets, description), step)

    def graph(self, graph_or_function, *example_args, **example_kwargs):
        """The graph TensorBoard's Graphs tab shows: a jitflow.v1 Graph, an IR Graph, a
        function at example arguments, or a Picture (jitflow.drawing.picture)."""
        drawn = picture(graph_or_function, *example_args, **example_kwargs)
        self.add_event(event_pb2.Event(graph_def=graph_def(drawn).SerializeToString()))

    def add_summary(self, summary, step):
        """A Summary protocol buffer (or its serialized bytes) at `step`."""
        if isinstance(summary, bytes):
            summary = summary_pb2.Summary.FromString(summary)
        self.add_event(event_pb2.Event(summary=summary, step=int(step)))

    def add_event(self, event):
        """An Event protocol buffer, stamped with the time now unless it has one."""
        self._check_open()
        if not event.wall_time:
            event.wall_time = time.time()
        self._writer.add_event(event)

    def flush(self):
        self._check_open()
        self._writer.flush()

    def close(self):
        """Write what is pending and close the file (closing twice does nothing)."""
        if not self._closed:
            self._writer.close()
            self._closed = True

    def _check_open(self):
        if self._closed:
            raise RuntimeError(f"SummaryWriter({self.logdir!r}) is closed")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<jitflow.summary.SummaryWriter {self.logdir!r}>"


def create_file_writer(logdir, max_queue=10, flush_millis=120_000, filename_suffix=""):
    """A SummaryWriter writing event files into `logdir`."""
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


def _real(value, name, what):
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"summary {what} {name!r}: needs real numbers, got an array of "
                        f"dtype {array.dtype}")
    if what == "scalar" and array.size != 1:
        raise ValueError(f"summary scalar {name!r}: needs one number, got an array of "
                         f"shape {array.shape}")
    return array.reshape(()) if what == "scalar" else array
