"""A remedy on the replicas that carry a lost peer's share says so first (seed §2.3)."""

from __future__ import annotations

import pytest

from infersight.diagnose import diagnose
from infersight.diagnose.result import Diagnosis
from infersight.lab.evaluate.scenario_windows import alert_time, windows_at
from infersight.lab.sim import simulate


def _diagnosed(scenario: str) -> tuple[Diagnosis, tuple[str, ...]]:
    res = simulate(scenario, hours=26, instances=6, seed=0, step=60.0)
    at = alert_time(res)
    return diagnose(windows_at(res, "vllm", at), at=at), res.truth.instances


@pytest.mark.sim
def test_advice_on_the_survivors_of_a_removal_names_what_they_carry() -> None:
    dx, removed = _diagnosed("lb_instance_removed")
    led = [
        h
        for h in dx.hypotheses
        if h.verdict == "confirmed" and h.id != "lb_instance_removed" and h.remedy
    ]
    on_peers = [h for h in led if h.instances and not set(h.instances) & set(removed)]
    assert on_peers, [h.id for h in led]
    for h in on_peers:
        assert h.remedy.startswith(", ".join(h.instances[:4])), h.remedy
        assert "the share of " + ", ".join(removed) in h.remedy
        assert "(lb_instance_removed): bring those back first" in h.remedy
    own = dx.hypothesis("lb_instance_removed")
    assert own is not None and "carry the share" not in own.remedy


@pytest.mark.sim
def test_without_a_replica_out_no_advice_is_qualified() -> None:
    dx, _ = _diagnosed("traffic_surge")
    assert not [h.id for h in dx.hypotheses if "the share of" in h.remedy]
