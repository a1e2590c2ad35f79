"""Scope triage (seed §2.3 step 1): all/part, continuous/intermittent, one/cluster."""

from __future__ import annotations

import numpy as np
from synth import FloatArray, Gen, noisy, windows, with_step

from infersight.detect import detect

P99 = "service.e2e_latency_p99"
P50 = "service.e2e_latency_p50"
ERR = "service.error_ratio"
BASE: dict[str, Gen] = {P99: noisy(0.4), P50: noisy(0.1), ERR: noisy(0.002, 0.2)}


def test_healthy_is_none() -> None:
    s = detect(windows(BASE, instances=6)).scope
    assert (s.requests, s.timing, s.instances) == ("none", "none", "none")
    assert s.total_instances == 6 and len(s.signals) == 3


def test_all_requests_cluster_continuous() -> None:
    inc = {P99: with_step(noisy(0.4), 100, 2.0), P50: with_step(noisy(0.1), 100, 2.5)}
    s = detect(windows(BASE, instances=6, incident=inc)).scope
    assert (s.requests, s.timing, s.instances) == ("all", "continuous", "cluster")
    assert "6 of 6" in s.instances_why and "P50" not in s.requests_why
    assert "e2e_latency_p50 up on 6 of 6" in s.requests_why
    assert "100%" in s.timing_why


def test_tail_only_is_part() -> None:
    inc = {P99: with_step(noisy(0.4), 100, 2.0)}
    s = detect(windows(BASE, instances=6, incident=inc)).scope
    assert (s.requests, s.instances) == ("part", "cluster")
    assert "P50 flat" in s.requests_why


def test_small_error_ratio_is_part_large_is_all() -> None:
    def err(level: float) -> Gen:
        def gen(t: FloatArray, i: int) -> FloatArray:
            v = noisy(0.002, 0.2)(t, i).copy()
            v[100:] = level
            return v

        return gen

    s = detect(windows(BASE, instances=6, incident={ERR: err(0.05)})).scope
    assert s.requests == "part" and "5.0%" in s.requests_why
    s = detect(windows(BASE, instances=6, incident={ERR: err(0.9)})).scope
    assert s.requests == "all" and "90%" in s.requests_why


def test_one_instance() -> None:
    inc = {
        P99: with_step(noisy(0.4), 100, 2.0, only={4}),
        P50: with_step(noisy(0.1), 100, 2.0, only={4}),
    }
    s = detect(windows(BASE, instances=8, incident=inc)).scope
    assert (s.instances, s.anomalous_instances, s.requests) == ("one", ("node-4",), "part")
    assert "1 of 8" in s.instances_why


def test_some_instances() -> None:
    inc = {
        P99: with_step(noisy(0.4), 100, 2.0, only={1, 2}),
        P50: with_step(noisy(0.1), 100, 2.0, only={1, 2}),
    }
    s = detect(windows(BASE, instances=8, incident=inc)).scope
    assert s.instances == "some" and s.anomalous_instances == ("node-1", "node-2")


def test_intermittent_bursts() -> None:
    def bursts(t: FloatArray, i: int) -> FloatArray:
        v = noisy(0.4)(t, i).copy()
        for s in range(60, 240, 40):
            v[s : s + 10] *= 3
        return v

    s = detect(windows(BASE, instances=6, incident={P99: bursts})).scope
    assert s.timing == "intermittent"
    sig = next(x for x in s.signals if x.signal == P99)
    assert sig.bursts >= 3 and sig.fraction is not None and sig.fraction < 0.5


def test_no_user_facing_signals_is_unknown() -> None:
    s = detect(windows({"infra.gpu_temp_c": noisy(60.0)})).scope
    assert (s.requests, s.timing, s.instances) == ("unknown", "unknown", "unknown")
    assert "no user-facing" in s.requests_why


def test_cluster_p99_without_p50_is_unknown() -> None:
    base = {P99: noisy(0.4)}
    s = detect(windows(base, instances=6, incident={P99: with_step(noisy(0.4), 50, 2.0)})).scope
    assert s.instances == "cluster" and s.requests == "unknown"
    assert np.isfinite(s.signals[0].share)
