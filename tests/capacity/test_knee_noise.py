"""Noise does not move the knee by more than a step; a flat or rising curve has none."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from infersight.capacity import advise
from infersight.capacity.results import Point, Sweep

STEPS = [1, 2, 4, 8, 16, 32, 64, 128]


def _sweep(ys: list[float]) -> Sweep:
    return Sweep(
        "batch", tuple(Point(float(x), y) for x, y in zip(STEPS, ys, strict=True)), "plain"
    )


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([8, 16, 32]),
    st.lists(st.floats(min_value=-0.05, max_value=0.05), min_size=8, max_size=8),
)
def test_a_saturating_curve_with_5pct_noise_keeps_its_knee(knee: int, noise: list[float]) -> None:
    ys = [100.0 * min(x, knee) * (1 + e) for x, e in zip(STEPS, noise, strict=True)]
    advice = advise(_sweep(ys))
    assert advice.knee.x is not None, advice.knee.reason
    assert abs(STEPS.index(int(advice.knee.x)) - STEPS.index(knee)) <= 1
    assert advice.setting is not None and 1 <= advice.setting < advice.knee.x


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=-0.03, max_value=0.03), min_size=8, max_size=8))
def test_one_wild_step_does_not_make_a_knee(noise: list[float]) -> None:
    ys = [10.0 * x * (1 + e) for x, e in zip(STEPS, noise, strict=True)]
    ys[3] *= 3.0  # one step three times too high: smoothed away, the curve is still linear
    assert not advise(_sweep(ys)).knee.found


def test_flat_curve_has_no_knee() -> None:
    assert not advise(_sweep([50.0] * 8)).knee.found
