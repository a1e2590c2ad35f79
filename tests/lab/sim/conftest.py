"""Each scenario is simulated once per session (4 instances, 26 h, 60 s steps)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest

from infersight.lab.sim import SimResult, simulate


@cache
def _run(scenario: str, seed: int = 7) -> SimResult:
    return simulate(scenario, hours=26, instances=4, seed=seed, step=60.0)


@pytest.fixture(scope="session")
def run() -> Callable[..., SimResult]:
    return _run
