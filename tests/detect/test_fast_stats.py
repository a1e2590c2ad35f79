"""The sort-sharing median/MAD path is bit-identical to the sorting one (nanmedian, nanmad)."""

from __future__ import annotations

import numpy as np
import pytest

from infersight.detect._stats import (
    FloatArray,
    diff_noise,
    median_mad_sorted,
    nanmad,
    nanmedian,
    sorted_quantile,
    sustained,
    valid_count,
)


def _cases(dtype: type) -> list[FloatArray]:
    rng = np.random.default_rng(11)
    out: list[FloatArray] = []
    for p in (1, 2, 3, 4, 5, 8, 17, 72, 240):
        a = rng.standard_normal((300, p))
        a[rng.random(a.shape) < 0.2] = np.nan
        a[:20] = np.nan  # all-NaN rows
        out.append(a)
        ties = np.round(rng.standard_normal((300, p)) * 2) / 2  # many duplicates
        ties[rng.random(ties.shape) < 0.1] = np.nan
        out.append(ties)
        flat = np.full((50, p), 3.0)
        flat[rng.random(flat.shape) < 0.3] = np.nan
        out.append(flat)
        wide = 10.0 ** rng.uniform(-9, 12, (200, p)) * rng.choice([-1.0, 1.0], (200, p))
        out.append(wide)
        rounding = 1.0 + rng.integers(0, 4, (200, p)) * np.finfo(np.float64).eps
        out.append(rounding)
    return [a.astype(dtype) for a in out]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_median_mad_sorted_matches_sorting_path(dtype: type) -> None:
    for a in _cases(dtype):
        want_med = nanmedian(a)
        want_mad = nanmad(a, want_med)
        s = np.sort(a, axis=-1)
        med, mad = median_mad_sorted(s, valid_count(s))
        np.testing.assert_array_equal(med, want_med)
        np.testing.assert_array_equal(mad, want_mad)
        assert med.dtype == want_med.dtype and mad.dtype == want_mad.dtype


def test_infinities_fall_back_to_the_sorting_path() -> None:
    a = np.array([[1.0, np.inf, 2.0, np.nan], [np.inf, np.inf, 1.0, 0.0], [-np.inf, 1, 2, 3]])
    s = np.sort(a, axis=-1)
    with np.errstate(invalid="ignore"):  # inf - inf, as on the sorting path
        med, mad = median_mad_sorted(s, valid_count(s))
        np.testing.assert_array_equal(med, nanmedian(a))
        np.testing.assert_array_equal(mad, nanmad(a, nanmedian(a)))


def test_sorted_quantile_and_diff_noise_match_reference() -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((100, 60)).cumsum(axis=1)
    a[rng.random(a.shape) < 0.1] = np.nan
    s = np.sort(a, axis=-1)
    for q in (0.0, 0.25, 0.5, 0.9, 1.0):
        got = sorted_quantile(s, valid_count(s), q)
        k = np.count_nonzero(~np.isnan(a), axis=1)
        for r in range(a.shape[0]):
            row = s[r, : k[r]]
            if k[r]:
                pos = q * (k[r] - 1)
                lo = int(np.floor(pos))
                hi = min(lo + 1, k[r] - 1)
                assert got[r] == row[lo] + (row[hi] - row[lo]) * (pos - lo)
    d = np.diff(a, axis=-1)
    ref = 1.4826 * nanmedian(np.abs(d - nanmedian(d)[:, None])) / np.sqrt(2.0)
    np.testing.assert_array_equal(diff_noise(a), ref)


def test_sorted_mad_small_rows_many_seeds() -> None:
    """Rows of 1–6 values, where the closest window often sits at a row's end."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        for p in range(1, 7):
            a = rng.standard_normal((500, p))
            a[rng.random(a.shape) < 0.15] = np.nan
            for arr in (a, a.astype(np.float32)):
                s = np.sort(arr, axis=-1)
                _, mad = median_mad_sorted(s, valid_count(s))
                np.testing.assert_array_equal(mad, nanmad(arr, nanmedian(arr)))


def test_sustained_matches_its_definition() -> None:
    rng = np.random.default_rng(2)
    flags = rng.random((200, 70)) < 0.4
    for min_points, window in ((1, 1), (4, 5), (3, 3), (45, 60), (5, 2), (80, 80)):
        got = sustained(flags, min_points, window)
        n = flags.shape[1]
        w = min(max(window, min_points), n)
        want = np.zeros_like(flags)
        if n >= min_points:
            for j in range(n - w + 1):
                ok = flags[:, j : j + w].sum(axis=1) >= min_points
                want[:, j : j + w] |= ok[:, None]
            want &= flags
        np.testing.assert_array_equal(got, want)
