"""Files that are not what jitflow wrote, or not all of it, are refused with FormatError
saying why; none of their content is run."""
import io
import json
import pickle
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.v1 as tf
from jitflow.saving import FormatError, read_graph, write_graph


def _graph():
    return jitflow.function(lambda x: np.exp(x) * 2.0 + x.sum()).trace(np.ones(3))


@pytest.fixture
def saved(tmp_path):
    return write_graph(_graph(), tmp_path / "graph.jitflow")


def _document(path):
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read("jitflow.json"))


def _rewrite(path, document=None, extra=None):
    """The archive at `path` with its document (and members) replaced."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    if document is not None:
        members["jitflow.json"] = json.dumps(document).encode()
    members.update(extra or {})
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9, 0.99])
def test_a_truncated_file(saved, cut):
    data = saved.read_bytes()
    saved.write_bytes(data[:int(len(data) * cut)])
    with pytest.raises(FormatError):
        read_graph(saved)


def test_a_truncated_text_file(tmp_path):
    path = write_graph(_graph(), tmp_path / "graph.json", as_text=True)
    text = path.read_text()
    path.write_text(text[:len(text) // 2])
    with pytest.raises(FormatError, match="not JSON"):
        read_graph(path)


@pytest.mark.parametrize("content", [b"", b"hello", b"PK\x03\x04garbage",
                                     pickle.dumps({"graph": 1}), b"[1, 2]"])
def test_something_else(tmp_path, content):
    path = tmp_path / "other"
    path.write_bytes(content)
    with pytest.raises(FormatError):
        read_graph(path)


def test_a_newer_version_is_named(saved):
    _rewrite(saved, {**_document(saved), "version": 99})
    with pytest.raises(FormatError, match="format version 99, by a newer jitflow"):
        read_graph(saved)


def test_another_kind_of_file(saved):
    with pytest.raises(FormatError, match="holds a 'graph', not a 'function'"):
        jitflow.load(saved)


def test_an_unknown_primitive(saved):
    document = _document(saved)
    document["graph"]["nodes"][0]["op"] = "os.system"
    _rewrite(saved, document)
    with pytest.raises(FormatError, match="'os.system' is not a primitive"):
        read_graph(saved)


def test_a_type_that_contradicts_the_type_rule(saved):
    document = _document(saved)
    document["graph"]["nodes"][0]["outputs"][0][1][1] = "int32"
    _rewrite(saved, document)
    with pytest.raises(FormatError, match="type rule gives"):
        read_graph(saved)


def test_a_value_used_before_it_is_defined(saved):
    document = _document(saved)
    document["graph"]["nodes"][0]["inputs"][0] = {"var": 12345}
    _rewrite(saved, document)
    with pytest.raises(FormatError, match="used before it is defined"):
        read_graph(saved)


def test_a_missing_or_mistyped_constant(saved):
    document = _document(saved)
    constant = next(ref for node in document["graph"]["nodes"] for ref in node["inputs"]
                    if "lit" in ref)
    constant["lit"] = 77
    _rewrite(saved, document)
    with pytest.raises(FormatError, match="names no constant"):
        read_graph(saved)


def test_an_array_of_python_objects_is_not_unpickled(saved):
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    _rewrite(saved, extra={"arrays/0.npy": buffer.getvalue()})
    with pytest.raises(FormatError, match="array 0 is not a valid .npy array"):
        read_graph(saved)


def test_a_bad_parameter_value(saved):
    document = _document(saved)
    reduction = next(node for node in document["graph"]["nodes"] if node["params"])
    reduction["params"]["axes"] = {"call": "print"}
    _rewrite(saved, document)
    with pytest.raises(FormatError, match="not a value the format knows"):
        read_graph(saved)


def test_a_saved_function_whose_graph_does_not_fit_its_signature(tmp_path):
    path = jitflow.save(lambda x: x * 2, tmp_path / "f.jitflow", np.ones(3))
    document = _document(path)
    document["variables"] = [{"name": "v", "trainable": True, "array": 0}]
    _rewrite(path, document)
    with pytest.raises(FormatError, match="its graph takes 1 inputs"):
        jitflow.load(path)


def _rich_graph():
    def body(carry):
        return carry[0] + 1, np.sin(carry[1]) * 0.5
    return jitflow.function(lambda x: jitflow.while_loop(
        lambda c: c[0] < 3, body, (0, x))[1].sum() + x[1:].max()).trace(np.ones(3))


def _write_graph(path, as_text):
    write_graph(_rich_graph(), path, as_text=as_text)


def _write_function(path, as_text):
    v = jitflow.Variable(np.arange(3.0), name="v")
    jitflow.save(lambda x, y: {"a": x * v, "b": [np.tanh(y)]}, path, np.ones(3), 2.0)


def _write_graph_def(path, as_text):
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, (None, 3), name="x")
    w = tf.Variable(np.ones((3, 2), np.float32), name="w")
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.matmul(x, w), lambda: -tf.matmul(x, w))
    tf.gradients(tf.reduce_sum(y[:, 1:] ** 2), [w])
    tf.io.write_graph(tf.get_default_graph(), str(path.parent), path.name, as_text=as_text)


def _read_graph_def(path):
    with tf.Graph().as_default():
        tf.import_graph_def(tf.io.read_graph_def(path))


KINDS = {"graph": (_write_graph, lambda path: jitflow.verify(read_graph(path))),
         "function": (_write_function, jitflow.load),
         "graph_def": (_write_graph_def, _read_graph_def)}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("as_text", [False, True], ids=["zip", "text"])
@settings(deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_damaged_file_loads_or_raises_format_error_never_anything_else(
        kind, as_text, data, tmp_path_factory):
    write, read = KINDS[kind]
    path = tmp_path_factory.mktemp("damaged") / "file.jitflow"
    write(path, as_text)
    content = bytearray(path.read_bytes())
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(content) - 1))
        content[position] = data.draw(st.integers(0, 255))
    path.write_bytes(bytes(content))
    try:
        read(path)
    except FormatError:
        pass


def test_a_custom_rule_that_does_not_fit_its_call(tmp_path):
    @jitflow.custom_vjp
    def f(x):
        return x * 2.0
    f.defvjp(lambda x: (f(x), None), lambda _, ct: (ct * 3.0,))
    path = write_graph(jitflow.function(lambda x: f(x)).trace(np.ones(2)), tmp_path / "g")
    document = _document(path)
    call = next(n for n in document["graph"]["nodes"] if n["op"] == "custom_vjp_call")
    call["rule"]["outputs"].append(call["rule"]["outputs"][0])
    _rewrite(path, document)
    with pytest.raises(FormatError, match="its rule takes 2 values and gives 2"):
        read_graph(path)
