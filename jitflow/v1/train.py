"""jitflow.v1.train: TensorFlow's optimizers, as operations that assign Variables.

minimize(loss) = apply_gradients(compute_gradients(loss)): the gradients come from
gradients() (jitflow's autodiff), and each update is assign operations on the Variable
and its slots, grouped into one operation. Every read in a run sees the values the
Variables had when the run began, so slot updates and the step agree, as in TensorFlow.
"""
import numpy as np

from ..errors import at_user_line
from .gradients import gradients
from .graph import get_default_graph
from .io import write_graph  # noqa: F401  (train.write_graph, as in TensorFlow 1)
from .ops import sqrt
from .saver import Saver, import_meta_graph, latest_checkpoint  # noqa: F401  (as in TF)
from .state import Variable, group, trainable_variables


class Optimizer:
    def __init__(self, learning_rate, use_locking=False, name="Optimizer"):
        self.learning_rate = learning_rate
        self.name = name
        self._slots = {}  # (Variable, slot name) -> its slot Variable

    def compute_gradients(self, loss, var_list=None, **ignored):
        """[(gradient, variable)] for the trainable Variables (or var_list); the
        gradient is None for a Variable the loss does not depend on."""
        var_list = trainable_variables() if var_list is None else list(var_list)
        if not var_list:
            raise ValueError(at_user_line(f"{self.name}: there are no Variables to "
                                          f"optimize"))
        return list(zip(gradients(loss, var_list), var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """One operation that updates each Variable from its gradient."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError(at_user_line(
                f"{self.name}: no gradients for any of the Variables "
                f"{[v.op.name for _, v in grads_and_vars]}; does the loss depend on them?"))
        with get_default_graph().name_scope(name or self.name):
            updates = [self._apply(g, v) for g, v in pairs]
            updates += self._finish([v for _, v in pairs])
            if global_step is not None:
                updates.append(global_step.assign_add(1))
            return group(*updates, name="update")

    def minimize(self, loss, global_step=None, var_list=None, name=None, **ignored):
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step,
                                    name)

    def _finish(self, variables):
        return []

    def _slot(self, variable, slot_name, initial=0.0):
        key = (variable, slot_name)
        if key not in self._slots:
            with get_default_graph().name_scope(f"{variable.op.name}/"):
                self._slots[key] = Variable(
                    np.full(variable.shape.as_list(), initial, variable.dtype),
                    trainable=False, name=slot_name)
        return self._slots[key]

    def get_slot(self, variable, name):
        return self._slots.get((variable, name))


class GradientDescentOptimizer(Optimizer):
    """var -= learning_rate * gradient"""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(learning_rate, use_locking, name)

    def _apply(self, gradient, variable):
        return variable.assign_sub(self.learning_rate * gradient)


class MomentumOptimizer(Optimizer):
    """accumulation = momentum * accumulation + gradient;
    var -= learning_rate * accumulation (Nesterov: learning_rate * (gradient +
    momentum * accumulation))."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(learning_rate, use_locking, name)
        self.momentum, self.use_nesterov = momentum, use_nesterov

    def _apply(self, gradient, variable):
        accumulation = self._slot(variable, self.name)
        new = accumulation.assign(accumulation * self.momentum + gradient)
        step = gradient + self.momentum * new if self.use_nesterov else new
        return group(new, variable.assign_sub(self.learning_rate * step))


class AdamOptimizer(Optimizer):
    """Adam (Kingma and Ba) as TensorFlow computes it: with t the step number,
    lr_t = learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t),
    m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g^2,
    var -= lr_t m / (sqrt(v) + epsilon)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(learning_rate, use_locking, name)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self._powers = {}  # dtype -> (beta1^t, beta2^t) Variables

    def _beta_powers(self, dtype):
        if dtype not in self._powers:
            with get_default_graph().name_scope("/"):
                suffix = "" if not self._powers else f"_{dtype.name}"
                self._powers[dtype] = (
                    Variable(np.array(self.beta1, dtype), False, f"beta1_power{suffix}"),
                    Variable(np.array(self.beta2, dtype), False, f"beta2_power{suffix}"))
        return self._powers[dtype]

    def _apply(self, gradient, variable):
        beta1, beta2 = self.beta1, self.beta2
        beta1_power, beta2_power = self._beta_powers(variable.dtype)
        m, v = self._slot(variable, self.name), self._slot(variable, f"{self.name}_1")
        rate = self.learning_rate * sqrt(1 - beta2_power) / (1 - beta1_power)
        new_m = m.assign(beta1 * m + (1 - beta1) * gradient)
        new_v = v.assign(beta2 * v + (1 - beta2) * gradient * gradient)
        return group(new_m, new_v,
                     variable.assign_sub(rate * new_m / (sqrt(new_v) + self.epsilon)))

    def _finish(self, variables):
        updates = []
        for beta1_power, beta2_power in {v.dtype: self._beta_powers(v.dtype)
                                         for v in variables}.values():
            updates += [beta1_power.assign(beta1_power * self.beta1),
                        beta2_power.assign(beta2_power * self.beta2)]
        return updates
