"""Simulated incidents, diagnosed as a user would (exporter dialect, alert time), cached for
the session: each costs about a second."""

from __future__ import annotations

from functools import cache

from infersight.diagnose import Diagnosis, diagnose
from infersight.frame import MetricFrame
from infersight.lab.evaluate.scenario_windows import alert_time, windows_at
from infersight.lab.sim import simulate
from infersight.lab.sim.scenarios import _ALL

KINDS = tuple(s.name for s in _ALL)


@cache
def windows(scenario: str, seed: int) -> dict[str, MetricFrame]:
    res = simulate(scenario, hours=26, instances=4, seed=seed, step=60.0)
    return windows_at(res, "native", alert_time(res))


@cache
def diagnosed(scenario: str, seed: int) -> Diagnosis:
    return diagnose(windows(scenario, seed), source={"kind": "simulator", "scenario": scenario})
