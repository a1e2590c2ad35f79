"""The open-loop sweep against real uvicorn services: the stand-in whose knee is known by
construction, and the serving example. Repeatable: two runs' knees within one step."""

from __future__ import annotations

import pytest
from capacity_standin import create_app, serve

from infersight.capacity import DEFAULT_CONFIG, advise
from infersight.capacity.sweep import SweepError, sweep
from infersight.capacity.targets import Target

pytestmark = [pytest.mark.slow, pytest.mark.server]

QUICK = DEFAULT_CONFIG.model_copy(update={"step_seconds": 1.5, "warmup_seconds": 0.3})
BATCHES = [1, 2, 4, 8, 16, 32, 64]


def _step_of(levels: list[int], x: float | None) -> int:
    assert x is not None
    return levels.index(int(x))


def test_batch_sweep_finds_the_built_in_knee_twice() -> None:
    with serve(create_app(base=0.05, knee=16, slots=4)) as url:
        target = Target(url + "/v1/embeddings", "openai")
        knees = []
        for _ in range(2):
            curve, logs = sweep(target, "batch", BATCHES, 1, QUICK)
            advice = advise(curve, QUICK)
            assert advice.knee.found, (curve.ys, advice.knee.reason)
            knees.append(_step_of(BATCHES, advice.knee.x))
            assert all(log.ok > 0 and log.failed == 0 for log in logs)
    # the device saturates at 16 items a batch: the knee is there or one step off
    assert all(abs(k - BATCHES.index(16)) <= 1 for k in knees), knees
    assert abs(knees[0] - knees[1]) <= 1, knees
    # throughput grew before the knee and not after it
    ys = curve.ys
    assert ys[BATCHES.index(16)] > 4 * ys[BATCHES.index(2)]
    assert ys[-1] < 1.3 * ys[BATCHES.index(16)]


def test_concurrency_sweep_finds_the_pool_size() -> None:
    levels = [1, 2, 4, 8, 16, 32]
    with serve(create_app(base=0.05, knee=16, slots=8)) as url:
        curve, logs = sweep(Target(url + "/infer?text=a", "get"), "concurrency", levels, 1, QUICK)
    advice = advise(curve, QUICK)
    assert abs(_step_of(levels, advice.knee.x) - levels.index(8)) <= 1, curve.ys
    assert advice.setting is not None and advice.setting <= 8
    # past the pool the offered load outruns it: the queue shows in the tail latency
    p99_low, p99_high = curve.points[1].p("p99"), curve.points[-1].p("p99")
    assert p99_low is not None and p99_high is not None and p99_high > 3 * p99_low
    # the generator kept its schedule where the machine can send that fast: below the pool
    # size its median lag is far under one request's time measured in the same run. (At 32 the
    # schedule asks ~480 requests/s, which a loaded 2-core machine cannot send from Python: the
    # lag is then reported, as the CLI's "send lag p99" column does, not hidden.)
    one_request = curve.points[0].p("p50")
    assert one_request is not None
    for log in logs[: levels.index(4) + 1]:
        lags = sorted(log.lags)
        assert lags[len(lags) // 2] < one_request / 10, (log.level, lags)
    assert all(log.to_dict()["lag_p99_s"] is not None for log in logs)


def test_serving_example_is_swept_through_its_admission_control() -> None:
    from examples.fastapi_service.service import Settings
    from examples.fastapi_service.service import create_app as example_app
    from prometheus_client import CollectorRegistry

    settings = Settings(model_base=0.03, max_batch_size=4, max_queue=8, dependency_delay=0.0)
    levels = [1, 2, 4, 8, 16, 32]
    with serve(example_app(settings, CollectorRegistry())) as url:
        curve, _logs = sweep(Target(url + "/infer?text=a", "get"), "concurrency", levels, 1, QUICK)
    # the batcher caps a batch at 4 and refuses (503) what it cannot serve in time: the
    # throughput flattens, the refusals are counted as errors, never as throughput
    assert curve.points[-1].errors and curve.points[-1].errors > 0
    assert curve.ys[-1] < 1.5 * max(curve.ys[:-1])
    assert advise(curve, QUICK).knee.found, curve.ys


def test_an_endpoint_that_only_fails_is_one_error() -> None:
    with (
        serve(create_app(base=0.01, knee=4, slots=1)) as url,
        pytest.raises(SweepError, match="every probe"),
    ):
        sweep(Target(url + "/missing", "get"), "concurrency", [1, 2, 4], 1, QUICK)
