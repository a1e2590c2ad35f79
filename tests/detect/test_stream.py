"""The streaming detectors, point by point: kinds, timing, daily edges, honest scores."""

from __future__ import annotations

import math

import numpy as np
import pytest

from infersight.detect.stream import PointScore, SeriesDetector, StreamFinding, TailModel
from infersight.detect.stream_config import StreamConfig

STEP = 300.0  # 5-min points
T0 = 1_700_000_000.0 - (1_700_000_000.0 % 86400.0)  # midnight UTC


def _run(x: np.ndarray, cfg: StreamConfig | None = None) -> list[PointScore]:
    det = SeriesDetector("s", cfg)
    return [det.update(T0 + i * STEP, float(v)) for i, v in enumerate(x)]


def _findings(ps: list[PointScore]) -> list[tuple[int, StreamFinding]]:
    return [(i, p.finding) for i, p in enumerate(ps) if p.finding is not None]


def _noise(n: int, seed: int = 0) -> np.ndarray:
    return 100.0 + np.random.default_rng(seed).normal(0.0, 2.0, n)


def test_lone_spike_reported_at_once_as_a_spike() -> None:
    x = _noise(1500)
    x[1200] += 40.0
    f = _findings(_run(x))
    at = [(i, g) for i, g in f if i >= 1100]
    assert [i for i, _ in at] == [1200]
    g = at[0][1]
    assert g.kind == "spike" and g.direction == "up"
    assert g.reported_at == T0 + 1200 * STEP and g.onset == g.reported_at
    assert g.low < g.expected < g.high < g.observed


def test_small_level_shift_reported_early_as_a_shift() -> None:
    x = _noise(1500, seed=1)
    x[1200:] += 6.0  # 6%: far under the batch detector's 40% floor, 3 sigma
    f = [(i, g) for i, g in _findings(_run(x)) if i >= 1100]
    assert f, "a sustained 3-sigma shift must be reported"
    i, g = f[0]
    assert 1200 <= i <= 1224 and g.kind == "level_shift" and g.direction == "up"  # ≤ 2 h
    assert g.onset <= g.reported_at
    assert len(f) <= 2  # one episode: at most one report per hold


def test_variance_change_reported_as_such() -> None:
    rng = np.random.default_rng(2)
    x = 100.0 + rng.normal(0.0, 1.0, 1500)
    x[1200:] = 100.0 + rng.normal(0.0, 4.0, 300)
    ps = _run(x)
    f = [(i, g) for i, g in _findings(ps) if i >= 1100]
    assert f and 1200 <= f[0][0] <= 1230
    # the first wide swing may be reported as a spike; the points after it say what it is
    kinds = [p.kind for p in ps[1200:1300] if p.surprise >= 3.0]
    assert kinds.count("variance_change") >= 5
    assert not [p for p in ps[1000:1200] if p.kind == "variance_change" and p.surprise >= 3.0]


def test_daily_edge_seen_yesterday_is_not_reported() -> None:
    per_day = int(86400 / STEP)
    n = 5 * per_day
    tod = (np.arange(n) % per_day) / per_day
    x = np.where((tod > 0.35) & (tod < 0.70), 80.0, 20.0) + _noise(n, 3) - 100.0
    ps = _run(x)
    late = [i for i, _ in _findings(ps) if i >= 2 * per_day]
    assert late == []
    assert ps[-1].finding is None and 0.0 <= ps[-1].likelihood < 1.0


def test_pure_noise_reports_at_the_chance_rate_only() -> None:
    # 6 statistics at likelihood 1 − 3.2e-5: about one chance report per 5,000 points
    f = [i for s in range(3) for i, _ in _findings(_run(_noise(3000, seed=s))) if i >= 600]
    assert len(f) <= 3


def test_flat_line_scores_are_bounded_and_a_step_ranks_by_size() -> None:
    base = np.full(800, 5.0)
    small, big = base.copy(), base.copy()
    small[700:] = 5.5
    big[700:] = 9.0
    ps_s, ps_b = _run(small), _run(big)
    assert all(p.surprise == 0.0 for p in ps_s[400:700])  # flat and as usual: no evidence
    s_small, s_big = ps_s[700].surprise, ps_b[700].surprise
    assert math.isfinite(s_small) and math.isfinite(s_big) and s_big > s_small >= 4.0
    assert 0.0 <= ps_s[700].likelihood <= 1.0


def test_missing_points_are_missing_not_healthy() -> None:
    det = SeriesDetector("s")
    for i in range(200):
        det.update(T0 + i * STEP, 100.0 + (i % 7))
    p = det.update(T0 + 200 * STEP, float("nan"))
    assert p.missing and math.isnan(p.likelihood) and p.finding is None


def test_warmup_gives_no_score() -> None:
    ps = _run(_noise(50))
    assert all(math.isnan(p.likelihood) for p in ps)


def test_tail_model_is_monotone_and_empirical_below_its_tail() -> None:
    tm = TailModel(size=1000, tail_share=0.02)
    rng = np.random.default_rng(5)
    for v in np.abs(rng.normal(size=1000)):
        tm.add(float(v))
    s = [tm.surprise(a, 0.25) for a in (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)]
    assert s == sorted(s) and s[0] < 0.5 and s[-1] > 4
    # half of |N(0,1)| lies above 0.674: surprise ≈ log10(2)
    assert abs(tm.surprise(0.674, 0.25) - math.log10(2.0)) < 0.1
    for _ in range(500):  # the window forgets: only the last `size` values count
        tm.add(100.0)
    assert len(tm) == 1000


def test_points_out_of_order_are_refused() -> None:
    det = SeriesDetector("s")
    det.update(T0, 1.0)
    det.update(T0 + STEP, 1.0)
    for t in (T0 + STEP, T0):
        with pytest.raises(ValueError, match="not after the last one"):
            det.update(t, 2.0)
