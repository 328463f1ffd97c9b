"""jitflow.v1.nn: TensorFlow's tf.nn functions, made from ops.NN_TABLE."""
from .ops import NN_TABLE, generate

__all__ = generate(NN_TABLE, globals())
