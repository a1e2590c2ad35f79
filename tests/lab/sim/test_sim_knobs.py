"""Each perturbation knob changes the simulator's output the way it says, and the defaults
change nothing."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from infersight.lab.sim import SimResult, simulate
from infersight.lab.sim.dialects import PYTHON_RUNTIME
from infersight.lab.sim.knobs import Exposure, Variation
from infersight.lab.sim.traffic import DAY

pytestmark = pytest.mark.sim


@cache
def _run(
    scenario: str, magnitude: float = 1.0, instances: int = 4, step: float = 60.0
) -> SimResult:
    return simulate(
        scenario, hours=8, instances=instances, seed=3, step=step,
        variation=Variation(magnitude=magnitude),
    )  # fmt: skip


def _rows(res: SimResult, signal: str, instance: str) -> np.ndarray:
    s = res.frame.get(signal)
    assert s is not None, signal
    return np.asarray(s.values[s.instances.index(instance)])


def test_default_knobs_change_nothing() -> None:
    a = simulate("slow_instance", hours=4, instances=3, seed=1, step=60.0)
    b = simulate("slow_instance", hours=4, instances=3, seed=1, step=60.0, variation=Variation())
    for sig, s in a.frame.series.items():
        np.testing.assert_array_equal(s.values, b.frame.series[sig].values, err_msg=sig)
    names = {s.name: s.values for s in a.raw("vllm")}
    again = {s.name: s.values for s in a.raw("vllm", exposure=Exposure())}
    assert names.keys() == again.keys()


def test_magnitude_scales_the_deviation_from_healthy() -> None:
    """The same draw (onset, card) at 0.3×, 1× and 3×: the slow card's batches slow by less and
    by more; its slowdown factor is 1 + (f − 1)·magnitude."""
    runs = {m: _run("slow_instance", m) for m in (0.3, 1.0, 3.0)}
    truth = runs[1.0].truth
    assert {r.truth.onset for r in runs.values()} == {truth.onset}
    assert {r.truth.instances for r in runs.values()} == {truth.instances}
    f = truth.params["slow_factor"]
    assert runs[0.3].truth.params["slow_factor"] == pytest.approx(1 + 0.3 * (f - 1))
    assert runs[3.0].truth.params["slow_factor"] == pytest.approx(1 + 3 * (f - 1))
    (node,) = truth.instances
    k = int(np.searchsorted(runs[1.0].times, truth.onset))
    rise = {}
    for m, r in runs.items():
        fwd = _rows(r, "inference.forward_time_avg", node)
        rise[m] = np.nanmedian(fwd[k + 5 :]) / np.nanmedian(fwd[: k - 1])
    assert 1.0 < rise[0.3] < rise[1.0] < rise[3.0]


@pytest.mark.parametrize(
    ("scenario", "param", "grows"),
    [
        ("cache_capacity", "cache_ratio", False),  # ratio scale: further below 1, never ≤ 0
        ("threadpool_too_small", "workers", False),  # at least one worker
        ("vector_db_swap", "index_over_ram", True),  # still past RAM at 0.3×
        ("traffic_surge", "surge", True),
        ("network_retransmits", "loss", True),
        ("lb_instance_removed", "removed", True),
    ],
)
def test_magnitude_moves_each_fault_away_from_healthy(
    scenario: str, param: str, grows: bool
) -> None:
    lo, mid, hi = (_run(scenario, m).truth.params[param] for m in (0.3, 1.0, 3.0))
    assert (lo <= mid <= hi) if grows else (lo >= mid >= hi)
    assert lo != hi
    if param == "cache_ratio":
        assert 0 < hi < mid < lo < 1
    if param == "workers":
        assert hi >= 1
    if param == "index_over_ram":
        assert lo > 1


@pytest.mark.parametrize("band", ["night", "day"])
@pytest.mark.parametrize("scenario", ["slow_instance", "gpu_thermal_throttling", "incident_0217"])
def test_onset_band_moves_the_onset_to_night_or_day(band: str, scenario: str) -> None:
    v = Variation(onset=band)
    res = simulate(scenario, hours=26, instances=3, seed=2, step=60.0, variation=v)
    assert res.truth.onset is not None
    hour = (res.truth.onset % DAY) / 3600.0
    h0, h1 = v.band() or (0.0, 0.0)
    assert h0 <= hour <= h1, hour
    # with hours of history before it and the alert's time after it
    assert (
        res.truth.onset - res.times[0] >= 5 * 3600 and res.times[-1] - res.truth.onset >= 5 * 3600
    )


def test_64_instances_give_64_instance_series() -> None:
    res = simulate("healthy_flat", hours=1, instances=64, seed=0, step=60.0)
    rows = res.frame.get("inference.gpu_util")
    assert rows is not None and len([i for i in rows.instances if i.startswith("node-")]) == 64
    store = res.raw("vllm")
    assert len(store.series("DCGM_FI_DEV_GPU_UTIL")) == 64
    assert len(store.series("vllm:num_requests_waiting")) == 64
    two = simulate("healthy_flat", hours=1, instances=2, seed=0, step=60.0).raw("vllm")
    assert len(two.series("DCGM_FI_DEV_GPU_UTIL")) == 2


def test_scrape_interval_keeps_every_kth_sample_and_every_count() -> None:
    res = _run("healthy_flat", step=15.0)
    fine = res.raw("vllm")
    coarse = res.raw("vllm", exposure=Exposure(scrape_s=60.0))
    for name in ("vllm:num_requests_waiting", "vllm:request_success_total", "DCGM_FI_DEV_FB_USED"):
        (c, *_), (f, *_) = coarse.series(name), fine.series(name)
        assert np.all(np.diff(c.ts) == 60.0), name
        assert np.diff(f.ts).min() == 15.0
        # a counter scraped less often loses resolution, never counts
        np.testing.assert_array_equal(c.values, f.values[np.isin(f.ts, c.ts)])
    with pytest.raises(ValueError, match="not a multiple"):
        res.raw("vllm", exposure=Exposure(scrape_s=50.0))


def test_noise_knob_multiplies_the_fresh_noise() -> None:
    """Step-to-step wiggle of each instance's request rate: three times the noise, about three
    times the wiggle (the diurnal curve itself is the same)."""

    def wiggle(noise: float) -> float:
        res = simulate(
            "healthy_flat", hours=4, instances=4, seed=5, step=60.0,
            variation=Variation(noise=noise),
        )  # fmt: skip
        rate = res.frame.get("service.request_rate")
        assert rate is not None
        v = rate.values[[i.startswith("node-") for i in rate.instances]]
        return float(np.nanstd(np.diff(np.log(v), axis=1)))

    assert 2.0 < wiggle(3.0) / wiggle(1.0) < 4.0


def test_an_exporter_left_out_leaves_no_sample_nor_up() -> None:
    res = _run("healthy_flat")
    full = res.raw("vllm").names()
    assert any(n.startswith("DCGM_") for n in full) and PYTHON_RUNTIME[0] in full
    for without, gone in (
        ("dcgm", "DCGM_"),
        ("node", "node_"),
        ("redis", "redis_"),
        ("vector_db", "milvus_"),
        ("python_runtime", "python_"),
    ):
        store = res.raw("vllm", exposure=Exposure(without=(without,)))
        names = store.names()
        assert not [n for n in names if n.startswith(gone)], without
        assert names >= {n for n in full if not n.startswith(gone) and n not in PYTHON_RUNTIME}
        jobs = {s.label_map["job"] for s in store.series("up")}
        assert {"dcgm": "dcgm", "node": "node", "redis": "redis", "vector_db": "milvus"}.get(
            without, "-"
        ) not in jobs
    with pytest.raises(ValueError, match="unknown exporter"):
        res.raw("vllm", exposure=Exposure(without=("nvidia-smi",)))


def test_relabelling_drops_or_renames_a_metric() -> None:
    res = _run("healthy_flat")
    store = res.raw("vllm")
    marker = "DCGM_FI_DEV_GPU_UTIL"
    dropped = res.raw("vllm", exposure=Exposure(drop_metrics=(marker,)))
    assert dropped.names() == store.names() - {marker}
    renamed = res.raw("vllm", exposure=Exposure(rename_metrics=((marker, "gpu_util_pct"),)))
    assert marker not in renamed.names()
    a = sorted(store.series(marker), key=lambda s: s.labels)
    b = sorted(renamed.series("gpu_util_pct"), key=lambda s: s.labels)
    assert [s.labels for s in a] == [s.labels for s in b]
    np.testing.assert_array_equal(a[0].values, b[0].values)
