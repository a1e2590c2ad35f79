import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from infersight.frame import MetricFrame, SignalSeries, align_samples, grid


def _frame() -> MetricFrame:
    vals = np.arange(20, dtype=float).reshape(2, 10)
    vals[1, 3] = np.nan
    return MetricFrame(1000.0, 15.0, 10, {"service.queue_length": SignalSeries(("a", "b"), vals)})


def test_grid_and_times() -> None:
    start, n = grid(0.0, 3600.0, 15.0)
    assert (start, n) == (0.0, 241)
    f = _frame()
    assert f.times[-1] == f.end == 1000.0 + 9 * 15.0
    assert f.index_of(1031.0) == 2
    with pytest.raises(ValueError):
        grid(10.0, 0.0, 15.0)


def test_slice_and_select() -> None:
    f = _frame()
    s = f.slice_time(1015.0, 1045.0)
    assert s.n == 3 and s.start == 1015.0
    row = s.get("service.queue_length")
    assert row is not None
    assert list(row.values[0]) == [1.0, 2.0, 3.0]
    only_b = f.select(instances=["b"])
    got = only_b.get("service.queue_length")
    assert got is not None and got.instances == ("b",)
    assert f.select(signals=["inference.gpu_util"]).signals == []


def test_long_round_trip_keeps_gaps() -> None:
    f = _frame()
    ts, sig, inst, val = f.to_long()
    assert len(ts) == f.points() == 19
    back = MetricFrame.from_long(ts, sig, inst, val, f.start, f.step, f.n)
    a, b = f.get("service.queue_length"), back.get("service.queue_length")
    assert a is not None and b is not None
    np.testing.assert_array_equal(a.values, b.values)


def test_from_long_refuses_points_off_the_grid() -> None:
    with pytest.raises(ValueError, match="outside"):
        MetricFrame.from_long([1000.0, 9999.0], ["s", "s"], ["a", "a"], [1, 2], 1000.0, 15.0, 10)


def test_merge_needs_same_grid() -> None:
    f = _frame()
    g = MetricFrame(0.0, 15.0, 10, {})
    with pytest.raises(ValueError, match="different grids"):
        f.merge(g)


def test_series_shape_checked() -> None:
    with pytest.raises(ValueError):
        SignalSeries(("a",), np.zeros((2, 3)))
    with pytest.raises(ValueError):
        SignalSeries(("a", "a"), np.zeros((2, 3)))


def test_align_differently_sampled_series() -> None:
    # one series every 10 s, one every 60 s: both land on a 15 s grid
    fast = align_samples(np.arange(0, 300, 10.0), np.arange(30.0), 0.0, 15.0, 20)
    slow = align_samples(np.arange(0, 300, 60.0), np.arange(5.0), 0.0, 15.0, 20)
    assert fast[1] == 1.0  # t=15 → sample at t=10
    assert slow[4] == 1.0  # t=60 → sample at t=60
    assert slow[5] == 1.0  # t=75 → still the t=60 sample
    # beyond the lookback the value is missing, not carried forever
    stale = align_samples([0.0], [7.0], 0.0, 60.0, 10, lookback=300.0)
    assert stale[5] == 7.0 and np.isnan(stale[6])


@given(st.lists(st.floats(0, 1000, allow_nan=False), min_size=1, max_size=50, unique=True))
def test_align_never_uses_future_samples(times: list[float]) -> None:
    t = np.sort(np.asarray(times))
    v = t.copy()  # value = its own timestamp
    out = align_samples(t, v, 0.0, 7.0, 150)
    g = 7.0 * np.arange(150)
    ok = ~np.isnan(out)
    assert np.all(out[ok] <= g[ok] + 1e-6)
    assert np.all(g[ok] - out[ok] <= 300.0 + 1e-6)
