"""A learning rate callbacks can change between steps without a new compile.

compile gives an optimizer whose learning rate is a number an AdjustableRate instead: a
schedule (a callable of the step count, which optimizers accept) that reads a float64
Variable, so the compiled step reads the rate as state and an assignment reaches it.
"""
import numpy as np

from ..errors import at_user_line
from ..variables import Variable


class AdjustableRate:
    def __init__(self, value, name):
        self.variable = Variable(np.float64(value), name=f"{name}/learning_rate",
                                 trainable=False)

    def __call__(self, step):
        return self.variable.value

    def __float__(self):
        return float(self.variable.numpy())

    def __repr__(self):
        return f"AdjustableRate({float(self)})"


def make_adjustable(optimizer):
    """Give `optimizer` an AdjustableRate if its learning rate is a number."""
    if not callable(optimizer.learning_rate):
        optimizer.learning_rate = AdjustableRate(optimizer.learning_rate, optimizer.name)


def get_learning_rate(optimizer, who):
    return float(_adjustable(optimizer, who))


def set_learning_rate(optimizer, value, who):
    _adjustable(optimizer, who).variable.assign(np.float64(value))


def _adjustable(optimizer, who):
    rate = optimizer.learning_rate
    if not isinstance(rate, AdjustableRate):
        raise TypeError(at_user_line(
            f"{who}: the optimizer's learning rate is the schedule {rate!r}; a callback "
            f"can only change a learning rate given as a number"))
    return rate
