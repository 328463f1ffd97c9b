"""RMSprop: steps scaled by a running root mean square of the gradients, as Keras
computes it."""
from .. import numpy as jnp
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """RMSprop(learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
    name="RMSprop"):
        velocity = rho * velocity + (1 - rho) * g * g
        average = rho * average + (1 - rho) * g   (centered)
        increment = lr * g / sqrt(velocity [- average ** 2 if centered] + epsilon)
        moment = momentum * moment + increment; var -= moment   (with momentum)
        var -= increment                                        (otherwise)
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name="RMSprop"):
        super().__init__(learning_rate, name)
        # Python floats stay weakly typed, so float32 Variables get float32 updates.
        self.rho, self.momentum = float(rho), float(momentum)
        self.epsilon = float(epsilon)
        self.centered = bool(centered)
        self.slot_names = ("velocity",)
        if self.centered:
            self.slot_names += ("average_gradient",)
        if self.momentum:
            self.slot_names += ("momentum",)

    def update_step(self, gradient, variable, slots, rate):
        velocity = (self.rho * slots["velocity"].value
                    + (1 - self.rho) * (gradient * gradient))
        updates = [(slots["velocity"], velocity)]
        denominator = velocity
        if self.centered:
            average = (self.rho * slots["average_gradient"].value
                       + (1 - self.rho) * gradient)
            updates.append((slots["average_gradient"], average))
            denominator = velocity - average * average
        increment = rate * gradient / jnp.sqrt(denominator + self.epsilon)
        if self.momentum:
            moment = self.momentum * slots["momentum"].value + increment
            return updates + [(slots["momentum"], moment),
                              (variable, variable.value - moment)]
        return updates + [(variable, variable.value - increment)]
