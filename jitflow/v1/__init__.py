"""jitflow.v1: the TensorFlow-1 style graph API over jitflow's IR.

    import jitflow.v1 as tf

    x = tf.placeholder(tf.float32, shape=(None, 2), name="x")
    w = tf.Variable(np.ones((2, 1), np.float32), name="w")
    y = tf.sigmoid(tf.matmul(x, w))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print(sess.run(y, {x: [[1.0, 2.0]]}))

Building the graph runs nothing; Session.run compiles the part of the graph a run needs
with jitflow (trace to IR, optimize, native code), once per kind of run.
"""
import numpy as _np

from . import io, nn, summary, train
from . import tensor_methods  # noqa: F401  (gives the Tensor its operators and methods)
from .control_flow import cond, while_loop
from .custom_gradients import RegisterGradient
from .gradients import gradients
from .graph import Graph, get_default_graph, name_scope, reset_default_graph
from .graph_def import GraphDef
from .graph_import import import_graph_def
from .ops import *  # noqa: F401,F403
from .ops import __all__ as _op_names
from .random_ops import random_normal, random_uniform
from .session import FailedPreconditionError, InteractiveSession, Session
from .state import (Constant, Variable, constant, convert_to_tensor, global_variables,
                    global_variables_initializer, group, initialize_all_variables,
                    no_op, placeholder, placeholder_with_default, trainable_variables,
                    variables_initializer)
from .tensor import Operation, Tensor, TensorShape

float32, float64 = _np.dtype(_np.float32), _np.dtype(_np.float64)
int32, int64, bool = _np.dtype(_np.int32), _np.dtype(_np.int64), _np.dtype(_np.bool_)

__all__ = ["Graph", "Operation", "Tensor", "TensorShape", "Session", "InteractiveSession",
           "FailedPreconditionError", "gradients", "RegisterGradient", "cond", "while_loop",
           "Variable", "Constant", "constant", "placeholder", "placeholder_with_default",
           "convert_to_tensor", "get_default_graph", "reset_default_graph", "name_scope",
           "group", "no_op", "global_variables", "trainable_variables",
           "global_variables_initializer", "initialize_all_variables",
           "variables_initializer", "nn", "summary", "train", "random_normal", "random_uniform",
           "float32", "float64", "int32", "int64", "bool", "io", "GraphDef",
           "import_graph_def"] + list(_op_names)
