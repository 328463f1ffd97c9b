"""jitflow.optim: optimizers that update jitflow.Variables from their gradients, with
Keras's formulas, eagerly and inside @jitflow.function alike.

    opt = jitflow.optim.Adam(learning_rate=1e-3)

    @jitflow.function
    def train_step(x, y):
        grads = jitflow.grad(loss, argnums=(0, 1))(w, b, x, y)
        opt.apply_gradients(zip(grads, [w, b]))

A learning rate is a number or a schedule (jitflow.optim.schedules, or any callable of
the step count).
"""
from . import schedules
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "schedules"]
