"""The window itself as grounds for an all-clear (grounds.py rules 4 and 5): a fleet that went
silent, a failing share no baseline makes healthy, a latency that moved within the window."""

from __future__ import annotations

import numpy as np

from infersight.coverage import assess, unclear
from infersight.diagnose import diagnose
from infersight.diagnose.result import Diagnosis, HypothesisResult
from infersight.frame import MetricFrame
from infersight.grounds import (
    GroundsConfig,
    changed_within,
    why_no_anomaly_is_not_clear,
    window_doubts,
)

START, STEP, N = 1_750_000_000.0, 60.0, 60
P99, ERR, GPU = "service.e2e_latency_p99", "service.error_ratio", "inference.gpu_util"
FACING = (P99, ERR)


def _frame(p99: np.ndarray | None = None, err: float = 0.001, gpu: float = 0.5) -> MetricFrame:
    rng = np.random.default_rng(0)
    lat = 0.3 * (1 + 0.05 * rng.standard_normal((2, N))) if p99 is None else p99
    return (
        MetricFrame(START, STEP, N)
        .with_series(P99, ["n0", "n1"], lat)
        .with_series(ERR, ["n0", "n1"], np.full((2, N), err))
        .with_series(GPU, ["n0", "n1"], np.full((2, N), gpu))
    )


def test_a_steady_window_has_no_doubt() -> None:
    assert window_doubts(_frame(), None, FACING) == ()


def test_a_fleet_that_went_silent_before_the_end_is_no_all_clear() -> None:
    for gap in (np.nan,):  # series that stop, or turn to NaN, read alike in a frame
        f = _frame()
        for name in (P99, ERR, GPU):
            f.series[name].values[:, N - 20 :] = gap
        (doubt,) = window_doubts(f, None, FACING)
        assert "no reading in the window's last 5 min" in doubt and P99 in doubt
    # one replica gone is a finding for detection, not a silent window
    f = _frame()
    f.series[P99].values[0, N - 20 :] = np.nan
    assert window_doubts(f, None, FACING) == ()
    # diagnosed at the last minute with data, the window reads to its end
    f = _frame()
    f.series[P99].values[:, N - 20 :] = np.nan
    f.series[ERR].values[:, N - 20 :] = np.nan
    assert window_doubts(f, START + (N - 21) * STEP, FACING) == ()


def test_a_failing_share_is_never_healthy_whatever_the_baselines_hold() -> None:
    (doubt,) = window_doubts(_frame(err=0.6), None, FACING)
    assert ERR in doubt and "60%" in doubt
    below = GroundsConfig().clear_max_error_ratio * 0.9
    assert window_doubts(_frame(err=below), None, FACING) == ()


def test_a_latency_that_moved_within_the_window_is_no_all_clear() -> None:
    lat = np.full((2, N), 0.3)
    lat[:, N // 2 :] = 9.0  # 30x halfway through: baselines holding the same hide it
    (doubt,) = window_doubts(_frame(lat), None, FACING)
    assert P99 in doubt and "30×" in doubt
    lat[:, N // 2 :] = 0.3 * 2.5  # under the shift: a busier hour, not an incident by itself
    assert window_doubts(_frame(lat), None, FACING) == ()


def test_the_doubts_bind_the_all_clear_of_diagnose_and_detect() -> None:
    windows = {"incident": _frame(err=0.6), "baseline-1h": _frame(err=0.6)}
    cov = assess(windows)
    assert cov.references and cov.doubts
    healthy = Diagnosis(
        start=START,
        end=START + N * STEP,
        step=STEP,
        healthy=True,
        summary="Nothing is wrong",
        scope={},
        hypotheses=(HypothesisResult("errors_high", "Errors", "service", "refuted", 0.9, "2.2"),),
    )
    assert ERR in unclear(healthy, cov)
    assert ERR in why_no_anomaly_is_not_clear(cov.points, cov.references, cov.span_s, cov.doubts)


def _stepped() -> MetricFrame:
    rng = np.random.default_rng(1)
    queue = 1.0 + 0.1 * rng.standard_normal((2, N))
    queue[:, N // 2 :] += 40.0  # a queue that built up halfway through the window
    return _frame().with_series("service.queue_length", ["n0", "n1"], queue)


def test_a_change_within_the_window_contradicts_an_all_clear() -> None:
    assert changed_within(_frame(), None, 8.0) == ""
    doubt = changed_within(_stepped(), None, 8.0)
    assert "service.queue_length" in doubt and "first minutes" in doubt


def test_baselines_that_hold_the_incident_itself_give_no_all_clear() -> None:
    # the baseline is the incident again, an hour earlier: against it nothing changed
    inc = _stepped()
    base = MetricFrame(START - 3600, STEP, N)
    for name, s in inc.series.items():
        base = base.with_series(name, list(s.instances), s.values.copy())
    dx = diagnose({"incident": inc, "baseline-1h": base})
    assert not dx.healthy and not dx.judged, dx.summary
    assert "service.queue_length" in dx.summary
    # the same window with a baseline from before it is judged
    calm = MetricFrame(START - 3600, STEP, N)
    for name, s in _frame().series.items():
        calm = calm.with_series(name, list(s.instances), s.values.copy())
    calm = calm.with_series("service.queue_length", ["n0", "n1"], np.ones((2, N)))
    assert diagnose({"incident": inc, "baseline-1h": calm}).judged
