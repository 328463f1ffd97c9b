"""jitflow.nn: the building blocks of neural networks.

    import jitflow.nn as nn
    w = nn.initializers.he_normal((784, 128), rng=np.random.default_rng(0))
    loss = nn.losses.sparse_softmax_cross_entropy_from_logits(labels, nn.relu(x @ w) @ v)

initializers make weights' starting values (NumPy arrays); activations and losses are
functions of arrays that work eagerly and traced by jitflow.function, and differentiate.
The activation functions are also here at top level (nn.relu, nn.gelu, ...).

Models as in Keras: layers called on nn.Input's symbolic tensors build a graph that
nn.Model(inputs, outputs) runs; compile and fit train it with one compiled step.

    inputs = nn.Input((4,))
    hidden = nn.Dense(16, activation="relu")(inputs)
    model = nn.Model(inputs, nn.Dense(3, activation="softmax")(hidden))
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, labels, batch_size=32, epochs=10, validation_split=0.2)
    model.save("model.jitflow")            # nn.load_model reads it back, ready to resume

Layers for sequences (Embedding, SimpleRNN, LSTM, GRU over jitflow.scan, Bidirectional,
MultiHeadAttention, Conv1D), images (Conv2D, Conv2DTranspose, pooling, UpSampling2D),
shapes (Reshape, Permute, RepeatVector, Flatten) and merging (Add, Concatenate, ...).
"""
from . import (activations, callbacks, constraints, initializers, losses, metrics,
               regularizers)
from .activations import (elu, gelu, leaky_relu, linear, log_softmax, relu, selu, sigmoid,
                          silu, softmax, softplus, swish, tanh)
from .convolution import conv2d
from .input_layer import InputLayer
from .layer import Layer
from .layers import (AveragePooling2D, AvgPool2D, Conv2D, Dense, Flatten, MaxPool2D,
                     MaxPooling2D)
from .normalization import BatchNorm, BatchNormalization, LayerNorm, LayerNormalization
from .pooling import avg_pool2d, max_pool2d
from .regularization import Dropout
from .model import Model
from .sequential import Sequential
from .input_layer import Input
from .symbolic import SymbolicTensor
from .attention import MultiHeadAttention
from .convolution import conv1d
from .conv_transpose import conv2d_transpose
from .convolution_layers import Conv1D, Conv2DTranspose
from .embedding import Embedding
from .function_layers import Activation, Lambda
from .global_pooling import (GlobalAveragePooling1D, GlobalAveragePooling2D,
                             GlobalMaxPooling1D, GlobalMaxPooling2D)
from .layer_registry import register_layer
from .masking import Masking
from .model_file import load_model
from .merging import Add, Average, Concatenate, Maximum, Minimum, Multiply, Subtract
from .recurrent import GRU, LSTM, SimpleRNN
from .reshaping import Permute, RepeatVector, Reshape, UpSampling2D
from .wrappers import Bidirectional, TimeDistributed

__all__ = ["activations", "callbacks", "constraints", "initializers", "losses", "metrics",
           "regularizers", "elu", "gelu", "leaky_relu", "linear",
           "log_softmax", "relu", "selu", "sigmoid", "silu", "softmax", "softplus", "swish",
           "tanh", "conv2d", "max_pool2d", "avg_pool2d", "Layer", "Dense", "Conv2D",
           "MaxPool2D", "AvgPool2D", "MaxPooling2D", "AveragePooling2D", "Flatten",
           "Dropout", "LayerNorm", "LayerNormalization", "BatchNorm", "BatchNormalization",
           "Sequential", "Input", "InputLayer", "SymbolicTensor", "Model",
           "MultiHeadAttention", "conv1d", "conv2d_transpose", "Conv1D", "Conv2DTranspose",
           "Embedding", "Masking", "Activation", "Lambda", "GlobalAveragePooling1D",
           "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D",
           "register_layer", "load_model", "Add", "Average", "Concatenate", "Maximum", "Minimum",
           "Multiply", "Subtract", "GRU", "LSTM", "SimpleRNN", "Permute", "RepeatVector",
           "Reshape", "UpSampling2D", "Bidirectional", "TimeDistributed"]
