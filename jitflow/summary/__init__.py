"""TensorBoard summaries: scalars, histograms and graphs in event files.

    writer = jitflow.summary.create_file_writer("logs/run1")
    for step in range(100):
        writer.scalar("loss", loss, step)
    writer.histogram("weights", w, step)
    writer.graph(train_step, x, y)     # or a jitflow.v1 Graph
    writer.close()

Written with the tensorboard package's writer and protocol buffers (an optional
dependency: pip install jitflow[tensorboard]); jitflow.v1.summary.FileWriter and
jitflow.nn.callbacks.TensorBoard write through this.
"""
try:
    import tensorboard  # noqa: F401
except ImportError:
    raise ImportError("jitflow.summary writes TensorBoard's files with the tensorboard "
                      "package, which is not installed: pip install tensorboard (or "
                      "jitflow[tensorboard])") from None

from .graph_def import graph_def  # noqa: E402
from .writer import SummaryWriter, create_file_writer  # noqa: E402

__all__ = ["SummaryWriter", "create_file_writer", "graph_def"]
