"""Incidents of real processes (the live lab), frozen as bundles: the engine's answer on data
no simulator made. See lab_incidents/README.md for how each was recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from infersight.bundle import read_bundle
from infersight.diagnose import diagnose

HERE = Path(__file__).parent / "lab_incidents"

#: bundle → (expected first root, where, roots that must not be named)
CASES = {
    "api-pool-shrink": ("threadpool_too_small", "api", ("batching_delay",)),
    # the API's CFS quota halved: the kernel held it in 40% of its periods, not 6%; its host's
    # CPU waiting rose with it (throttled tasks wait), and no neighbour took the cores
    "api-cpu-limit": ("cpu_limit_throttling", "api", ("host_cpu_contention",)),
    "cpu-hog": ("host_cpu_contention", "vector", ("vector_db_slow",)),
    "disk-pressure": ("log_disk_io", None, ()),
    "gpu-clock-drop": ("gpu_thermal_throttling", "replica-0", ("long_prefill_blocking",)),
    # the card gone, replica-1 takes all the traffic (1.4/s → 2.4/s) and its requests wait:
    # the lost replica's share, not too few instances configured nor a batching window
    "gpu-xid": (
        "gpu_hardware_fault",
        "replica-0",
        ("threadpool_too_small", "batching_delay"),
    ),
    # a real vLLM's engine core stopped: its frozen gauges read 0 running, the gateway's
    # requests to it fail until its health check takes it out; the hang, not the removal
    "engine-hang": ("engine_hang", "replica-0", ("lb_instance_removed",)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_lab_fault_is_named(name: str) -> None:
    root, where, never = CASES[name]
    dx = diagnose(dict(read_bundle(HERE / f"{name}.tar.gz").windows))
    roots = [r.hypothesis for r in dx.root_causes]
    assert roots and roots[0] == root, dx.summary
    assert not set(never) & set(roots), dx.summary
    if where is not None:
        h = dx.hypothesis(root)
        assert h is not None and where in h.instances, dx.summary


def test_the_labs_first_clean_minutes_name_no_cause() -> None:
    dx = diagnose(dict(read_bundle(HERE / "healthy.tar.gz").windows))
    assert not dx.root_causes, dx.summary


def test_a_raised_batch_window_is_named_and_no_cpu_neighbour_with_it() -> None:
    """The replica's CPU waiting went 0.29% → 0.36% with its cores idle: no neighbour. Its
    requests wait 200 ms while 1.1/s × 83 ms of compute keeps it busy 9% of the time: not a
    queue for too few instances, which would need them busy."""
    dx = diagnose(dict(read_bundle(HERE / "batch-delay.tar.gz").windows))
    roots = [r.hypothesis for r in dx.root_causes]
    assert roots[:1] == ["batching_delay"], dx.summary
    assert not {"host_cpu_contention", "threadpool_too_small"} & set(roots), dx.summary
