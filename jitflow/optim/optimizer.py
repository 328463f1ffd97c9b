"""The Optimizer base: checks (gradient, Variable) pairs, keeps each Variable's state in
slot Variables, and applies a step all at once.

A step checks all its pairs before it makes any slot, and computes every new value (of
the Variables, their slots and `iterations`) before it assigns any, so a step that raises
changes no value, eagerly as well as compiled. Slots are Variables made from NumPy zeros
the first time a step updates a Variable, so they can be made while a function is traced,
after which the compiled step reads and writes them.
"""
import numpy as np

from .. import numpy as jnp
from .. import pytree
from ..errors import at_user_line
from ..trace import constant_type
from ..variables import Variable, value_type
from .slots import SlotTable


class Optimizer:
    """Optimizer(learning_rate, name): updates float Variables from their gradients.

    `learning_rate` is a number or a schedule: a callable of the step count (the value of
    `iterations`, an int64 array or traced value) giving the rate. A subclass lists its
    per-Variable state in `slot_names` and gives a step's new values in `update_step`.
    """
    slot_names = ()

    def __init__(self, learning_rate, name):
        self.name = name
        self.learning_rate = (learning_rate if callable(learning_rate)
                              else float(learning_rate))
        self.iterations = Variable(np.int64(0), name=f"{name}/iterations",
                                   trainable=False)
        self._slots = SlotTable(name)  # each Variable's {slot name: slot Variable}

    def apply_gradients(self, grads_and_vars):
        """One step for each (gradient, Variable) pair whose gradient is not None, then
        `iterations` + 1."""
        pairs = self._checked_pairs(list(grads_and_vars))
        rate = self._learning_rate_now()
        updates = []
        for gradient, variable in pairs:
            target, gradient = _as_updated(variable, gradient)
            updates += self.update_step(gradient, target, self._slots_for(variable, target),
                                        jnp.asarray(rate, dtype=target.dtype))
        updates.append((self.iterations, self.iterations.value + 1))
        for target, value in updates:
            target.assign(value)

    def update_step(self, gradient, variable, slots, rate):
        """[(Variable, its new value)] for one Variable: the Variable itself and its
        slots (`slots`: slot name -> Variable). `rate` has the Variable's dtype."""
        raise NotImplementedError(f"{type(self).__name__}.update_step")

    def variables(self):
        """The optimizer's own Variables: `iterations`, then every slot."""
        return [self.iterations] + self._slots.all_slots()

    def _learning_rate_now(self):
        if not callable(self.learning_rate):
            return self.learning_rate
        rate = self.learning_rate(self.iterations.value)
        shape = constant_type(rate).shape
        if shape != ():
            raise ValueError(self._error(f"the learning rate schedule gave a value of "
                                         f"shape {shape}, not a scalar"))
        return rate

    def _slots_for(self, variable, target):
        """`variable`'s slots (of `target`'s type: its parts' for a complex one), made
        on the first step that updates it."""
        return self._slots.slots_for(variable, lambda: {
            name: Variable(np.zeros(target.shape, target.dtype),
                           name=f"{self.name}/{variable.name}/{name}", trainable=False)
            for name in self.slot_names}, (target.shape, target.dtype))

    # --- checks -------------------------------------------------------------------------
    def _checked_pairs(self, pairs):
        """The pairs with a gradient, each gradient checked against its Variable."""
        checked, seen = [], set()
        for gradient, variable in pairs:
            self._check_variable(variable)
            if id(variable) in seen:
                raise ValueError(self._error(
                    f"Variable {variable.name!r} appears twice; give each Variable one "
                    f"gradient (add them up first)"))
            seen.add(id(variable))
            if gradient is not None:
                self._check_gradient(gradient, variable)
                checked.append((gradient, variable))
        if not checked and pairs:
            names = ", ".join(repr(variable.name) for _, variable in pairs)
            raise ValueError(self._error(f"no gradient for any Variable ({names})"))
        return checked

    def _check_variable(self, variable):
        if not isinstance(variable, Variable):
            raise TypeError(self._error(
                f"expected (gradient, jitflow.Variable) pairs, got a "
                f"{type(variable).__name__} in place of a Variable"))
        if variable.dtype.kind not in "fc":
            raise TypeError(self._error(
                f"Variable {variable.name!r} has dtype {variable.dtype}; optimizers "
                f"update float and complex Variables only"))

    def _check_gradient(self, gradient, variable):
        """The gradient must have the Variable's shape and dtype; a Python number takes
        the Variable's dtype in the arithmetic, as it does in NumPy."""
        what = f"the gradient of Variable {variable.name!r}"
        try:
            given = value_type(gradient)
        except (TypeError, ValueError):
            raise TypeError(self._error(f"{what} is a {type(gradient).__name__}, not an "
                                        f"array")) from None
        if given.shape != variable.shape:
            raise ValueError(self._error(
                f"{what} has shape {given.shape}, but the Variable has shape "
                f"{variable.shape}"))
        if given.dtype != variable.dtype and not given.weak:
            raise TypeError(self._error(
                f"{what} has dtype {given.dtype}, but the Variable holds "
                f"{variable.dtype}; cast the gradient first"))

    def _error(self, message):
        return at_user_line(f"{self.name}.apply_gradients: {message}")


class _Parts:
    """A complex Variable as the optimizers update it: its real and imaginary parts, one
    real array with a last axis of 2, each part a parameter of its own (as PyTorch's
    optimizers update complex parameters: Adam's moments are per part)."""

    def __init__(self, variable):
        self.variable, self.name = variable, variable.name
        self.dtype = np.dtype(np.float32 if variable.dtype == np.complex64 else np.float64)
        self.shape = tuple(variable.shape) + (2,)

    @property
    def value(self):
        return pytree.as_interleaved(self.variable.read())

    def assign(self, value):
        self.variable.assign(pytree.from_interleaved(value, self.variable.dtype))


def _as_updated(variable, gradient):
    """(what update_step updates, its gradient): a complex Variable's parts, and the
    parts' gradient (dL/dx, dL/dy), which is conj of jitflow's complex gradient
    dL/dx - i dL/dy, so that each part descends."""
    if variable.dtype.kind != "c":
        return variable, gradient
    parts = _Parts(variable)
    return parts, pytree.as_interleaved(jnp.conj(gradient))
