"""Per-scenario diagnosis on the simulator, through the vLLM exporter dialect."""

from __future__ import annotations

from functools import cache

import pytest

from infersight.diagnose import Diagnosis, diagnose
from infersight.diagnose.scenario_windows import alert_time, healthy_times, windows_at
from infersight.lab.sim import SimResult, simulate


@cache
def _sim(scenario: str, seed: int = 3) -> SimResult:
    return simulate(scenario, hours=26, instances=6, seed=seed, step=60.0)


def _diag(scenario: str, dialect: str = "vllm") -> Diagnosis:
    res = _sim(scenario)
    return diagnose(windows_at(res, dialect, alert_time(res)))


@pytest.mark.parametrize(
    "scenario",
    ["vector_db_swap", "cache_capacity", "gpu_thermal_throttling", "gpu_hardware_fault",
     "lb_instance_removed", "traffic_surge", "batch_window_starvation"],
)  # fmt: skip
def test_right_root_first(scenario: str) -> None:
    dx = _diag(scenario)
    assert [r.hypothesis for r in dx.root_causes][:1] == [scenario], dx.summary


def test_incident_0217_has_both_roots_and_the_chain() -> None:
    dx = _diag("incident_0217")
    top2 = {r.hypothesis for r in dx.root_causes[:2]}
    assert top2 == {"vector_db_swap", "cache_capacity"}, dx.summary
    chains = [r.chain for r in dx.root_causes[:2]]
    assert any("queue_backlog" in c for c in chains)


@pytest.mark.parametrize("dialect", ["vllm", "triton"])
def test_healthy_day_is_healthy(dialect: str) -> None:
    res = _sim("healthy_diurnal")
    for at in healthy_times(res, 2):
        dx = diagnose(windows_at(res, dialect, at))
        assert not dx.root_causes, dx.summary
