"""Deviation against baselines: steps fire with the right onset; normal life does not."""

from __future__ import annotations

import numpy as np
import pytest
from synth import START, STEP, FloatArray, Gen, N, diurnal, noisy, windows, with_step

from infersight.detect import DetectConfig, detect
from infersight.frame import MetricFrame, SignalSeries

P99 = "service.e2e_latency_p99"


def _dev(r: object, signal: str) -> list[object]:
    return [a for a in r.anomalies if a.kind == "deviation" and a.signal == signal]  # type: ignore[attr-defined]


@pytest.mark.parametrize("at", [60, 150, 200])
def test_step_change_detected_with_onset(at: int) -> None:
    w = windows({P99: noisy(0.2)}, incident={P99: with_step(noisy(0.2), at, 1.8)})
    r = detect(w)
    devs = [a for a in r.anomalies if a.kind == "deviation"]
    assert {a.instance for a in devs} == {f"node-{i}" for i in range(4)}
    for a in devs:
        assert abs((a.onset - START) / STEP - at) <= 2
        assert a.onset_uncertainty_s >= STEP
        assert a.direction == "up" and a.ratio == pytest.approx(1.8, rel=0.1)
        assert set(a.baselines) == {"baseline-1h", "baseline-1d", "baseline-7d"}
        assert not a.weak and a.score > 1
    assert r.unavailable_baselines == ()


def test_diurnal_shape_repeating_does_not_fire() -> None:
    # 06:00-07:00: the steepest part of the morning ramp, ±50% amplitude, noisy.
    start = START - 4 * 3600

    def gen(t: FloatArray, i: int) -> FloatArray:
        rng = np.random.default_rng(int(t[0]) + i)
        out: FloatArray = diurnal(t, 100.0, 0.5) * (1 + 0.05 * rng.standard_normal(t.size))
        return out

    w = windows({"service.request_rate": gen, P99: gen}, start=start, instances=6)
    assert detect(w).anomalies == ()


def test_traffic_swing_within_floor_does_not_fire_against_hour_before() -> None:
    swing = with_step(noisy(100.0, 0.03), 120, 1.25)
    w = windows(
        {"service.request_rate": noisy(100.0, 0.03)},
        baselines=("baseline-1h",),
        incident={"service.request_rate": swing},
    )
    assert detect(w).anomalies == ()


@pytest.mark.parametrize("width", [1, 2, 3])
def test_short_spikes_do_not_fire(width: int) -> None:
    def spiky(t: FloatArray, i: int) -> FloatArray:
        v = noisy(0.2)(t, i).copy()
        for s in (40, 100, 170, 220):
            v[s : s + width] *= 10
        return v

    w = windows({P99: noisy(0.2)}, incident={P99: spiky})
    assert _dev(detect(w), P99) == []


def test_counter_reset_negative_spike_does_not_fire() -> None:
    def reset(t: FloatArray, i: int) -> FloatArray:
        v = noisy(50.0)(t, i).copy()
        v[90] = -4000.0  # rate() across a counter reset without the reset handled
        return v

    w = windows({"service.request_rate": noisy(50.0)}, incident={"service.request_rate": reset})
    assert detect(w).anomalies == ()


@pytest.mark.filterwarnings("error")
def test_flat_lines_no_division_errors_no_false_alarm() -> None:
    def flat(v: float) -> Gen:
        return lambda t, i: np.full(t.size, v)

    w = windows(
        {"service.queue_length": flat(0.0), P99: flat(0.2), "infra.gpu_temp_c": flat(60)},
        incident={P99: flat(0.21), "infra.gpu_temp_c": flat(62)},
    )
    assert detect(w).anomalies == ()
    w = windows(
        {"service.queue_length": flat(0.0)},
        incident={"service.queue_length": with_step(flat(0.0), 100, 1.0)},
    )
    w2 = windows(
        {"service.queue_length": flat(0.0)},
        incident={
            "service.queue_length": lambda t, i: np.where(np.arange(t.size) >= 100, 8.0, 0.0)
        },
    )
    assert detect(w).anomalies == ()
    devs = _dev(detect(w2), "service.queue_length")
    assert len(devs) == 4
    assert all(a.onset == START + 100 * STEP for a in devs)  # type: ignore[attr-defined]


@pytest.mark.filterwarnings("error")
def test_gaps_and_nan_handled() -> None:
    def gappy(base: Gen) -> Gen:
        def gen(t: FloatArray, i: int) -> FloatArray:
            v = base(t, i).copy()
            rng = np.random.default_rng(i + int(t[0]))
            v[rng.random(t.size) < 0.2] = np.nan
            v[20:50] = np.nan
            return v

        return gen

    healthy = windows({P99: gappy(noisy(0.2))})
    assert detect(healthy).anomalies == ()
    step = windows({P99: gappy(noisy(0.2))}, incident={P99: gappy(with_step(noisy(0.2), 150, 2))})
    devs = _dev(detect(step), P99)
    assert len(devs) == 4
    assert all(abs(a.onset - (START + 150 * STEP)) <= 4 * STEP for a in devs)  # type: ignore[attr-defined]
    # all-NaN everywhere: nothing, and no crash
    empty = windows({P99: lambda t, i: np.full(t.size, np.nan)})
    assert detect(empty).anomalies == ()


def test_missing_baselines_fall_back_to_pre_onset_and_say_so() -> None:
    w = windows({P99: noisy(0.2)}, baselines=(), incident={P99: with_step(noisy(0.2), 170, 2.0)})
    r = detect(w)
    assert set(r.unavailable_baselines) == {"baseline-1h", "baseline-1d", "baseline-7d"}
    assert any("pre-onset" in note for note in r.baseline_notes)
    devs = _dev(r, P99)
    assert len(devs) == 4 and r.fallback_series == 4
    for a in devs:
        assert a.weak and a.baselines == ("pre-onset",)  # type: ignore[attr-defined]
    # weaker evidence scores lower than the same step against real baselines
    strong = _dev(
        detect(windows({P99: noisy(0.2)}, incident={P99: with_step(noisy(0.2), 170, 2.0)})), P99
    )
    assert max(a.score for a in devs) < min(a.score for a in strong)  # type: ignore[attr-defined]


def test_partial_baselines_named() -> None:
    w = windows(
        {P99: noisy(0.2)},
        baselines=("baseline-1d",),
        incident={P99: with_step(noisy(0.2), 150, 2.0)},
    )
    r = detect(w)
    assert set(r.unavailable_baselines) == {"baseline-1h", "baseline-7d"}
    assert all(a.baselines == ("baseline-1d",) for a in _dev(r, P99))  # type: ignore[attr-defined]


def test_only_the_bad_direction_fires() -> None:
    sig = {
        P99: noisy(0.2),
        "service.request_rate": noisy(100.0),
        "infra.gpu_sm_clock_mhz": noisy(1800, 0.01),
    }
    inc = {
        P99: with_step(noisy(0.2), 120, 0.4),
        "service.request_rate": with_step(noisy(100.0), 120, 0.4),
        "infra.gpu_sm_clock_mhz": with_step(noisy(1800, 0.01), 120, 0.6),
    }
    r = detect(windows(sig, incident=inc))
    assert _dev(r, P99) == []  # latency falling is not trouble
    rate = _dev(r, "service.request_rate")
    assert len(rate) == 4 and all(a.direction == "down" for a in rate)  # type: ignore[attr-defined]
    assert len(_dev(r, "infra.gpu_sm_clock_mhz")) == 4


def test_ratio_signals_use_absolute_floor() -> None:
    sig = {"inference.gpu_util": noisy(0.5, 0.01), "service.error_ratio": noisy(0.001, 0.2)}
    inc = {
        "inference.gpu_util": with_step(noisy(0.5, 0.01), 120, 1.12),  # +6 points
        "service.error_ratio": with_step(noisy(0.001, 0.2), 120, 50),
    }
    r = detect(windows(sig, incident=inc))
    assert _dev(r, "inference.gpu_util") == []
    assert len(_dev(r, "service.error_ratio")) == 4


def test_long_incident_window_derives_its_own_baselines() -> None:
    n = int(2.2 * 86400 / 60)

    def gen(t: FloatArray, i: int) -> FloatArray:
        rng = np.random.default_rng(i)
        out: FloatArray = diurnal(t, 100.0, 0.5) * (1 + 0.04 * rng.standard_normal(t.size))
        return out

    w = windows({"service.request_rate": gen}, n=n, step=60.0, baselines=())
    r = detect(w)
    assert r.anomalies == ()
    assert "baseline-1d" not in r.unavailable_baselines
    at = n - 200
    w = windows(
        {"service.request_rate": gen},
        n=n,
        step=60.0,
        baselines=(),
        incident={"service.request_rate": with_step(gen, at, 0.3)},
    )
    devs = _dev(detect(w), "service.request_rate")
    assert len(devs) == 4
    for a in devs:
        assert abs(a.onset - (START + at * 60.0)) <= 120  # type: ignore[attr-defined]
        assert "self-1d" in a.baselines and not a.weak  # type: ignore[attr-defined]


def test_at_ignores_points_after_it() -> None:
    w = windows({P99: noisy(0.2)}, incident={P99: with_step(noisy(0.2), 200, 2.0)})
    assert _dev(detect(w, at=START + 180 * STEP), P99) == []
    assert len(_dev(detect(w), P99)) == 4


def test_stricter_config_is_honoured() -> None:
    w = windows({P99: noisy(0.2)}, incident={P99: with_step(noisy(0.2), 120, 1.6)})
    assert len(_dev(detect(w), P99)) == 4
    assert _dev(detect(w, config=DetectConfig(rel_floor=0.8)), P99) == []


def test_n_is_grid() -> None:
    assert N * STEP == 3600


def _edge_windows(edge_in_refs: bool, at: int) -> dict[str, MetricFrame]:
    """24-point windows (5-min grid) whose newest points follow a daily edge at index `at`."""
    n, step = 24, 300.0
    rng = np.random.default_rng(at)

    def frame(start: float, edge: bool) -> MetricFrame:
        v = np.full((1, n), 20.0)
        if edge:
            v[:, at:] = 68.0
        v = v * (1 + 0.01 * rng.standard_normal(v.shape))
        return MetricFrame(start, step, n, {P99: SignalSeries(("node-0",), v)})

    t0 = 1_750_000_000.0
    return {
        "incident": frame(t0, True),
        "baseline-1h": frame(t0 - 3600.0, False),
        "baseline-1d": frame(t0 - 86400.0, edge_in_refs),
        "baseline-7d": frame(t0 - 7 * 86400.0, edge_in_refs),
    }


@pytest.mark.parametrize("at", [12, 18, 19])
def test_daily_edge_seen_yesterday_and_last_week_is_not_flagged(at: int) -> None:
    assert _dev(detect(_edge_windows(True, at)), P99) == []
    # the same edge that yesterday and last week did not have is a deviation
    assert _dev(detect(_edge_windows(False, at)), P99)


def test_edge_following_needs_every_seasonal_reference() -> None:
    w = _edge_windows(True, 12)
    yest_only = dict(w)
    yest_only["baseline-7d"] = _edge_windows(False, 12)["baseline-7d"]
    # last week had no edge here: one odd day does not move the centre
    assert _dev(detect(yest_only), P99)
    assert _dev(detect(w, config=DetectConfig(edge_z=0)), P99)  # off: the old, lagging band


def test_edge_following_survives_gaps_in_the_references() -> None:
    w = _edge_windows(True, 18)
    y = w["baseline-1d"].get(P99)
    assert y is not None
    v = y.values.copy()
    v[0, 19] = np.nan  # a missed scrape just after yesterday's edge
    w["baseline-1d"] = MetricFrame(
        w["baseline-1d"].start, 300.0, 24, {P99: SignalSeries(("node-0",), v)}
    )
    assert _dev(detect(w), P99) == []
