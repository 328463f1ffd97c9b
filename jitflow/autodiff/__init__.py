"""Automatic differentiation as a transform of traced graphs.

transform.py walks a graph backwards (vjp) or forwards (jvp) through each primitive's
rules; linearize.py traces a Python function for it, eagerly or inside a trace; api.py
offers JAX's grad, value_and_grad, vjp, jvp, jacrev, jacfwd and hessian; holomorphic.py
installs the complex functions whose derivatives are rules of their own.
"""
from .custom import custom_jvp, custom_vjp
from . import holomorphic  # noqa: F401  (installs the complex inverse functions)
from .api import grad, hessian, jacfwd, jacobian, jacrev, jvp, value_and_grad, vjp
from .transform import jvp_graph, vjp_graph

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "jacobian",
           "hessian", "vjp_graph", "jvp_graph", "custom_vjp", "custom_jvp"]
