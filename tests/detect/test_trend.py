"""Trends: leaks with a time to exhaustion; noise, sawtooth and daily ramps are not leaks."""

from __future__ import annotations

import numpy as np
import pytest
from synth import START, STEP, FloatArray, noisy, windows

from infersight.detect import DetectConfig, detect
from infersight.detect.trend_fit import theil_sen_spans

VRAM = "inference.gpu_mem_used_ratio"
RSS = "service.process_rss"


def leak(level: float, per_h: float, noise: float) -> object:
    def gen(t: FloatArray, i: int) -> FloatArray:
        rng = np.random.default_rng(i + 7)
        out: FloatArray = level + per_h * (t - t[0]) / 3600 + noise * rng.standard_normal(t.size)
        return out

    return gen


def test_theil_sen_slope_robust_to_spikes_and_gaps() -> None:
    t = np.arange(240) * 15.0
    y = 0.5 + 1e-5 * t + 0.002 * np.random.default_rng(0).standard_normal(240)
    y[[10, 50, 90]] = 5.0
    y[100:130] = np.nan
    fit = theil_sen_spans(t, y[None, :], np.array([0]), np.array([240]), 48)
    assert fit.slope[0] == pytest.approx(1e-5, rel=0.05)
    assert fit.tau[0] > 0.8
    assert fit.level_end[0] == pytest.approx(0.5 + 1e-5 * t[-1], abs=0.01)


def test_vram_leak_with_time_to_exhaustion() -> None:
    w = windows({VRAM: noisy(0.55, 0.01)}, incident={VRAM: leak(0.55, 0.2, 0.005)})  # type: ignore[dict-item]
    r = detect(w)
    assert {t.instance for t in r.trends} == {f"node-{i}" for i in range(4)}
    for tr in r.trends:
        assert tr.slope_per_h == pytest.approx(0.2, rel=0.1)
        assert tr.level == pytest.approx(0.75, abs=0.02)
        assert tr.time_to_exhaustion_s == pytest.approx(0.25 / 0.2 * 3600, rel=0.15)
        assert tr.exhausts_at is not None and tr.exhausts_at > START
    kinds = {a.kind for a in r.anomalies if a.signal == VRAM}
    assert "trend" in kinds


def test_bytes_leak_slope_only_without_capacity() -> None:
    gib = 2.0**30
    inc = {RSS: leak(4 * gib, 1 * gib, 0.01 * gib)}
    w = windows({RSS: noisy(4 * gib, 0.01)}, incident=inc)  # type: ignore[dict-item]
    r = detect(w)
    assert len(r.trends) == 4
    assert all(t.capacity is None and t.time_to_exhaustion_s is None for t in r.trends)
    r = detect(w, config=DetectConfig(capacities={RSS: 8 * gib}))
    assert all(t.time_to_exhaustion_s == pytest.approx(3 * 3600, rel=0.15) for t in r.trends)


def test_noise_and_sawtooth_are_not_trends() -> None:
    def saw(t: FloatArray, i: int) -> FloatArray:
        out: FloatArray = 0.6 + 0.1 * ((t - t[0]) % 600) / 600  # GC-like: up, drop, up
        return out

    w = windows({VRAM: noisy(0.6, 0.03), "dependency.cache_mem_ratio": saw})
    assert detect(w).trends == ()


def test_daily_ramp_at_same_level_as_yesterday_is_not_a_leak() -> None:
    w = windows({VRAM: leak(0.5, 0.1, 0.003)}, baselines=("baseline-1d",))  # type: ignore[dict-item]
    assert detect(w).trends == ()
    # without yesterday the same ramp is reported: the comparison is what suppresses it
    w = windows({VRAM: leak(0.5, 0.1, 0.003)}, baselines=())  # type: ignore[dict-item]
    assert len(detect(w).trends) == 4


def test_falling_available_memory_exhausts_at_zero() -> None:
    w = windows(
        {"infra.mem_available_ratio": noisy(0.5, 0.01)},
        incident={"infra.mem_available_ratio": leak(0.5, -0.2, 0.003)},
    )  # type: ignore[dict-item]
    r = detect(w)
    assert len(r.trends) == 4
    assert all(
        t.time_to_exhaustion_s == pytest.approx(0.3 / 0.2 * 3600, rel=0.15) for t in r.trends
    )
    assert STEP == 15.0


def test_a_step_is_not_a_leak() -> None:
    def step(t: FloatArray, i: int) -> FloatArray:
        out: FloatArray = np.where(np.arange(t.size) < 120, 0.55, 0.7)
        return out + 0.002 * np.random.default_rng(i).standard_normal(t.size)

    r = detect(windows({VRAM: noisy(0.55, 0.003)}, incident={VRAM: step}))
    assert r.trends == ()
    assert len([a for a in r.anomalies if a.kind == "deviation"]) == 4


def test_a_slight_drift_that_jumps_at_the_end_is_not_a_leak() -> None:
    """The fill came from the jump, not from the slope: the line ends far below the data."""

    def drift_then_jump(t: FloatArray, i: int) -> FloatArray:
        out: FloatArray = 0.6 + 0.05 * (t - t[0]) / 3600  # 5 points an hour, monotone
        out = out + 0.001 * np.random.default_rng(i).standard_normal(t.size)
        out[-t.size // 6 :] = 1.0  # the last sixth: the card is full
        return out

    base = {VRAM: noisy(0.6, 0.001)}
    assert detect(windows(base, incident={VRAM: drift_then_jump})).trends == ()
    # the same drift without the jump is still a climb worth reporting
    assert len(detect(windows(base, incident={VRAM: leak(0.6, 0.05, 0.001)})).trends) == 4  # type: ignore[dict-item]


def _late_leak(level: float, per_h: float, start_share: float) -> object:
    """Flat, then climbing from `start_share` of the window on (a leak begun inside it)."""

    def gen(t: FloatArray, i: int) -> FloatArray:
        rng = np.random.default_rng(i + 11)
        t0 = t[0] + start_share * (t[-1] - t[0])
        out: FloatArray = level + per_h * np.maximum(t - t0, 0) / 3600
        return out + 0.002 * rng.standard_normal(t.size)

    return gen


def test_leak_begun_inside_the_window_runs_out_at_the_pace_of_now() -> None:
    # flat for 60% of the hour, then 30%/h: the whole window averages a far slower pace
    w = windows({VRAM: noisy(0.6, 0.003)}, incident={VRAM: _late_leak(0.6, 0.3, 0.6)})  # type: ignore[dict-item]
    r = detect(w)
    assert {t.instance for t in r.trends} == {f"node-{i}" for i in range(4)}
    for tr in r.trends:
        assert tr.slope_per_h == pytest.approx(0.3, rel=0.25)
        assert tr.time_to_exhaustion_s is not None
        assert tr.time_to_exhaustion_s == pytest.approx((1 - tr.level) / 0.3 * 3600, rel=0.3)
        assert tr.start > START  # the fit began inside the window, where the climb did


def _climb_then(level: float, per_h: float, fall_to: float, at_share: float) -> object:
    """Climbing, then at `at_share` of the window falling to `fall_to` and climbing again."""

    def gen(t: FloatArray, i: int) -> FloatArray:
        rng = np.random.default_rng(i + 13)
        cut = int(at_share * t.size)
        out: FloatArray = level + per_h * (t - t[0]) / 3600
        out[cut:] = fall_to + per_h * (t[cut:] - t[cut]) / 3600
        return out + 0.002 * rng.standard_normal(t.size)

    return gen


def test_the_climb_before_a_restart_is_a_leak_and_runs_out_from_the_level_now() -> None:
    # a process leaking 20%/h restarts near the end of the window and comes back at 60%
    gen = _climb_then(0.6, 0.2, 0.6, 0.9)
    w = windows({VRAM: noisy(0.6, 0.003)}, incident={VRAM: gen})  # type: ignore[dict-item]
    r = detect(w)
    assert {t.instance for t in r.trends} == {f"node-{i}" for i in range(4)}
    for tr in r.trends:
        assert tr.slope_per_h == pytest.approx(0.2, rel=0.15)
        assert tr.level == pytest.approx(0.6, abs=0.05)  # after the restart
        assert tr.time_to_exhaustion_s == pytest.approx(0.4 / 0.2 * 3600, rel=0.3)


def test_instances_restarting_at_different_times_each_keep_their_own_climb() -> None:
    # the fleet's climbs end at four different points: each is fitted up to its own fall
    shares = (0.45, 0.6, 0.75, 0.9)

    def gen(t: FloatArray, i: int) -> FloatArray:
        return _climb_then(0.55, 0.2, 0.5, shares[i])(t, i)  # type: ignore[operator,no-any-return]

    w = windows({VRAM: noisy(0.55, 0.003)}, incident={VRAM: gen})  # type: ignore[dict-item]
    trends = {tr.instance: tr for tr in detect(w).trends}
    assert set(trends) == {f"node-{i}" for i in range(4)}
    for i, share in enumerate(shares):
        tr = trends[f"node-{i}"]
        assert tr.slope_per_h == pytest.approx(0.2, rel=0.15)
        assert tr.span_s == pytest.approx(share * 240 * 15.0, abs=4 * 15.0)  # up to its fall
        assert tr.level == pytest.approx(0.5 + 0.2 * (1 - share), abs=0.02)  # the level now


def test_a_dip_that_gives_back_little_of_a_flat_series_is_not_a_reset() -> None:
    # flat with one small dip: nothing climbed before it, so nothing is a leak
    def dip(t: FloatArray, i: int) -> FloatArray:
        rng = np.random.default_rng(i + 17)
        out: FloatArray = 0.6 + 0.003 * rng.standard_normal(t.size)
        out[int(0.8 * t.size)] -= 0.05
        return out

    w = windows({VRAM: noisy(0.6, 0.003)}, incident={VRAM: dip})  # type: ignore[dict-item]
    assert detect(w).trends == ()


def test_a_step_on_yesterdays_ramp_is_not_a_leak_but_a_leak_since_yesterday_is() -> None:
    """Another process arriving (a step) on top of the afternoon's ramp sits above yesterday by
    the step, not by a day's climb; a leak climbing since yesterday sits a day's climb higher."""

    def step_on_ramp(t: FloatArray, i: int) -> FloatArray:
        ramp: FloatArray = leak(0.5, 0.1, 0.003)(t, i)  # type: ignore[operator]
        return ramp + np.where(np.arange(t.size) >= t.size // 6, 0.1, 0.0)

    yesterday = {VRAM: leak(0.5, 0.1, 0.003)}
    w = windows(yesterday, incident={VRAM: step_on_ramp}, baselines=("baseline-1d",))  # type: ignore[dict-item]
    assert detect(w).trends == ()
    # the same climb yesterday, and today a day's climb at its pace (12 GiB) above it: a leak
    gib = 2.0**30
    w = windows(
        {RSS: leak(4 * gib, 0.5 * gib, 0.01 * gib)},
        incident={RSS: leak(16 * gib, 0.5 * gib, 0.01 * gib)},
        baselines=("baseline-1d",),
    )  # type: ignore[dict-item]
    assert len(detect(w).trends) == 4
