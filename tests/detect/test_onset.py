"""Onset: the first point of a sustained change, ± an honest uncertainty."""

from __future__ import annotations

import numpy as np
import pytest

from infersight.detect._stats import sustained
from infersight.detect.onset import change_point, estimate


def _z(n: int, at: int, shift: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n)
    z[at:] += shift
    return z


@pytest.mark.parametrize("at", [10, 57, 120, 200])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_change_point_finds_step(at: int, seed: int) -> None:
    cp = change_point(_z(240, at, 6.0, seed), clip=3.0)
    assert cp is not None and abs(cp - at) <= 2


def test_change_point_ignores_one_wild_point() -> None:
    z = _z(100, 60, 5.0)
    z[20] = -1e6  # counter reset
    cp = change_point(z, clip=3.0)
    assert cp is not None and abs(cp - 60) <= 2


def test_change_point_needs_data() -> None:
    assert change_point(np.array([np.nan, 1.0, 2.0]), clip=3.0) is None


@pytest.mark.parametrize("at", [30, 100, 180])
def test_estimate_onset_within_tolerance(at: int) -> None:
    z = _z(240, at, 8.0, seed=at)
    flags = z >= 4
    on = estimate(z, sustained(flags, 4, 5), z, z_threshold=4, search=30, clip=3, max_back=5)
    assert on is not None
    assert abs(on.index - at) <= 2
    assert 1 <= on.uncertainty_points <= 4
    assert on.uncertainty_s(15.0) == 15.0 * on.uncertainty_points


def test_gap_before_onset_widens_uncertainty() -> None:
    z = _z(240, 100, 8.0)
    x = z.copy()
    z[80:100] = np.nan
    x[80:100] = np.nan
    on = estimate(z, sustained(z >= 4, 4, 5), x, z_threshold=4, search=30, clip=3, max_back=5)
    assert on is not None and on.index == 100
    assert on.uncertainty_points >= 20  # the change could be anywhere in the gap


def test_nothing_sustained_no_onset() -> None:
    z = np.zeros(50)
    z[10] = 50
    assert (
        estimate(z, sustained(z >= 4, 4, 5), z, z_threshold=4, search=30, clip=3, max_back=5)
        is None
    )
