"""Adam and AdamW, with Keras's formulas (the bias corrections folded into the step
size alpha)."""
from .. import numpy as jnp
from .optimizer import Optimizer


class Adam(Optimizer):
    """Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
    name="Adam"). At step t = iterations + 1:
        m += (g - m) * (1 - beta_1)
        v += (g * g - v) * (1 - beta_2)
        vhat = max(vhat, v)   (amsgrad, which then uses vhat for v)
        alpha = lr * sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
        var -= alpha * m / (sqrt(v) + epsilon)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="Adam"):
        super().__init__(learning_rate, name)
        # Python floats stay weakly typed, so float32 Variables get float32 updates.
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)
        self.epsilon = float(epsilon)
        self.amsgrad = bool(amsgrad)
        self.slot_names = ("m", "v", "vhat") if self.amsgrad else ("m", "v")

    def update_step(self, gradient, variable, slots, rate):
        updates, delta = self.adam_step(gradient, variable, slots, rate)
        return updates + [(variable, variable.value - delta)]

    def adam_step(self, gradient, variable, slots, rate):
        """(the slots' updates, what to subtract from the Variable)."""
        # The step count is int64: as a float of the Variable's dtype, beta ** t keeps
        # that dtype instead of promoting to float64.
        t = jnp.asarray(self.iterations.value + 1, dtype=variable.dtype)
        alpha = rate * jnp.sqrt(1 - self.beta_2 ** t) / (1 - self.beta_1 ** t)
        m, v = slots["m"].value, slots["v"].value
        m = m + (gradient - m) * (1 - self.beta_1)
        v = v + (gradient * gradient - v) * (1 - self.beta_2)
        updates = [(slots["m"], m), (slots["v"], v)]
        if self.amsgrad:
            v = jnp.maximum(slots["vhat"].value, v)
            updates.append((slots["vhat"], v))
        return updates, alpha * m / (jnp.sqrt(v) + self.epsilon)


class AdamW(Adam):
    """AdamW(learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
    epsilon=1e-7, amsgrad=False, name="AdamW"): Adam after a decoupled weight decay,
    var -= var * weight_decay * lr, which the gradient's scale does not affect."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, name="AdamW"):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, name)
        self.weight_decay = float(weight_decay)

    def update_step(self, gradient, variable, slots, rate):
        decayed = variable.value - variable.value * self.weight_decay * rate
        updates, delta = self.adam_step(gradient, variable, slots, rate)
        return updates + [(variable, decayed - delta)]
