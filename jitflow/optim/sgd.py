"""SGD: gradient descent, with momentum and Nesterov momentum as Keras computes them."""
from .optimizer import Optimizer


class SGD(Optimizer):
    """SGD(learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD").

    Without momentum: var -= lr * g. With momentum m:
        velocity = m * velocity - lr * g
        var += m * velocity - lr * g   (nesterov)
        var += velocity                (otherwise)
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD"):
        super().__init__(learning_rate, name)
        # Python floats stay weakly typed, so float32 Variables get float32 updates.
        self.momentum = float(momentum)
        if not 0.0 <= self.momentum <= 1.0:
            raise ValueError(f"{name}: momentum must be in [0, 1], got {momentum}")
        self.nesterov = bool(nesterov)
        self.slot_names = ("momentum",) if self.momentum else ()

    def update_step(self, gradient, variable, slots, rate):
        if not self.momentum:
            return [(variable, variable.value - rate * gradient)]
        velocity = self.momentum * slots["momentum"].value - rate * gradient
        if self.nesterov:
            step = self.momentum * velocity - rate * gradient
        else:
            step = velocity
        return [(slots["momentum"], velocity), (variable, variable.value + step)]
