"""Absence is evidence: stopped series and down targets are findings, not gaps."""

from __future__ import annotations

import numpy as np
from synth import START, STEP, FloatArray, Gen, noisy, windows

from infersight.detect import detect

P99 = "service.e2e_latency_p99"
UP = "infra.target_up"


def stops(base: Gen, at: int, who: set[int]) -> Gen:
    def gen(t: FloatArray, i: int) -> FloatArray:
        v = base(t, i).copy()
        if i in who:
            v[at:] = np.nan
        return v

    return gen


def _absent(r: object) -> list[object]:
    return [a for a in r.anomalies if a.kind == "absent"]  # type: ignore[attr-defined]


def test_series_that_stops_while_peers_continue() -> None:
    r = detect(windows({P99: noisy(0.2)}, instances=5, incident={P99: stops(noisy(0.2), 150, {1})}))
    (a,) = _absent(r)
    assert (a.signal, a.instance, a.direction) == (P99, "node-1", "down")  # type: ignore[attr-defined]
    assert a.onset == START + 150 * STEP and a.observed is None  # type: ignore[attr-defined]
    assert a.onset_uncertainty_s >= STEP  # type: ignore[attr-defined]
    assert r.scope.instances == "one"


def test_all_series_ending_together_is_end_of_data() -> None:
    w = windows(
        {P99: noisy(0.2), "service.queue_length": noisy(3.0)},
        instances=4,
        incident={
            P99: stops(noisy(0.2), 200, {0, 1, 2, 3}),
            "service.queue_length": stops(noisy(3.0), 200, {0, 1, 2, 3}),
        },
    )
    assert _absent(detect(w)) == []


def test_single_instance_stop_seen_through_its_other_signals() -> None:
    w = windows(
        {P99: noisy(0.2), "infra.gpu_temp_c": noisy(60.0, 0.01)},
        instances=1,
        incident={P99: stops(noisy(0.2), 120, {0})},
    )
    (a,) = _absent(detect(w))
    assert a.signal == P99  # type: ignore[attr-defined]


def test_target_up_dropping_to_zero() -> None:
    def down(t: FloatArray, i: int) -> FloatArray:
        v = np.ones(t.size)
        if i == 2:
            v[100:] = 0.0
        return v

    r = detect(windows({UP: lambda t, i: np.ones(t.size)}, incident={UP: down}))
    (a,) = _absent(r)
    assert (a.signal, a.instance) == (UP, "node-2")  # type: ignore[attr-defined]
    assert a.onset == START + 100 * STEP and not a.weak  # type: ignore[attr-defined]

    # one scrape failure is not an outage
    def blip(t: FloatArray, i: int) -> FloatArray:
        v = np.ones(t.size)
        v[50] = 0.0
        return v

    assert _absent(detect(windows({UP: blip}))) == []


def test_target_down_all_along_is_a_standing_condition() -> None:
    zero: Gen = lambda t, i: np.zeros(t.size) if i == 0 else np.ones(t.size)  # noqa: E731
    assert _absent(detect(windows({UP: zero}))) == []


def test_series_in_baseline_gone_from_incident() -> None:
    w = windows({P99: noisy(0.2)}, instances=4, incident={P99: stops(noisy(0.2), 0, {3})})
    (a,) = _absent(detect(w))
    assert a.instance == "node-3" and a.baselines == ("baseline-1h",)  # type: ignore[attr-defined]
    assert a.onset == START and not a.weak  # type: ignore[attr-defined]
