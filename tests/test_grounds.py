"""The grounds an all-clear needs: which references a window's readings can be compared with, and
each rule's edge (grounds.py's docstring states the rule)."""

from __future__ import annotations

import numpy as np

from infersight.frame import MetricFrame
from infersight.grounds import references, why_no_anomaly_is_not_clear, why_not_clear

START, STEP, N = 1_750_000_000.0, 60.0, 30
SIG, OTHER = "service.queue_length", "inference.gpu_util"


def _frame(
    start: float = START,
    n: int = N,
    step: float = STEP,
    sig: str = SIG,
    instances: tuple[str, ...] = ("n0", "n1"),
    value: float = 3.0,
) -> MetricFrame:
    return MetricFrame(start, step, n).with_series(
        sig, list(instances), np.full((len(instances), n), value)
    )


def test_no_baseline_window_no_reference() -> None:
    assert references({"incident": _frame()}) == ()
    assert references({}) == ()


def test_a_baseline_reading_the_same_signal_and_instance_is_a_reference() -> None:
    windows = {"incident": _frame(), "baseline-1h": _frame(START - 3600, instances=("n1", "n9"))}
    assert references(windows) == ("baseline-1h",)


def test_a_baseline_that_reads_nothing_the_window_reads_is_none() -> None:
    """Another signal, other instances, only NaN, another step or no points: nothing to set a
    reading of the window against."""
    inc = _frame()
    for base in (
        _frame(START - 3600, sig=OTHER),
        _frame(START - 3600, instances=("n7",)),
        _frame(START - 3600, value=np.nan),
        _frame(START - 3600, step=30.0, n=2 * N),
        MetricFrame(START - 3600, STEP, 0),
    ):
        assert references({"incident": inc, "baseline-1h": base}) == (), base
    nan_window = {"incident": _frame(value=np.nan), "baseline-1h": _frame(START - 3600)}
    assert references(nan_window) == ()


def test_a_window_long_enough_holds_its_own_hour_before() -> None:
    long = _frame(n=90)  # an hour and a half at 60 s: the last half hour against the hour before
    assert references({"incident": long}) == ("self-1h",)
    # cut at a moment with no point an hour after another, it holds none
    assert references({"incident": long}, at=START + 50 * STEP) == ()
    assert references({"incident": long}, at=START + 75 * STEP) == ("self-1h",)
    # a given baseline-1h takes the place of the derived one
    both = {"incident": long, "baseline-1h": _frame(START - 3600, n=90)}
    assert references(both) == ("baseline-1h",)


def test_why_not_clear_names_each_rule_that_fails() -> None:
    assert why_not_clear(N, ("baseline-1h",), 1800.0, decided=3, undecided=38) == ""
    one = why_not_clear(1, ("baseline-1h",), 0.0, decided=3, undecided=38)
    assert "one time point" in one
    unchecked = why_not_clear(N, ("baseline-1h",), 1800.0, decided=0, undecided=41)
    assert "no failure mode could be checked (all 41" in unchecked and "baseline" not in unchecked
    bare = why_not_clear(N, (), 1800.0, decided=3, undecided=38)
    assert bare.startswith("no baseline to compare with") and "30 min window" in bare
    assert "--baselines 1h" in bare and "failure mode" not in bare
    both = why_not_clear(N, (), 1800.0, decided=0, undecided=41)
    assert "no failure mode could be checked" in both and "no baseline" in both


def test_detections_no_anomaly_takes_the_point_and_baseline_rules() -> None:
    assert why_no_anomaly_is_not_clear(N, ("self-1h",), 5400.0) == ""
    assert "one time point" in why_no_anomaly_is_not_clear(1, ("baseline-1h",), 0.0)
    assert "no baseline" in why_no_anomaly_is_not_clear(N, (), 1800.0)
