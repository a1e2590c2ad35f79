"""Fleet outliers: one machine against its peers, named with figures (seed §4.2)."""

from __future__ import annotations

import numpy as np
from synth import START, STEP, FloatArray, noisy, windows, with_step

from infersight.detect import detect

FWD = "inference.forward_time_p99"


def test_outlier_named_with_figures() -> None:
    def gen(t: FloatArray, i: int) -> FloatArray:
        return noisy(0.35 if i == 7 else 0.2, 0.05)(t, i)

    r = detect(windows({FWD: gen}, instances=10))
    assert [f.instance for f in r.fleet_outliers] == ["node-7"]
    f = r.fleet_outliers[0]
    assert "node-7 at 35" in f.detail and "fleet is at 20" in f.detail and "ms" in f.detail
    assert f.ratio is not None and 1.6 < f.ratio < 1.9
    assert f.peers == 9 and f.fraction > 0.9 and f.direction == "up"
    a = [a for a in r.anomalies if a.kind == "fleet_outlier"]
    assert len(a) == 1 and a[0].baseline is not None and a[0].observed is not None
    assert a[0].baseline < 0.21 < 0.34 < a[0].observed


def test_outlier_onset_mid_window() -> None:
    inc = {FWD: with_step(noisy(0.2), 100, 2.0, only={3})}
    r = detect(windows({FWD: noisy(0.2)}, instances=8, incident=inc))
    (f,) = r.fleet_outliers
    assert f.instance == "node-3" and abs(f.onset - (START + 100 * STEP)) <= 2 * STEP


def test_peer_groups_compare_like_with_like() -> None:
    def gen(t: FloatArray, i: int) -> FloatArray:
        return noisy(0.35 if i % 2 else 0.2, 0.03)(t, i)

    groups = {f"node-{i}": ("L4" if i % 2 else "H100") for i in range(8)}
    assert detect(windows({FWD: gen}, instances=8), peer_groups=groups).fleet_outliers == ()

    def gen2(t: FloatArray, i: int) -> FloatArray:
        level = 0.35 if i % 2 else 0.2
        return noisy(level * (1.8 if i == 4 else 1.0), 0.03)(t, i)

    r = detect(windows({FWD: gen2}, instances=8), peer_groups=groups)
    assert [(f.instance, f.group) for f in r.fleet_outliers] == [("node-4", "H100")]


def test_too_few_peers_and_fleetwide_shift() -> None:
    def gen(t: FloatArray, i: int) -> FloatArray:
        return noisy(0.6 if i == 0 else 0.2)(t, i)

    assert detect(windows({FWD: gen}, instances=2, baselines=())).fleet_outliers == ()
    inc = {FWD: with_step(noisy(0.2), 50, 2.0)}
    r = detect(windows({FWD: noisy(0.2)}, instances=8, incident=inc))
    assert r.fleet_outliers == () and len(r.anomalies) == 8  # deviations, not outliers


def test_direction_respected_and_nan_rows() -> None:
    def gen(t: FloatArray, i: int) -> FloatArray:
        if i == 5:
            return np.full(t.size, np.nan)
        return noisy(1400.0 if i == 2 else 1800.0, 0.01)(t, i)

    r = detect(windows({"infra.gpu_sm_clock_mhz": gen}, instances=6))
    assert [f.instance for f in r.fleet_outliers] == ["node-2"]
    assert r.fleet_outliers[0].direction == "down"

    def fast(t: FloatArray, i: int) -> FloatArray:
        return noisy(0.1 if i == 2 else 0.2)(t, i)

    assert detect(windows({FWD: fast}, instances=6)).fleet_outliers == ()


def test_an_idle_instance_stays_among_its_busy_peers() -> None:
    """An instance serving no requests has no latency ratio (nothing to divide by), so it
    exports fewer signals than its peers: it is still one of them, and the outlier on the rate
    it serves. A host with other signals altogether keeps a role of its own."""
    from infersight.detect.fleet import default_peer_groups
    from infersight.frame import MetricFrame, SignalSeries

    rate, lat = "service.request_rate", "service.e2e_latency_p99"
    w = windows({rate: lambda t, i: noisy(0.0 if i == 0 else 180.0, 0.03)(t, i)}, instances=6)
    inc = w["incident"]
    busy = tuple(f"node-{i}" for i in range(1, 6))
    series = {
        **inc.series,
        lat: SignalSeries(busy, np.full((5, inc.n), 0.4)),
        "dependency.vector_query_p99": SignalSeries(("vectordb-0",), np.full((1, inc.n), 0.02)),
    }
    w["incident"] = MetricFrame(inc.start, inc.step, inc.n, series)
    roles = default_peer_groups(w["incident"])
    assert len({roles[f"node-{i}"] for i in range(6)}) == 1
    assert roles["vectordb-0"] != roles["node-0"]
    r = detect(w)
    assert [(f.instance, f.signal, f.direction) for f in r.fleet_outliers] == [
        ("node-0", rate, "down")
    ]
