from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# tests/data holds fixtures and the scripts that made them with the real tools
# (which need those tools installed); they are not tests.
collect_ignore_glob = ["data/*"]
