"""Hypothesis profiles: 'ci' (the default) keeps the suite fast; run
`pytest --hypothesis-profile=thorough` for a deep search."""
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")
