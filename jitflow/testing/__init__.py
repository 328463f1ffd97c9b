"""Tools for users' own tests of derivatives.

    from jitflow.testing import check_grads
    check_grads(lambda x, y: np.sum(np.sin(x) * y), (x, y), order=2)

jitflow.testing.strategies has hypothesis strategies for the arrays to check them on
(it needs hypothesis installed).
"""
from .gradients import GradientCheckError, check_grads

__all__ = ["check_grads", "GradientCheckError"]
