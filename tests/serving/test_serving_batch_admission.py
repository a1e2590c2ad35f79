"""Admission in the batcher: one bounded queue. Refusals come before queueing when the predicted
wait is too long; no admitted request waits more than max_queue_wait for dispatch (so none takes
more than max_queue_wait + one batch); nothing is lost or duplicated. Timing claims are checked
on a virtual clock (`run_virtual`), where they are exact, not on the wall clock."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from infersight.serving import (
    AdaptiveBatcher,
    Batcher,
    FixedWindowBatcher,
    Overloaded,
    predict_wait,
    run_virtual,
)

EPS = 1e-9  # float rounding of virtual times


def test_predict_wait_counts_full_batches_ahead_and_the_running_one() -> None:
    kw = {"max_batch_size": 4, "batch_time": 0.1, "max_concurrency": 1}
    assert predict_wait(1, busy_remaining=[], **kw) == 0.0  # type: ignore[arg-type]
    assert predict_wait(4, busy_remaining=[], **kw) == 0.0  # type: ignore[arg-type]
    assert predict_wait(5, busy_remaining=[], **kw) == pytest.approx(0.1)  # type: ignore[arg-type]
    assert predict_wait(1, busy_remaining=[0.03], **kw) == pytest.approx(0.03)  # type: ignore[arg-type]
    assert predict_wait(9, busy_remaining=[0.03], **kw) == pytest.approx(0.23)  # type: ignore[arg-type]
    # two executors: batches alternate between them, in order of freeing
    two = {"max_batch_size": 4, "batch_time": 0.1, "max_concurrency": 2}
    assert predict_wait(1, busy_remaining=[0.05], **two) == 0.0  # type: ignore[arg-type]
    assert predict_wait(5, busy_remaining=[0.05], **two) == pytest.approx(0.05)  # type: ignore[arg-type]
    assert predict_wait(9, busy_remaining=[0.05], **two) == pytest.approx(0.1)  # type: ignore[arg-type]
    assert predict_wait(13, busy_remaining=[0.05, 0.02], **two) == pytest.approx(0.15)  # type: ignore[arg-type]
    # unknown batch time: only an idle executor's next batch can be promised
    unknown = {"max_batch_size": 4, "batch_time": None, "max_concurrency": 1}
    assert predict_wait(2, busy_remaining=[], **unknown) == 0.0  # type: ignore[arg-type]
    assert predict_wait(5, busy_remaining=[], **unknown) is None  # type: ignore[arg-type]


def test_virtual_clock_advances_exactly_and_instantly() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(3600)
        await asyncio.gather(*(asyncio.sleep(0.001 * i) for i in range(10)))
        return loop.time() - start

    assert run_virtual(main()) == pytest.approx(3600.009)


def _model(base: float, per_item: float, seen: list[list[int]]):  # type: ignore[no-untyped-def]
    async def fn(items: list[int]) -> list[int]:
        seen.append(list(items))
        await asyncio.sleep(base + per_item * len(items))
        return [i * 10 for i in items]

    return fn


def test_rejects_before_enqueue_when_the_predicted_wait_exceeds_max_queue_wait() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        seen: list[list[int]] = []
        registry = CollectorRegistry()
        b = FixedWindowBatcher(
            _model(0.1, 0.0, seen),
            max_batch_size=2,
            max_queue_delay=0.0,
            max_queue_wait=0.25,
            registry=registry,
        )
        assert await asyncio.gather(b.submit(0), b.submit(1)) == [0, 10]  # learns: 0.1 s/batch
        assert b.batch_time == pytest.approx(0.1)
        running = [asyncio.create_task(b.submit(i)) for i in (2, 3)]
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert b.in_flight == 1 and b.pending == 0
        # queue positions 1-2 wait 0.1 s (the running batch), 3-4 0.2 s, 5 would wait 0.3 s
        queued = [asyncio.create_task(b.submit(i)) for i in (4, 5, 6, 7)]
        await asyncio.sleep(0)
        assert b.pending == 4
        start = loop.time()
        with pytest.raises(Overloaded) as info:
            await b.submit(8)
        assert loop.time() == start, "refused without waiting"
        assert info.value.reason == "wait_exceeded"
        assert info.value.retry_after == pytest.approx(0.3)
        assert b.pending == 4, "the refused request was never queued"
        assert await asyncio.gather(*running, *queued) == [20, 30, 40, 50, 60, 70]
        await b.close()
        assert all(8 not in batch for batch in seen)
        assert b.rejected_on_arrival == 1 and b.rejected_late == 0
        sample = registry.get_sample_value(
            "infersight_rejections_total", {"name": "default", "reason": "wait_exceeded"}
        )
        assert sample == 1.0

    run_virtual(main())


def test_queue_full_is_refused_at_once() -> None:
    async def main() -> None:
        seen: list[list[int]] = []
        b = FixedWindowBatcher(
            _model(1.0, 0.0, seen), max_batch_size=1, max_queue_delay=0.0, max_queue=2
        )
        b = FixedWindowBatcher(
            _model(1.0, 0.0, seen),
            max_batch_size=1,
            max_queue_delay=0.0,
            max_queue=2,
            registry=CollectorRegistry(),
        )
        first = asyncio.create_task(b.submit(0))
        await asyncio.sleep(0)
        await asyncio.sleep(0)  # dispatched: executor busy for 1 s
        waiting = [asyncio.create_task(b.submit(i)) for i in (1, 2)]
        await asyncio.sleep(0)
        with pytest.raises(Overloaded) as info:
            await b.submit(3)
        assert info.value.reason == "queue_full"
        assert await asyncio.gather(first, *waiting) == [0, 10, 20]
        await b.close()
        assert seen == [[0], [1], [2]]

    run_virtual(main())


def test_safety_net_rejects_a_waiter_at_max_queue_wait_when_a_batch_overruns() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        durations = iter([0.01, 5.0, 0.01])
        seen: list[list[int]] = []

        async def fn(items: list[int]) -> list[int]:
            seen.append(list(items))
            await asyncio.sleep(next(durations))
            return items

        b = FixedWindowBatcher(
            fn,
            max_batch_size=1,
            max_queue_delay=0.0,
            max_queue_wait=0.5,
            registry=CollectorRegistry(),
        )
        assert await b.submit(0) == 0  # learns 0.01 s per batch
        slow = asyncio.create_task(b.submit(1))  # will overrun: 5 s
        await asyncio.sleep(0.001)
        start = loop.time()
        with pytest.raises(Overloaded) as info:
            await b.submit(2)  # predicted ~0.01 s: admitted, then stuck behind the slow batch
        assert info.value.reason == "wait_exceeded"
        assert loop.time() - start == pytest.approx(0.5)
        assert b.rejected_late == 1 and b.pending == 0
        assert await slow == 1
        await b.close()
        assert seen == [[0], [1]]

    run_virtual(main())


def test_draining_close_does_not_expire_waiters() -> None:
    async def main() -> None:
        seen: list[list[int]] = []
        b = FixedWindowBatcher(
            _model(0.3, 0.0, seen),
            max_batch_size=1,
            max_queue_delay=0.0,
            max_queue_wait=0.5,
            registry=CollectorRegistry(),
        )
        tasks = [asyncio.create_task(b.submit(i)) for i in range(3)]  # no batch time yet
        await asyncio.sleep(0)
        await b.close(drain=True)
        outs = await asyncio.gather(*tasks, return_exceptions=True)
        # close() ran before the first dispatch, so the third (dispatched at 0.6 s, past its
        # 0.5 s deadline, while the second batch runs) is run, not expired
        assert outs == [0, 10, 20]
        assert b.rejected_late == 0

    run_virtual(main())


def test_a_request_held_for_the_whole_window_is_not_refused() -> None:
    """max_queue_wait must exceed the window cap: with equality the fixed window refused every
    request it held for the whole window, on an idle executor."""

    async def fn(items: list[int]) -> list[int]:
        return items

    with pytest.raises(ValueError, match="must exceed max_queue_delay"):
        FixedWindowBatcher(fn, max_queue_delay=0.01, max_queue_wait=0.01, registry=reg())
    with pytest.raises(ValueError, match="must exceed max_wait"):
        AdaptiveBatcher(fn, max_wait=0.01, max_queue_wait=0.01, registry=reg())

    async def main() -> None:
        b = FixedWindowBatcher(
            fn, max_batch_size=4, max_queue_delay=0.01, max_queue_wait=0.02, registry=reg()
        )
        assert await b.submit(1) == 1
        assert b.rejected_late == 0
        await b.close()

    run_virtual(main())


def reg() -> CollectorRegistry:
    return CollectorRegistry()


@st.composite
def overloads(draw: st.DrawFn) -> dict[str, object]:
    max_batch = draw(st.integers(1, 16))
    base = draw(st.sampled_from([0.002, 0.005, 0.02]))
    per_item = draw(st.sampled_from([0.0, 0.0002, 0.001]))
    concurrency = draw(st.integers(1, 3))
    capacity = concurrency * max_batch / (base + per_item * max_batch)
    full = base + per_item * max_batch
    return {
        "kind": draw(st.sampled_from(["adaptive", "fixed"])),
        "max_batch": max_batch,
        "base": base,
        "per_item": per_item,
        "concurrency": concurrency,
        "rate": capacity * draw(st.sampled_from([0.3, 0.9, 1.5, 2.0, 4.0])),
        "window": full * draw(st.sampled_from([0.0, 0.25])),
        "max_queue_wait": full * draw(st.sampled_from([1.0, 2.5, 6.0])),
        "max_queue": draw(st.sampled_from([None, 8, 64])),
        "cancel_share": draw(st.sampled_from([0.0, 0.1])),
        "seed": draw(st.integers(0, 2**16)),
    }


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(overloads())
def test_admitted_requests_never_wait_more_than_max_wait_plus_one_batch(
    sc: dict[str, object],
) -> None:
    run_virtual(_overload(sc))


async def _overload(sc: dict[str, object]) -> None:
    loop = asyncio.get_running_loop()
    max_batch: int = sc["max_batch"]  # type: ignore[assignment]
    base: float = sc["base"]  # type: ignore[assignment]
    per_item: float = sc["per_item"]  # type: ignore[assignment]
    max_queue_wait: float = sc["max_queue_wait"]  # type: ignore[assignment]
    seen: list[list[int]] = []
    fn = _model(base, per_item, seen)
    common: dict[str, object] = {
        "max_batch_size": max_batch,
        "max_concurrency": sc["concurrency"],
        "max_queue": sc["max_queue"],
        "max_queue_wait": max_queue_wait,
        "registry": CollectorRegistry(),
    }
    b: Batcher[int, int]
    if sc["kind"] == "adaptive":
        b = AdaptiveBatcher(fn, max_wait=sc["window"], **common)  # type: ignore[arg-type]
    else:
        b = FixedWindowBatcher(fn, max_queue_delay=sc["window"], **common)  # type: ignore[arg-type]
    rng = random.Random(sc["seed"])  # type: ignore[arg-type]
    outcomes: dict[int, tuple[str, float, object]] = {}

    async def one(i: int) -> None:
        t0 = loop.time()
        try:
            out: object = await b.submit(i)
            kind = "ok"
        except Overloaded as exc:
            out, kind = exc, "rejected"
        except asyncio.CancelledError:
            outcomes[i] = ("cancelled", loop.time() - t0, None)
            raise
        outcomes[i] = (kind, loop.time() - t0, out)

    tasks = []
    for i in range(300):
        await asyncio.sleep(rng.expovariate(sc["rate"]))  # type: ignore[arg-type]
        tasks.append(asyncio.create_task(one(i)))
        if rng.random() < sc["cancel_share"] and tasks:  # type: ignore[operator]
            victim = rng.choice(tasks)
            loop.call_later(rng.uniform(0, max_queue_wait), victim.cancel)
    await asyncio.gather(*tasks, return_exceptions=True)
    await b.close()

    flat = [i for batch in seen for i in batch]
    assert len(flat) == len(set(flat)), "an item reached batch_fn twice"
    assert all(1 <= len(batch) <= max_batch for batch in seen)
    full = base + per_item * max_batch
    late = 0
    for i in range(300):
        kind, elapsed, out = outcomes[i]
        if kind == "ok":
            assert out == i * 10 and i in flat
            assert elapsed <= max_queue_wait + full + EPS, (i, elapsed)
        elif kind == "rejected":
            assert isinstance(out, Overloaded) and i not in flat
            if elapsed > 0:
                late += 1
                assert out.reason == "wait_exceeded"
                assert elapsed == pytest.approx(max_queue_wait) or elapsed < max_queue_wait + full
        else:
            assert kind == "cancelled"
    assert late == b.rejected_late
    rejected = sum(kind == "rejected" for kind, _, _ in outcomes.values())
    assert rejected == b.rejected_on_arrival + b.rejected_late
    assert b.pending == 0 and b.in_flight == 0


def test_under_steady_overload_every_rejection_is_predicted() -> None:
    """2× overload with a deterministic model: once a full batch has been timed the prediction
    is exact and the safety net idle (before that, it may fire for a few warm-up arrivals)."""

    async def main() -> tuple[int, list[float], float]:
        loop = asyncio.get_running_loop()
        seen: list[list[int]] = []
        b = AdaptiveBatcher(
            _model(0.005, 0.0005, seen),
            max_batch_size=32,
            max_wait=0.01,
            max_queue=1024,
            max_queue_wait=0.05,
            registry=CollectorRegistry(),
        )
        rng = random.Random(7)
        worst = 0.0
        late: list[float] = []

        async def one(i: int) -> None:
            nonlocal worst
            t0 = loop.time()
            try:
                await b.submit(i)
            except Overloaded:
                if loop.time() > t0:
                    late.append(t0)
                return
            worst = max(worst, loop.time() - t0)

        tasks = []
        for i in range(6000):
            await asyncio.sleep(rng.expovariate(2 * 32 / 0.021))
            tasks.append(asyncio.create_task(one(i)))
        await asyncio.gather(*tasks)
        await b.close()
        assert len(late) == b.rejected_late
        return b.rejected_on_arrival, late, worst

    on_arrival, late, worst = run_virtual(main())
    assert all(t0 < 0.1 for t0 in late), "late rejections only while warming up (first 0.1 s)"
    assert len(late) <= 5
    assert on_arrival > 0.4 * 6000
    assert worst <= 0.05 + 0.021 + EPS


def test_admission_configuration_is_validated() -> None:
    async def fn(items: list[int]) -> list[int]:
        return items

    reg = CollectorRegistry
    with pytest.raises(ValueError):
        AdaptiveBatcher(fn, max_wait=0.01, max_queue_wait=0.005, registry=reg())
    with pytest.raises(ValueError):
        FixedWindowBatcher(fn, max_queue_delay=0.01, max_queue_wait=0.005, registry=reg())
    with pytest.raises(ValueError):
        AdaptiveBatcher(fn, max_queue_wait=0.0, registry=reg())
    with pytest.raises(ValueError):
        AdaptiveBatcher(fn, max_queue=-1, registry=reg())
    with pytest.raises(ValueError, match="max_queue must be >= 1"):
        AdaptiveBatcher(fn, max_queue=0, registry=reg())  # would refuse every request
