"""The simulator's fleet as Kubernetes runs it reads as the same machines as the bare fleet:
the engines' pods at their pod IPs, dcgm-exporter's pods, node_exporter and kube-state-metrics'
series all meet on the nodes, locally and through a real Prometheus."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from infersight.exporters import load_catalog
from infersight.lab.live.servers import LocalPrometheus
from infersight.lab.sim.dialects import emit
from infersight.lab.sim.kubernetes import engine_pod
from infersight.lab.sim.outputs import write_sim_openmetrics
from infersight.lab.sim.run import SimResult, simulate
from infersight.sources.local import canonical_frame
from infersight.sources.prometheus import PrometheusClient
from infersight.sources.pull import pull

STEP = 60.0
SIGNALS = ("inference.gpu_util", "service.queue_length", "infra.cpu_util", "service.restarts")


@pytest.fixture(scope="module")
def rollout() -> SimResult:
    """A rolling deploy of three replicas, the run ending now (a server holds it as recent)."""
    end = (time.time() // STEP) * STEP
    return simulate("model_cold_start", hours=2, instances=3, seed=1, step=STEP,
                    start=end - 2 * 3600)  # fmt: skip


def test_pods_meet_their_nodes(rollout: SimResult) -> None:
    t0, t1 = float(rollout.times[0]), float(rollout.times[-1])
    bare = canonical_frame(emit(rollout, "vllm"), load_catalog(), t0, t1, STEP)
    kube = canonical_frame(emit(rollout, "kubernetes"), load_catalog(), t0, t1, STEP)
    nodes = ("node-0", "node-1", "node-2")
    # a replaced pod's last sample is still read for the 5 min lookback, beside its successor's:
    # backfilled samples carry no staleness marker, so the minutes after a deploy differ
    deployed = rollout.trace.inst["deployed"].any(axis=1)
    settled = np.convolve(deployed, np.ones(int(360 / STEP)), "full")[: deployed.size] == 0
    for sig in SIGNALS[:3]:
        assert kube.frame.get(sig).instances == bare.frame.get(sig).instances
        assert set(nodes) <= set(kube.frame.get(sig).instances)
        k, b = kube.frame.get(sig).values, bare.frame.get(sig).values
        np.testing.assert_allclose(k[:, settled], b[:, settled])
    # every replica was replaced by a new pod: a process started on each node, which the
    # engine's own start time cannot say (each pod is a new series whose start never changes)
    restarts = kube.frame.get("service.restarts")
    most = dict(zip(restarts.instances, np.nanmax(restarts.values, axis=1), strict=True))
    assert all(most[n] >= 1 for n in nodes)
    assert most["cache-0"] == 0  # the cache's pod ran throughout
    assert "kube_state_metrics" in kube.sources["service.restarts"]
    first = kube.pods.pods[engine_pod(0, 0)]
    assert (first.node, first.workload) == ("node-0", "Deployment/vllm")
    assert engine_pod(0, 1) in kube.pods.pods  # its replacement


def test_a_real_prometheus_joins_them_too(
    rollout: SimResult,
    tmp_path: Path,
    prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus],
) -> None:
    om = tmp_path / "kube.om"
    write_sim_openmetrics(rollout, om, "kubernetes")
    server = prometheus_with_backfill([om])
    t0, t1 = float(rollout.times[0]) + 1800, float(rollout.times[-1])
    local = canonical_frame(emit(rollout, "kubernetes"), load_catalog(), t0, t1, STEP)
    res = pull(PrometheusClient(server.url), load_catalog(), t0, t1, STEP, list(SIGNALS))
    assert not res.errors
    for sig in SIGNALS:
        assert res.frame.get(sig).instances == local.frame.get(sig).instances, sig
    assert res.pods.pods[engine_pod(2, 0)].node == "node-2"
    assert res.to_dict()["pods"][engine_pod(2, 0)]["workload"] == "Deployment/vllm"
