"""v1.summary.FileWriter: TensorBoard event files, with the graph shown by name scope.

    writer = tf.summary.FileWriter("logs", sess.graph)   # or tf.get_default_graph()
    writer.add_summary(summary, global_step)
    writer.close()

It writes through jitflow.summary (the tensorboard package's own writer and protocol
buffers), imported when a FileWriter is made: tensorboard is an optional dependency.
"""


class FileWriter:
    """Writes an event file into `logdir`; given a graph, writes it first, as TensorFlow
    1's FileWriter does. The graph's name scopes are TensorBoard's groups."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120,
                 filename_suffix=None, session=None):
        from ..summary import create_file_writer  # loads tensorboard, only when used
        if graph is None and session is not None:
            graph = session.graph
        self._writer = create_file_writer(logdir, max_queue, int(flush_secs * 1000),
                                          filename_suffix or "")
        if graph is not None:
            self.add_graph(graph)

    def get_logdir(self):
        return self._writer.logdir

    def add_graph(self, graph, global_step=None):
        """The graph TensorBoard's Graphs tab shows, grouped by name scope."""
        self._writer.graph(graph)

    def add_summary(self, summary, global_step=None):
        """A Summary protocol buffer or its serialized bytes (TensorBoard's, e.g. from
        tensorboard.plugins.scalar.summary_v2.scalar_pb)."""
        self._writer.add_summary(summary, 0 if global_step is None else global_step)

    def add_scalar(self, tag, value, global_step):
        """One point of the curve `tag` (a convenience beside add_summary)."""
        self._writer.scalar(tag, value, global_step)

    def add_histogram(self, tag, values, global_step):
        self._writer.histogram(tag, values, global_step)

    def add_event(self, event):
        self._writer.add_event(event)

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<jitflow.v1.summary.FileWriter {self.get_logdir()!r}>"
