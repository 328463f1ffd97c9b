"""Layers that apply a function: Activation (by name) and Lambda (any function)."""
from ..errors import at_user_line
from . import activations
from .layer import Layer


class Activation(Layer):
    """activation(x), the activation given by name ('relu', ...) or as a function."""
    supports_masking = True

    def __init__(self, activation, name=None):
        super().__init__(name)
        self.activation = activations.get(activation)
        self.activation_name = activation if isinstance(activation, str) else None

    def call(self, x, training=False):
        return self.activation(x)

    def get_config(self):
        if self.activation_name is None:
            raise ValueError(at_user_line(
                f"{self.name} (Activation): its activation is a Python function, which a "
                f"saved model cannot hold; give the activation by name"))
        return {**super().get_config(), "activation": self.activation_name}


class Lambda(Layer):
    """function(x) (or function(x, **arguments)), computed with jitflow.numpy so it
    compiles with the model. Its output shape comes from tracing the function, so
    output_shape need not be given. A saved model holds no code: a model with a Lambda
    saves only when its function is re-registered under the same name."""

    def __init__(self, function, output_shape=None, arguments=None, name=None):
        super().__init__(name)
        if not callable(function):
            raise TypeError(at_user_line(
                f"{self.name} (Lambda): function must be callable, got "
                f"{type(function).__name__}"))
        self.function = function
        self.arguments = dict(arguments or {})

    def call(self, x, training=False):
        return self.function(x, **self.arguments)

    def get_config(self):
        raise ValueError(at_user_line(
            f"{self.name} (Lambda): a saved model holds no Python code; write the "
            f"computation as a Layer subclass registered with "
            f"@jitflow.nn.register_layer to save it"))


__all__ = ["Activation", "Lambda"]
