"""Slow climbs across the baselines, and the band's scale floor for units with low floors."""

from __future__ import annotations

import numpy as np
import pytest

from infersight.detect import DetectConfig, detect
from infersight.frame import MetricFrame, SignalSeries

STEP, N = 15.0, 240
END = 1.7649e9
RATIO = "inference.gpu_mem_used_ratio"


def _windows(level_at: object, noise: float = 0.0005, rows: int = 3) -> dict[str, MetricFrame]:
    """incident / baseline-1h / baseline-1d of one signal; level_at(hours before now)."""
    rng = np.random.default_rng(0)
    out = {}
    for name, lag_h in (("incident", 0.0), ("baseline-1h", 1.0), ("baseline-1d", 24.0)):
        hours = lag_h + (N - 1 - np.arange(N)) * STEP / 3600
        v = np.vstack([level_at(hours) + noise * rng.standard_normal(N) for _ in range(rows)])  # type: ignore[operator]
        start = END - N * STEP - lag_h * 3600
        insts = tuple(f"node-{i}" for i in range(rows))
        out[name] = MetricFrame(start, STEP, N, {RATIO: SignalSeries(insts, v)})
    return out


def test_a_climb_too_slow_for_one_window_is_read_against_an_hour_and_a_day_ago() -> None:
    # 0.4 points an hour, for 14 h: 90% → 95.6%, full in about 11 h
    r = detect(_windows(lambda h: 0.956 - 0.004 * np.clip(h, 0, 14)))
    assert {t.instance for t in r.trends} == {"node-0", "node-1", "node-2"}
    for t in r.trends:
        assert t.slope_per_h == pytest.approx(0.004, rel=0.2)
        assert t.time_to_exhaustion_s is not None
        assert 8 * 3600 < t.time_to_exhaustion_s < 15 * 3600


def test_a_level_that_stepped_up_yesterday_and_holds_is_no_climb() -> None:
    # higher than a day ago, but flat for the last hours: no pace to run out at
    assert not detect(_windows(lambda h: np.where(h > 10, 0.6, 0.9))).trends


def test_a_level_back_at_yesterdays_is_no_climb() -> None:
    # the last hour climbed 5 points (the morning ramp), and stands where it stood a day ago
    assert not detect(_windows(lambda h: 0.6 - 0.2 * np.sin(2 * np.pi * h / 24))).trends


def test_the_scale_floor_lets_a_clock_s_own_floor_decide() -> None:
    cfg = DetectConfig()
    # a clock 10% under its level is worth a look: a steady clock must not need 20% for z 4
    assert cfg.scale_floor_rel("MHz") * cfg.z_threshold <= cfg.rel_floor_for("MHz")
    # temperature follows the load by tens of per cent a day: the general floor
    assert cfg.scale_floor_rel("celsius") == cfg.mad_floor_rel
    assert cfg.scale_floor_rel("s") == cfg.mad_floor_rel
