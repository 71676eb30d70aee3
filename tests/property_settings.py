"""The Hypothesis settings of the property tests, in one place.

By default a few hundred examples, derandomized (CI is repeatable and quick);
``HYPOTHESIS_PROFILE=thorough`` runs 10,000 random ones. A case taking seconds fails: the
properties include "no hang".
"""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, settings

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"


def property_settings(examples: int, *also_suppressed: HealthCheck) -> settings:
    """``examples`` examples by default (10,000 when thorough); slow or large data is expected."""
    return settings(
        max_examples=10_000 if THOROUGH else examples,
        deadline=timedelta(seconds=5),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, *also_suppressed],
        derandomize=not THOROUGH,
        database=None,
    )
