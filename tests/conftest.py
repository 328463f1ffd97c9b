"""Hypothesis profiles: 'ci' (the default) keeps the suite fast; run
`pytest --hypothesis-profile=thorough` for a deep search.

The `backend` fixture runs a test once per backend jitflow.function can run graphs on
(tests/fidelity.py says how results are compared on each)."""
import os
import tempfile

# Compiled code goes to a cache of this run's own, never to the user's: set before
# jitflow is imported, which starts building its native libraries into the cache.
os.environ["JITFLOW_CACHE_DIR"] = tempfile.mkdtemp(prefix="jitflow-test-cache-")
# Tests patch lowering's knobs, which no key of a whole graph sees: graphs are looked up
# by their modules' text (tests/codegen/runtime/test_graph_cache.py turns it on).
os.environ.setdefault("JITFLOW_GRAPH_CACHE", "0")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

import jitflow  # noqa: E402
from fidelity import BACKENDS, THOROUGH_EXAMPLES  # noqa: E402
# Native code is built before the first call returns, so that tests of the native
# backend run native code; tests/test_background_compile.py turns this back on.
jitflow.config.background_compile = False

# 'ci' draws the same examples on every run (derandomized), so that a change lands or
# not on its own merits; 'thorough' draws new ones each run, and is where bugs are hunted.
# (float16 elements are drawn by filtering floats, which can trip filter_too_much)
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.filter_too_much])
# tests/codegen run again under the other x86-64 levels (codegen/jit/test_target.py)
settings.register_profile("levels", settings.get_profile("ci"), max_examples=10)
settings.register_profile("thorough", max_examples=THOROUGH_EXAMPLES, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.filter_too_much])
settings.load_profile("ci")


@pytest.fixture(params=BACKENDS, scope="module")
def backend(request):
    """Traced graphs run on `request.param`, with every type rule re-run after every
    optimization pass. Module-scoped, so pytest runs a module's tests on one backend,
    then on the other."""
    config = jitflow.config
    saved = config.check_ir, config.backend
    config.check_ir, config.backend = True, request.param
    yield request.param
    config.check_ir, config.backend = saved


@pytest.fixture
def made_dynamic_natives(monkeypatch):
    """The list of dynamic_axes' codes for all sizes (DynamicNative) made in the test,
    in the order they were made."""
    from jitflow import dynamic_axes
    made = []

    class Kept(dynamic_axes.DynamicNative):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)
    monkeypatch.setattr(dynamic_axes, "DynamicNative", Kept)
    return made
