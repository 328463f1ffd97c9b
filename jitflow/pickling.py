"""How jitflow's wrappers of a user's function (jitflow.function, custom_vjp,
custom_jvp) pickle: one made where it is defined, as a decorator, is a module's or a
class's attribute, and is pickled by name, as Python's own functions are."""
import sys


def found_by_name(wrapper):
    """Whether `wrapper` is what its __module__ and __qualname__ lead to."""
    found = sys.modules.get(getattr(wrapper, "__module__", None))
    for part in getattr(wrapper, "__qualname__", "<>").split("."):
        found = getattr(found, part, None)
    return found is wrapper
