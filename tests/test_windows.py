import numpy as np
import pytest

from infersight.frame import MetricFrame, SignalSeries
from infersight.windows import baseline_name, cut_windows


def _day_frame(hours: float) -> MetricFrame:
    n = int(hours * 3600 / 60) + 1
    vals = np.arange(n, dtype=float)[None, :]
    return MetricFrame(0.0, 60.0, n, {"service.queue_length": SignalSeries(("a",), vals)})


def test_baselines_that_fit_are_cut_point_aligned() -> None:
    f = _day_frame(26)
    end = 25 * 3600.0
    w = cut_windows(f, end, 3600.0)
    assert set(w) == {"incident", "baseline-1h", "baseline-1d"}  # a week is not in 26 h
    inc, day = w["incident"], w["baseline-1d"]
    assert inc.n == day.n == 61
    a, b = inc.get("service.queue_length"), day.get("service.queue_length")
    assert a is not None and b is not None
    np.testing.assert_array_equal(a.values - b.values, 24 * 60)


def test_window_outside_the_data_is_refused() -> None:
    with pytest.raises(ValueError, match="not inside"):
        cut_windows(_day_frame(2), 4 * 3600.0, 3600.0)


def test_names() -> None:
    assert baseline_name(3600) == "baseline-1h"
    assert baseline_name(604800) == "baseline-7d"
