"""Hypothesis settings that several property tests share (the run-wide profile is loaded in
tests/conftest.py; these settings override it per test)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Properties of pure functions over random histories: many examples, no deadline.
PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Property tests on the database: a few examples, each on fresh sessions of one client.
ON_THE_DATABASE = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
