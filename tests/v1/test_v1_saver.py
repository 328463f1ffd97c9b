"""train.Saver: Variables' values saved from one session and restored into another."""
import os

import numpy as np
import pytest

import jitflow.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def _model():
    x = tf.placeholder(tf.float32, (None, 2), name="x")
    w = tf.Variable(np.array([[0.5], [-0.25]], np.float32), name="w")
    b = tf.Variable(np.float32(0.0), name="b")
    step = tf.Variable(0, name="global_step", trainable=False)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return x, w, b, step, train


X = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)


def test_restored_values_are_the_saved_ones(tmp_path):
    x, w, b, step, train = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train, {x: X})
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
        saved = sess.run([w, b, step])
    assert prefix == str(tmp_path / "model.ckpt-3")
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix
    with tf.Session() as sess:  # a new session: nothing initialized
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        restored = sess.run([w, b, step])
        sess.run(train, {x: X})  # and training goes on from there
    for a, e in zip(restored, saved):
        np.testing.assert_array_equal(a, e)
        assert np.asarray(a).dtype == np.asarray(e).dtype


def test_a_new_graph_of_the_same_model_restores_by_name(tmp_path):
    x, w, b, step, train = _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: X})
        prefix = tf.train.Saver().save(sess, str(tmp_path / "m"))
        expected = sess.run(w)
    tf.reset_default_graph()
    _, w, _, _, _ = _model()
    with tf.Session() as sess:
        tf.train.Saver({"w": w}).restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(w), expected)


def test_only_the_last_max_to_keep_are_kept(tmp_path):
    _, _, _, step, _ = _model()
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefixes = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(4)]
    assert saver.last_checkpoints == prefixes[2:]
    assert [os.path.exists(p + ".jitflow") for p in prefixes] == [False, False, True, True]
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[-1]


def test_what_goes_wrong_is_said(tmp_path):
    _, w, _, _, _ = _model()
    saver = tf.train.Saver()
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    with tf.Session() as sess:
        with pytest.raises(tf.FailedPreconditionError, match="'w' is read before"):
            saver.save(sess, str(tmp_path / "m"))
        with pytest.raises(FileNotFoundError, match="no checkpoint at"):
            saver.restore(sess, str(tmp_path / "nothing"))
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver([w]).save(sess, str(tmp_path / "only_w"))
        with pytest.raises(KeyError, match="holds no Variable 'b'"):
            saver.restore(sess, prefix)
    tf.reset_default_graph()
    w = tf.Variable(np.zeros((3, 1), np.float32), name="w")
    with tf.Session() as sess, pytest.raises(ValueError, match=r"float32\(3, 1\).*\[2, 1\]"):
        tf.train.Saver().restore(sess, prefix)


def test_import_meta_graph_brings_back_graph_and_saver_without_the_code(tmp_path):
    x, w, b, step, train = _model()
    train_name = train.name
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: X})
        prefix = tf.train.Saver().save(sess, str(tmp_path / "model"), global_step=step)
        expected_w = sess.run(w)
        sess.run(train, {x: X})
        expected_after = sess.run(w)
    assert os.path.exists(prefix + ".meta")
    tf.reset_default_graph()
    saver = tf.train.import_meta_graph(prefix + ".meta")
    graph = tf.get_default_graph()
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run("w:0"), expected_w)
        sess.run(graph.get_operation_by_name(train_name), {"x:0": X})
        np.testing.assert_array_equal(sess.run("w:0"), expected_after)


def test_a_graph_without_a_graph_def_still_saves_its_values_and_warns(tmp_path):
    w = tf.Variable(np.ones(2, np.float32), name="w")
    tf.random_normal((2,), name="unseeded")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.warns(UserWarning, match="not written.*'unseeded' has no seed"):
            prefix = tf.train.Saver().save(sess, str(tmp_path / "m"))
    assert os.path.exists(prefix + ".jitflow") and not os.path.exists(prefix + ".meta")
