"""Plot data and SVG drawing: the baseline band, gaps, ticks on round values and UTC times."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import numpy as np
from report_samples import ONSET, START, STEP, N, incident, windows

from infersight.frame import MetricFrame, SignalSeries
from infersight.report.plotdata import plot_series, plot_targets
from infersight.report.svg import nice_ticks, svg_plot, time_ticks, value_ticks

SIG = "dependency.vector_query_p99"


def test_band_is_min_max_and_median_of_the_baselines() -> None:
    w = windows()
    ps = plot_series(w, SIG, "milvus-0")
    assert ps is not None and ps.band_lo is not None and ps.band_hi is not None
    names = ("baseline-1h", "baseline-1d", "baseline-7d")
    rows = np.vstack([w[k].get(SIG).row("milvus-0") for k in names])  # type: ignore[union-attr,misc]
    assert np.allclose(ps.band_lo, rows.min(axis=0))
    assert np.allclose(ps.band_hi, rows.max(axis=0))
    assert np.allclose(ps.band_mid, np.median(rows, axis=0))  # type: ignore[arg-type]
    assert ps.baselines == ("baseline-1h", "baseline-1d", "baseline-7d")
    assert np.allclose(ps.times, START + STEP * np.arange(N))


def test_nothing_to_plot() -> None:
    w = windows()
    assert plot_series(w, SIG, "nobody") is None
    assert plot_series(w, "no.such_signal", "milvus-0") is None
    assert plot_series({}, SIG, "milvus-0") is None
    nan = MetricFrame(START, STEP, N, {SIG: SignalSeries(("milvus-0",), np.full((1, N), np.nan))})
    assert plot_series({"incident": nan}, SIG, "milvus-0") is None


def test_baseline_on_another_grid_is_ignored() -> None:
    w = windows()
    short = w["baseline-1d"].slice_time(w["baseline-1d"].start, w["baseline-1d"].start + 600)
    ps = plot_series({"incident": w["incident"], "baseline-1d": short}, SIG, "milvus-0")
    assert ps is not None and ps.band_lo is None and ps.baselines == ()


def test_targets_follow_roots_and_chains_once() -> None:
    targets = plot_targets(incident())
    keys = [(t.signal, t.instance) for t in targets]
    assert len(keys) == len(set(keys))
    assert keys[0] == (SIG, "milvus-0")
    assert ("infra.gpu_temp_c", "infer-1") not in keys  # refuted: not plotted
    assert {t.hypothesis for t in targets} == {
        "vector_db_swap", "cache_capacity", "queue_backlog", "batch_starvation", "vram_pressure",
        "gpu_util_low",
    }  # fmt: skip


def test_gaps_break_the_line() -> None:
    w = windows()
    inc = w["incident"]
    vals = inc.get(SIG).values.copy()  # type: ignore[union-attr]
    vals[0, 100:110] = np.nan
    w["incident"] = inc.with_series(SIG, ("milvus-0",), vals)
    ps = plot_series(w, SIG, "milvus-0")
    assert ps is not None
    svg = svg_plot(ps, "s", ONSET, "t", SIG, "milvus-0")
    observed = re.search(r'<path class="observed" d="([^"]*)"', svg)
    assert observed is not None and observed.group(1).count("M") == 2


def test_ticks() -> None:
    assert nice_ticks(0, 4.1) == [0, 1, 2, 3, 4, 5]
    assert nice_ticks(0.6, 0.95) == [0.6, 0.7, 0.8, 0.9, 1.0]
    assert nice_ticks(5, 5)[0] < 5 < nice_ticks(5, 5)[-1]
    gib = value_ticks(50 * 2**30, 80 * 2**30, "bytes")
    assert all(t % 2**30 == 0 for t in gib)
    t0 = datetime(2024, 5, 14, 1, 45, tzinfo=UTC).timestamp()
    ticks = time_ticks(t0, t0 + 3600)
    assert len(ticks) <= 7 and all(t % 600 == 0 for t in ticks)
    assert time_ticks(t0, t0 + 7 * 86400)[0] % 86400 == 0


def test_axes_in_human_units_and_utc() -> None:
    ps = plot_series(windows(), "dependency.cache_hit_ratio", "redis-0")
    assert ps is not None
    svg = svg_plot(ps, "ratio", ONSET - 180, "label", "x", "y")
    assert re.findall(r'class="xtick"[^>]*>(\d\d:\d\d)<', svg)[:2] == ["01:50", "02:00"]
    assert ">60%<" in svg and ">100%<" in svg
    assert "onset 02:14" in svg
