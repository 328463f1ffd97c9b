"""The constructor arguments of an object that keeps them as attributes of the same
names (optimizers, learning-rate schedules, losses, metrics): a dict of plain values
from which type(obj)(**config) rebuilds it, and the inverse by class name."""
import inspect
import json

from ..errors import at_user_line


def constructor_config(obj, what):
    """{argument: obj.argument} for each argument of type(obj).__init__."""
    config = {}
    for name, parameter in inspect.signature(type(obj).__init__).parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL,
                                                 parameter.VAR_KEYWORD):
            continue
        if not hasattr(obj, name):
            raise ValueError(at_user_line(
                f"{what}: {type(obj).__name__} keeps no attribute {name!r} for its "
                f"argument of that name, so it cannot be saved"))
        config[name] = getattr(obj, name)
    _check_plain(config, f"{what} {type(obj).__name__}")
    return config


def encoded(obj, what):
    return {"class_name": type(obj).__name__, "config": constructor_config(obj, what)}


def decoded(entry, classes, what):
    """The object `entry` (from encoded) describes; `classes` by name."""
    name = entry["class_name"]
    if name not in classes:
        raise ValueError(at_user_line(
            f"{what}: the file names {name!r}, which is not one of "
            f"{', '.join(sorted(classes))}"))
    return classes[name](**entry["config"])


def classes_of(module, base):
    """The subclasses of `base` a module defines, by name (base included)."""
    return {name: value for name, value in vars(module).items()
            if inspect.isclass(value) and issubclass(value, base)}


def _check_plain(config, what):
    try:
        json.dumps(config)
    except (TypeError, ValueError) as error:
        raise ValueError(at_user_line(
            f"{what}: its arguments {config!r} are not plain values (numbers, strings, "
            f"lists) a saved model can hold: {error}")) from None


__all__ = ["constructor_config", "encoded", "decoded", "classes_of"]
