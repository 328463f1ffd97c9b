"""What a Tracer knows about the memory it stands for, as NumPy's arrays know it: the base
a view reads, the live views of an array, whether a 0-d value is an array or a NumPy
scalar, and whether writes into it are refused. writes.py (x[i] = v, x += y, out=) and
the view-making functions of jitflow.numpy read and extend it.
"""
import weakref

from .layouts import may_not_be_c_ordered, order_not_known
from .tracer import Tracer


class Alias:
    """What a Tracer knows about the memory it stands for: the base it views, with
    `read(base)` giving the view's value and `write(base, value)` the base with the view
    written; the live views made of it; whether it is an array (and not a NumPy scalar)
    when 0-d; and whether writes into it are refused (`readonly`: the reason)."""
    __slots__ = ("base", "read", "write", "views", "array", "readonly", "contiguous")

    def __init__(self, base=None, read=None, write=None, array=False, readonly=None,
                 contiguous=False):
        self.base, self.read, self.write = base, read, write
        self.array, self.readonly = array, readonly
        self.contiguous = contiguous  # a view known to be C-contiguous in NumPy
        self.views = []


def alias_of(tracer):
    if tracer._alias is None:
        tracer._alias = Alias()
    return tracer._alias


def mark_array(tracer):
    """`tracer` stands for an ndarray (even 0-d): writes into it are writes."""
    alias_of(tracer).array = True
    return tracer


def mark_readonly(tracer, reason):
    """Writes into `tracer` raise ValueError saying `reason`."""
    alias_of(tracer).readonly = reason
    return tracer


def readonly_view(base, result, read, reason):
    """`result` = read(base) is a read-only view of base in NumPy (np.diagonal,
    np.broadcast_to): it sees base's later writes, and writes into it raise ValueError
    saying `reason`."""
    result = derived_view(base, result, read, _never_written)
    return mark_readonly(result, reason) if isinstance(result, Tracer) else result


def _never_written(base, value):
    raise AssertionError("a read-only view is never written")  # mark_readonly refuses


def derived_view(base, result, read, write, contiguous=False):
    """`result` = read(base) is a view of base in NumPy: writes into it are writes
    into base (base = write(base, new value)), and it sees base's writes."""
    if not isinstance(base, Tracer):
        return result
    if result is base:  # x[...]: another object, which may be written on its own
        result = Tracer(base._var, base._builder)
    result._alias = Alias(base, read, write, array=True, contiguous=contiguous)
    alias_of(base).views.append(weakref.ref(result))
    return result


def mark_order_unknown(tracer):
    """NumPy makes `tracer`'s array in the memory order of one whose order is not known
    here (`np.zeros_like(x.T)` is Fortran-ordered): its reshape may copy."""
    order_not_known(tracer._builder, tracer._var)
    return tracer


def unknown_layout(tracer):
    """Whether NumPy's layout of tracer's array is not known to be C-contiguous (an
    argument, a closed-over array, a view, or a value computed from one of those whose
    order NumPy keeps: layouts.py), so that NumPy's reshape of it may copy."""
    alias = tracer._alias
    if alias is not None and alias.contiguous:
        return False
    if alias is not None and (alias.array or alias.base is not None):
        return True
    return may_not_be_c_ordered(tracer._builder, tracer._var)


def is_array(tracer):
    """Whether writes into `tracer` are writes (an ndarray), or it is a NumPy or Python
    scalar, whose in-place operators make a new value."""
    if tracer.type.weak:
        return False
    alias = tracer._alias
    return tracer.ndim > 0 or (alias is not None and alias.array)


def copy(x):
    """A Tracer of x's value now, which later writes into x leave unchanged (an array
    if x is one)."""
    copied = Tracer(x._var, x._builder)
    return mark_array(copied) if is_array(x) and x.ndim == 0 else copied
