"""GraphDefs: a graph's operations written to a file and imported into another graph
(or another process, without the code that built it), running as the original."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import jitflow.v1 as tf
from jitflow.saving import FormatError, NotSerializableError

ROOT = pathlib.Path(__file__).resolve().parents[2]
X = np.array([[1.0, 2.0], [3.0, -4.0], [0.5, 0.25]], np.float32)


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def build():
    """A model of every kind of operation a GraphDef stores; returns the tensor names
    to fetch and the training operation's name."""
    x = tf.placeholder(tf.float32, (None, 2), name="x")
    with tf.name_scope("dense"):
        w = tf.Variable(np.array([[0.5, 1.0], [-0.25, 0.75]], np.float32), name="w")
        b = tf.Variable(np.zeros(2, np.float32), name="b")
        h = tf.nn.relu(tf.matmul(x, w) + b)
    left, right = tf.split(h, 2, axis=1)
    z = np.exp(left[:, 0]) * 2 - right[..., 0] ** 2 + tf.cast(tf.argmax(h, axis=1), tf.float32)
    scale = tf.placeholder_with_default(np.float32(1.5), (), name="scale")
    total = tf.reduce_sum(z * scale, name="total")
    branch = tf.cond(total > 0, lambda: total * 2.0, lambda: -total)
    _, looped = tf.while_loop(lambda i, v: i < 3, lambda i, v: [i + 1, v * 0.5 + 1.0],
                              [tf.constant(0), branch])
    loss = tf.square(looped - 3.0, name="loss")
    gradient, = tf.gradients(loss, [w])
    step = tf.Variable(0, trainable=False, name="step")
    train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    return [total.name, branch.name, looped.name, gradient.name, w.name], train.name


def run(fetches, train, graph=None, prefix=""):
    with tf.Session(graph=graph) as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run([prefix + f for f in fetches], {prefix + "x:0": X})
        for _ in range(2):
            sess.run(prefix + train, {prefix + "x:0": X})
        after = sess.run([prefix + f for f in fetches], {prefix + "x:0": X})
    return before + after


def assert_all_equal(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
        assert np.asarray(g).dtype == np.asarray(e).dtype


@pytest.mark.parametrize("as_text", [False, True], ids=["zip", "text"])
def test_an_imported_graph_runs_and_trains_as_the_original(tmp_path, as_text):
    fetches, train = build()
    original = tf.get_default_graph()
    expected = run(fetches, train)
    path = tf.io.write_graph(original, str(tmp_path), "model.jitflow", as_text=as_text)
    assert path == os.path.join(str(tmp_path), "model.jitflow")
    graph_def = tf.io.read_graph_def(path)
    assert [(n.name, n.op) for n in graph_def.node] == \
        [(op.name, op.type) for op in original.get_operations()]
    imported = tf.Graph()
    with imported.as_default():
        tf.import_graph_def(graph_def)
        assert [(op.name, op.type) for op in imported.get_operations()] == \
            [(op.name, op.type) for op in original.get_operations()]
        assert imported.get_tensor_by_name("x:0").shape.as_list() == [None, 2]
        assert len(tf.trainable_variables()) == 2
        assert_all_equal(run(fetches, train, imported), expected)


def test_the_session_and_train_spellings(tmp_path):
    tf.exp(tf.placeholder(tf.float64, (2,), name="x"), name="y")
    with tf.Session() as sess:
        path = tf.train.write_graph(sess.graph_def, str(tmp_path), "g.jitflow")
    with tf.Graph().as_default():
        y, = tf.import_graph_def(tf.io.read_graph_def(path), return_elements=["y:0"])
        with tf.Session() as sess:
            # (native exp rounds within an ulp of NumPy's: fidelity.py)
            np.testing.assert_allclose(sess.run(y, {"x:0": [0.0, 1.0]}), np.exp([0.0, 1.0]),
                                       rtol=1e-15)


def test_names_under_a_prefix_input_map_and_return_elements():
    fetches, train = build()
    graph_def = tf.get_default_graph().as_graph_def()
    expected = run(fetches, train)
    with tf.Graph().as_default() as imported:
        assert tf.import_graph_def(graph_def, name="import") is None
        assert_all_equal(run(fetches, train, imported, prefix="import/"), expected)
        fixed = tf.constant(X[:2], name="fixed")
        total, = tf.import_graph_def(graph_def, input_map={"x:0": fixed},
                                     return_elements=["total:0"], name="mapped")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(total)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(got, sess.run(fetches[0], {"x:0": X[:2]}))


def test_a_fresh_process_imports_and_runs_it(tmp_path):
    fetches, train = build()
    expected = run(fetches, train)
    path = tf.io.write_graph(tf.get_default_graph(), str(tmp_path), "model.jitflow")
    script = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        import jitflow, jitflow.v1 as tf
        jitflow.config.background_compile = False  # native code from the first run, as here
        tf.import_graph_def(tf.io.read_graph_def({path!r}))
        x = np.array({X.tolist()!r}, np.float32)
        fetches = {fetches!r}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(fetches, {{"x:0": x}})
            for _ in range(2):
                sess.run({train!r}, {{"x:0": x}})
            after = sess.run(fetches, {{"x:0": x}})
        assert not any("test_v1_graph_def" in name for name in sys.modules)
        np.savez({str(tmp_path / "got.npz")!r}, *(before + after))
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                            text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert result.returncode == 0, result.stderr
    got = np.load(tmp_path / "got.npz")
    assert_all_equal([got[f"arr_{i}"] for i in range(len(expected))], expected)


def test_seeded_random_operations_draw_the_same_numbers_after_import():
    x = tf.placeholder(tf.float32, (2,), name="x")
    normal = tf.random_normal((2,), mean=x, stddev=2.0, seed=3, name="noise")
    uniform = tf.random_uniform((3,), 1, 5, dtype=tf.float64, seed=4)
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Session() as sess:
        expected = [sess.run([normal, uniform], {x: [1.0, 2.0]}) for _ in range(2)]
    with tf.Graph().as_default():
        fetched = tf.import_graph_def(graph_def, return_elements=[normal.name,
                                                                   uniform.name])
        with tf.Session() as sess:
            got = [sess.run(fetched, {"x:0": [1.0, 2.0]}) for _ in range(2)]
    assert_all_equal(sum(got, []), sum(expected, []))


def test_operations_a_graph_def_cannot_hold_are_named(tmp_path):
    tf.random_normal((2,), name="noise")
    with pytest.raises(NotSerializableError, match="'noise' has no seed"):
        tf.get_default_graph().as_graph_def()
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, (2,), name="x")
    tf.add(x, 1.0, name="mine").op.recipe = (lambda a, b: a, (((), ), {}))
    with pytest.raises(NotSerializableError, match="'mine' .*AddV2.*<lambda>"):
        tf.get_default_graph().as_graph_def()
    tf.reset_default_graph()


@tf.RegisterGradient("GraphDefTripled")
def _tripled(op, grad):
    return [grad * 3.0]


def test_registered_gradients_come_back_with_the_graph():
    x = tf.placeholder(tf.float64, (2,), name="x")
    with tf.get_default_graph().gradient_override_map({"Exp": "GraphDefTripled"}):
        y = tf.exp(x, name="exp")
    dx, = tf.gradients(y, [x])
    graph_def = tf.get_default_graph().as_graph_def()
    values = np.array([0.5, -1.0])
    with tf.Graph().as_default():
        gradient, y2 = tf.import_graph_def(graph_def, return_elements=[dx.name, "exp:0"])
        later, = tf.gradients(y2 * 2.0, [tf.get_default_graph().get_tensor_by_name("x:0")])
        with tf.Session() as sess:
            got, got_later = sess.run([gradient, later], {"x:0": values})
    np.testing.assert_array_equal(got, np.full(2, 3.0))
    np.testing.assert_array_equal(got_later, np.full(2, 6.0))


def test_a_gradient_registered_nowhere_is_named():
    tf.exp(tf.placeholder(tf.float64, (2,), name="x"), name="exp")
    graph_def = tf.get_default_graph().as_graph_def()
    graph_def.document["operations"][1]["gradient_name"] = "NotRegisteredAnywhere"
    with tf.Graph().as_default():
        y, x = tf.import_graph_def(graph_def, return_elements=["exp:0", "x:0"])
        with pytest.raises(KeyError, match="'NotRegisteredAnywhere', which is not "
                                           "registered in this program"):
            tf.gradients(y, [x])


def test_bad_graph_def_files_are_refused(tmp_path):
    x = tf.placeholder(tf.float32, (2,), name="x")
    tf.exp(x, name="y")
    path = tf.io.write_graph(tf.get_default_graph(), str(tmp_path), "g.jitflow")
    with zipfile.ZipFile(path) as archive:
        document = json.loads(archive.read("jitflow.json"))
    document["operations"][1]["function"] = "os.system"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("jitflow.json", json.dumps(document))
    graph_def = tf.io.read_graph_def(path)
    with tf.Graph().as_default(), pytest.raises(FormatError, match="'os.system' names no"):
        tf.import_graph_def(graph_def)
    pathlib.Path(path).write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(FormatError):
        tf.io.read_graph_def(path)
    with pytest.raises(TypeError, match="not a GraphDef"):
        tf.import_graph_def({"operations": []})
