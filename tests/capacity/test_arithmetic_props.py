"""Properties of the arithmetic: units, monotonicity, rounding down, never 0."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infersight.capacity import max_batch_for, plan_pool

GIB = 2**30
knees = st.floats(min_value=1.0, max_value=4096.0, allow_nan=False)
margins = st.floats(min_value=0.0, max_value=0.9)


@given(knees, margins)
def test_max_batch_rounds_down_under_the_knee_never_0(knee: float, margin: float) -> None:
    v = max_batch_for(knee, margin)
    assert isinstance(v, int) and v >= 1
    assert v <= max(1, knee * (1 - margin) + 1e-6)
    assert v > knee * (1 - margin) - 1 - 1e-6 or v == 1  # down by less than one


@given(knees, knees, margins)
def test_max_batch_grows_with_the_knee(a: float, b: float, margin: float) -> None:
    lo, hi = sorted((a, b))
    assert max_batch_for(lo, margin) <= max_batch_for(hi, margin)


@given(knees, margins, margins)
def test_max_batch_shrinks_with_the_margin(knee: float, m1: float, m2: float) -> None:
    lo, hi = sorted((m1, m2))
    assert max_batch_for(knee, hi) <= max_batch_for(knee, lo)


def test_the_seeds_example() -> None:
    assert [max_batch_for(32, m) for m in (0.25, 0.2, 0.125)] == [24, 25, 28]
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            max_batch_for(bad, 0.2)


cards = st.floats(min_value=1.0, max_value=256.0)  # GiB
per_batch = st.floats(min_value=0.05, max_value=64.0)  # GiB
latency = st.floats(min_value=0.001, max_value=10.0)  # s
sizes = st.integers(min_value=1, max_value=512)


@given(cards, per_batch, latency, sizes)
def test_plan_never_0_and_consistent(card: float, m: float, lat: float, b: int) -> None:
    plan = plan_pool(card * GIB, m * GIB, lat, b)
    assert plan.batches >= 1 and plan.pool >= 1 and plan.queue >= 1
    assert plan.pool == plan.batches * b
    assert plan.requests_per_s == pytest.approx(plan.batches * b / lat)
    assert plan.queue <= plan.requests_per_s * plan.max_wait + 1  # rounded down (or 1)
    if plan.usable >= m * GIB:  # rounded down: N batches fit in V, N + 1 do not
        assert plan.batches * m * GIB <= plan.usable * (1 + 1e-9)
        assert (plan.batches + 1) * m * GIB > plan.usable * (1 - 1e-9)
        assert not plan.warnings
    else:
        assert plan.batches == 1 and plan.warnings


@given(cards, per_batch, latency, st.floats(min_value=1.0, max_value=1024.0))
def test_plan_does_not_depend_on_the_unit(card: float, m: float, lat: float, k: float) -> None:
    # bytes or GiB, seconds or milliseconds: the same counts
    a = plan_pool(card * GIB, m * GIB, lat, 4)
    b = plan_pool(card * GIB * k, m * GIB * k, lat, 4)
    assert a.batches == b.batches or abs(a.usable / (m * GIB) - round(a.usable / (m * GIB))) < 1e-6


@given(cards, cards, per_batch, latency)
def test_plan_grows_with_the_card(c1: float, c2: float, m: float, lat: float) -> None:
    lo, hi = sorted((c1, c2))
    a, b = plan_pool(lo * GIB, m * GIB, lat), plan_pool(hi * GIB, m * GIB, lat)
    assert a.batches <= b.batches and a.pool <= b.pool and a.queue <= b.queue


@given(cards, per_batch, per_batch, latency)
def test_plan_shrinks_with_the_batch_peak(card: float, m1: float, m2: float, lat: float) -> None:
    lo, hi = sorted((m1, m2))
    a, b = plan_pool(card * GIB, lo * GIB, lat), plan_pool(card * GIB, hi * GIB, lat)
    assert a.batches >= b.batches


@given(cards, per_batch, latency, latency)
def test_a_looser_target_allows_a_longer_wait(
    card: float, m: float, lat: float, extra: float
) -> None:
    a = plan_pool(card * GIB, m * GIB, lat, 8, lat + extra)
    b = plan_pool(card * GIB, m * GIB, lat, 8, lat + 2 * extra)
    assert a.max_wait == pytest.approx(extra) and a.max_wait <= b.max_wait and a.queue <= b.queue


def test_every_figure_names_its_arithmetic_and_seed() -> None:
    plan = plan_pool(80 * GIB, 6 * GIB, 0.120, 8, 0.5, reserved=16 * GIB)
    assert plan.batches == 8  # ⌊(80 × 0.8 − 16) / 6⌋ = ⌊8.0⌋
    assert plan.pool == 64 and plan.requests_per_s == pytest.approx(533.33, rel=1e-3)
    assert plan.max_wait == pytest.approx(0.38) and plan.queue == 202
    assert all(
        f.seed.startswith("§3.") and ("=" in f.arithmetic or "→" in f.arithmetic)
        for f in plan.figures
    )


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0, GIB, 0.1), "VRAM must be positive"),
        ((GIB, 0, 0.1), "per-batch peak must be positive"),
        ((GIB, GIB, 0), "batch latency must be positive"),
        ((GIB, GIB, 0.1, 1, 0.05), "target p99 50 ms is not above one batch's 100 ms"),
    ],
)
def test_impossible_inputs_are_refused(args: tuple[float, ...], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        plan_pool(*args)  # type: ignore[arg-type]
