"""@jitflow.function on a method: `instance.method` is the function bound to that
instance, compiled on its own (the arrays it reaches through `self` are the instance's,
named_arrays.py), and kept while the instance lives, so that every lookup reuses its
traces and native code.
"""
import functools
import inspect
import threading
import types
import weakref


class _BoundMethods:
    """The Function of each (decorated method, instance) pair, kept while the instance
    lives: its traces and native code are reused at every `instance.method` lookup."""

    def __init__(self):
        self._functions = {}  # (id(method's Function), id(instance)) -> Function
        self._lock = threading.Lock()

    def get(self, method, instance):
        key = (id(method), id(instance))
        bound = self._functions.get(key)
        if bound is not None and bound.fn.__self__ is instance:
            return bound
        with self._lock:
            bound = self._functions.get(key)
            if bound is None or bound.fn.__self__ is not instance:
                bound = type(method)(_WeakMethod(method.fn, instance),
                                     method.static - {_first_parameter(method)},
                                     donate_argnames=method.donated,
                                     dynamic_axes=method.dynamic_axes)
                self._functions[key] = bound
                self._forget_with(instance, key)
            return bound

    def _forget_with(self, instance, key):
        try:
            weakref.finalize(instance, self._functions.pop, key, None)
        except TypeError:  # an instance without weak references: kept while jitflow is
            pass


class _WeakMethod:
    """A method bound to an instance it does not keep alive (the cache above outlives
    no instance). It reads as a bound method: __self__, __func__, its signature."""

    def __init__(self, fn, instance):
        self.__func__ = fn
        try:
            self._instance = weakref.ref(instance)
        except TypeError:
            self._instance = lambda: instance
        functools.update_wrapper(self, fn)
        del self.__wrapped__
        self.__signature__ = inspect.signature(types.MethodType(fn, instance))

    @property
    def __self__(self):
        return self._instance()

    def __call__(self, *args, **kwargs):
        return self.__func__(self.__self__, *args, **kwargs)



class BoundFunction:
    """`instance.method` for a decorated method, as Python's bound methods are: it
    keeps the instance alive while it is held, and calls the instance's compiled
    Function (cached while the instance lives)."""
    __slots__ = ("__self__", "function")

    def __init__(self, instance, function):
        self.__self__ = instance
        self.function = function

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def __getattr__(self, name):  # cache_info, lower, trace, wait, __name__, ...
        return getattr(self.function, name)

    def __repr__(self):
        return f"<bound jitflow.function {self.function.__qualname__} of {self.__self__!r}>"

    def __reduce__(self):
        """Pickled as the attribute of its instance, as Python pickles bound methods."""
        return getattr, (self.__self__, self.function.fn.__func__.__name__)


def _first_parameter(function):
    return next(iter(function.signature.parameters), None)


_BOUND = _BoundMethods()


def bound_method(function, instance):
    """`instance.name` where the class's attribute `name` is the Function `function`."""
    return BoundFunction(instance, _BOUND.get(function, instance))
