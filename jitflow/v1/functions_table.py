"""The functions an operation of a GraphDef may name, by name: the op functions' tables,
jitflow.numpy's and jitflow.nn's functions, NumPy's functions that jitflow.numpy
implements (and their ufuncs' methods), and indexing. A GraphDef names the function an
operation applies; reading one looks the name up here, so it never runs code of its own.
"""
import functools
import inspect
import operator

import numpy as np

from .. import nn
from .. import numpy as jnp
from .ops import NN_TABLE, TABLE

UFUNC_METHODS = ("reduce", "accumulate", "outer", "reduceat", "at")


@functools.cache
def _named():
    """{name: function}, and {function: name} for the first name of each."""
    by_name = {"operator.getitem": operator.getitem}
    by_name.update({f"tf.{name}": compute for name, _, compute in TABLE})
    by_name.update({f"tf.nn.{name}": compute for name, _, compute in NN_TABLE})
    for name in jnp.__all__:
        if callable(getattr(jnp, name)):
            by_name[f"jitflow.numpy.{name}"] = getattr(jnp, name)
            if callable(getattr(np, name, None)):
                by_name[f"numpy.{name}"] = getattr(np, name)
    for name in jnp.linalg.__all__:
        by_name[f"jitflow.numpy.linalg.{name}"] = getattr(jnp.linalg, name)
    for name in dir(nn):
        if not name.startswith("_") and inspect.isfunction(getattr(nn, name)):
            by_name[f"jitflow.nn.{name}"] = getattr(nn, name)
    by_function = {}
    for name, function in by_name.items():
        by_function.setdefault(_key(function), name)
    return by_name, by_function


def _key(function):
    try:
        hash(function)
        return function
    except TypeError:
        return id(function)


def name_of(function):
    """The name `function` is found by, or None."""
    owner = getattr(function, "__self__", None)
    if isinstance(owner, np.ufunc) and function.__name__ in UFUNC_METHODS:
        return f"numpy.{owner.__name__}.{function.__name__}"
    return _named()[1].get(_key(function))


def function_named(name):
    """The function called `name`, or None."""
    found = _named()[0].get(name)
    if found is None and isinstance(name, str) and name.count(".") == 2:
        module, ufunc, method = name.split(".")
        owner = getattr(np, ufunc, None)
        if module == "numpy" and isinstance(owner, np.ufunc) and method in UFUNC_METHODS:
            found = getattr(owner, method)
    return found
