"""Complex functions whose derivative is given by rule as f'(z) (dx + i dy), installed
as NumPy's functions of complex values from here: the inverse trigonometric and
hyperbolic functions (complex_values/inverse.py), whose formulas would differentiate
to 0 across the axes. Each is a custom_jvp; reverse mode transposes the rule."""
from .. import numpy as jnp
from ..complex_values import inverse
from ..complex_values.functions import install_unary
from .custom import custom_jvp


def _holomorphic(name):
    """The parts function `name`, whose derivative is f'(z) times the tangent."""
    values = inverse.VALUES[name]
    values.__qualname__ = name  # (found by name where pickled)
    function = custom_jvp(values)
    function.__module__ = __name__

    @function.defjvp
    def rule(primals, tangents):
        (x, y), (dx, dy) = primals, tangents
        slope_r, slope_i = inverse.DERIVATIVES[name](x, y)
        return function(x, y), (jnp.subtract(jnp.multiply(slope_r, dx), jnp.multiply(slope_i, dy)),
                                jnp.add(jnp.multiply(slope_i, dx), jnp.multiply(slope_r, dy)))
    install_unary(function, name)
    return function


arcsin = _holomorphic("arcsin")
arccos = _holomorphic("arccos")
arctan = _holomorphic("arctan")
arcsinh = _holomorphic("arcsinh")
arccosh = _holomorphic("arccosh")
arctanh = _holomorphic("arctanh")
