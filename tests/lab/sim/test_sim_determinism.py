"""Same seed, same run; another seed, another incident; scenario metadata is complete."""

from __future__ import annotations

import numpy as np
import pytest

from infersight.lab.sim import list_scenarios, simulate
from infersight.signals import all_signals

REQUIRED = {
    "batch_window_starvation", "max_batch_too_large", "vram_oom_cascade", "vram_leak",
    "shared_gpu_contention", "threadpool_too_large", "threadpool_too_small", "unbounded_queue",
    "vector_db_swap", "cache_stampede", "cache_capacity", "gpu_thermal_throttling",
    "gpu_hardware_fault", "slow_instance", "network_retransmits", "model_cold_start",
    "log_disk_io", "lb_instance_removed", "gc_pauses", "traffic_surge", "incident_0217",
}  # fmt: skip


@pytest.mark.sim
def test_same_seed_same_output() -> None:
    a = simulate("gpu_thermal_throttling", hours=4, instances=3, seed=11, step=30)
    b = simulate("gpu_thermal_throttling", hours=4, instances=3, seed=11, step=30)
    assert a.truth == b.truth
    for sig in a.frame.signals:
        np.testing.assert_array_equal(a.frame.series[sig].values, b.frame.series[sig].values)


@pytest.mark.sim
def test_different_seed_different_incident() -> None:
    a = simulate("vector_db_swap", hours=4, instances=3, seed=1, step=30)
    b = simulate("vector_db_swap", hours=4, instances=3, seed=2, step=30)
    assert a.truth.onset != b.truth.onset
    assert a.truth.params != b.truth.params
    assert not np.array_equal(
        a.frame.series["service.request_rate"].values,
        b.frame.series["service.request_rate"].values,
    )


def test_registry_metadata() -> None:
    listed = {s["name"]: s for s in list_scenarios()}
    assert set(listed) >= REQUIRED
    assert sum(1 for s in listed.values() if not s["roots"]) >= 3
    for s in listed.values():
        assert s["seed_section"] and s["description"]
        assert all(r.replace("_", "").isalnum() and r.islower() for r in s["roots"])


@pytest.mark.sim
def test_frame_uses_only_canonical_signals_across_all_layers() -> None:
    r = simulate("healthy_diurnal", hours=1, instances=2, seed=0, step=30)
    known = all_signals()
    assert set(r.frame.signals) <= set(known)
    layers = {known[s].layer for s in r.frame.signals}
    assert len(layers) == 5
    assert len(r.frame.signals) >= 60


def test_bad_arguments() -> None:
    with pytest.raises(KeyError, match="unknown scenario"):
        simulate("nope", hours=1)
    with pytest.raises(ValueError):
        simulate("healthy_diurnal", hours=0)
