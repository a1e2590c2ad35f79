"""Theil–Sen over per-row spans: each row gets exactly what fitting its span alone gives."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from infersight.detect.trend_fit import TrendFit, monotone_fit, theil_sen_spans


def theil_sen(t: np.ndarray, y: np.ndarray, m: int) -> TrendFit:
    """Every row over all its columns: the fit of a span on its own."""
    rows, n = y.shape
    return theil_sen_spans(t, y, np.zeros(rows, np.int64), np.full(rows, n, np.int64), m)


def _rows(seed: int, rows: int, width: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = rng.normal(0, 1, (rows, width)) + np.outer(rng.uniform(-0.5, 0.5, rows), np.arange(width))
    y[rng.random(y.shape) < 0.2] = np.nan
    y[0, : width // 3] = np.nan  # a row whose span starts in a gap
    return y


def _row(fit: TrendFit, r: int) -> list[float]:
    return [float(getattr(fit, f.name)[r]) for f in dataclasses.fields(fit)]


@pytest.mark.parametrize("same_start", [False, True])  # gathered, or cut by chunk size
@pytest.mark.parametrize(("seed", "width", "m"), [(0, 240, 48), (1, 700, 48), (2, 90, 8)])
def test_each_span_is_fitted_as_if_alone(seed: int, width: int, m: int, same_start: bool) -> None:
    rng = np.random.default_rng(seed + 100)
    y = _rows(seed, 12, width)
    t = 1_750_000_000.0 + 15.0 * np.arange(width)
    start = np.full(12, 7) if same_start else rng.integers(0, width // 2, 12)
    end = np.minimum(width, start + rng.integers(3, width, 12))
    together = theil_sen_spans(t, y, start, end, m)
    for r in range(12):
        s, e = start[r], end[r]
        alone = theil_sen(t[s:e], y[r : r + 1, s:e], m)
        np.testing.assert_array_equal(_row(together, r), _row(alone, 0))


def test_a_clean_line_is_recovered_over_its_span_only() -> None:
    t = np.arange(100) * 10.0
    y = np.vstack([2.0 + 0.5 * t, 7.0 - 0.1 * t])
    y[0, 60:] = 0.0  # past row 0's span: must not bend its line
    fit = theil_sen_spans(t, y, np.array([0, 20]), np.array([60, 100]), 48)
    np.testing.assert_allclose(fit.slope, [0.5, -0.1])
    np.testing.assert_allclose(fit.level_end, [2.0 + 0.5 * 590.0, 7.0 - 0.1 * 990.0])
    np.testing.assert_allclose(fit.span_s, [590.0, 790.0])
    np.testing.assert_allclose(fit.tau, [1.0, -1.0])


def test_only_monotone_rows_are_fitted_and_the_fits_are_the_full_ones() -> None:
    width = 240
    t = 15.0 * np.arange(width)
    rng = np.random.default_rng(3)
    y = rng.normal(0, 1, (6, width))
    y[:3] += 0.05 * np.arange(width)  # rows 0-2 climb; 3-5 are noise
    y[2] *= -1  # row 2 falls: not the direction asked for
    ends = np.full(6, width)
    full = theil_sen_spans(t, y, np.zeros(6, np.int64), ends, 48)
    kept = monotone_fit(t, y, np.zeros(6, np.int64), ends, 48, 1.0, 0.6, 4.0)
    for r in (0, 1):
        np.testing.assert_array_equal(_row(kept, r), _row(full, r))
    for r in (2, 3, 4, 5):
        assert np.isnan(kept.slope[r])
        assert kept.tau[r] == full.tau[r]
        assert kept.mk_z[r] == full.mk_z[r]
