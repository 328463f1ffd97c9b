"""Hypothesis profiles: 'ci' (the default) keeps the suite fast; run
`pytest --hypothesis-profile=thorough` for a deep search."""
import os
import tempfile

from hypothesis import HealthCheck, settings

# Compiled code goes to a cache of this run's own, never to the user's.
os.environ["JITFLOW_CACHE_DIR"] = tempfile.mkdtemp(prefix="jitflow-test-cache-")

settings.register_profile("ci", max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")
