"""The layer types a saved model may name: jitflow's own layers register under their
class name when defined; a user's layer registers with @nn.register_layer. A saved
model names each layer's registered type and holds its get_config(), never code."""
from ..errors import at_user_line

_BY_NAME = {}


def register_layer(cls=None, *, name=None):
    """Decorator: @register_layer or @register_layer(name="package>MyLayer") lets
    nn.load_model rebuild the layer from its get_config() (its constructor's
    arguments)."""
    def register(cls):
        key = name or cls.__name__
        known = _BY_NAME.get(key)
        if known is not None and known is not cls and _defined_in_jitflow(known):
            raise ValueError(at_user_line(
                f"register_layer: {key!r} is a jitflow layer's name; register "
                f"{cls.__qualname__} under another name (name='package>{key}')"))
        _BY_NAME[key] = cls
        cls._registered_name = key
        return cls
    return register if cls is None else register(cls)


def registered_name(layer):
    """The name `layer`'s type is registered under."""
    cls = type(layer)
    key = cls.__dict__.get("_registered_name")
    if key is None or _BY_NAME.get(key) is not cls:
        raise ValueError(at_user_line(
            f"{layer.name}: its type {cls.__qualname__} is not registered, so a saved "
            f"model could not rebuild it; decorate the class with "
            f"@jitflow.nn.register_layer"))
    return key


def layer_class(key):
    if key not in _BY_NAME:
        raise ValueError(at_user_line(
            f"the saved model has a layer of type {key!r}, which is not registered; "
            f"import the module that defines it (decorated with "
            f"@jitflow.nn.register_layer) before loading"))
    return _BY_NAME[key]


def serialize(layer):
    """{'class_name', 'config'}: what rebuilds `layer` (without its weights)."""
    return {"class_name": registered_name(layer), "config": layer.get_config()}


def deserialize(entry):
    return layer_class(entry["class_name"]).from_config(dict(entry["config"]))


def _defined_in_jitflow(cls):
    return cls.__module__.startswith("jitflow.")


__all__ = ["register_layer", "registered_name", "layer_class", "serialize", "deserialize"]
