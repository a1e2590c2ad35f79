"""Batchers: answers reach their callers, batches respect the limits, cancellations and errors
leave nothing behind, and the adaptive window goes at once on sparse traffic."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from infersight.serving import (
    AdaptiveBatcher,
    Batcher,
    BatcherClosed,
    BatchSizeMismatch,
    FixedWindowBatcher,
    run_virtual,
)


class ItemError(Exception):
    pass


class BatchError(Exception):
    pass


def make(kind: str, fn: object, **kw: object) -> Batcher[int, int]:
    registry = CollectorRegistry()
    if kind == "adaptive":
        return AdaptiveBatcher(fn, max_wait=kw.pop("window", 0.002), registry=registry, **kw)  # type: ignore[arg-type]
    return FixedWindowBatcher(fn, max_queue_delay=kw.pop("window", 0.002), registry=registry, **kw)  # type: ignore[arg-type]


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, object]:
    n = draw(st.integers(1, 40))
    max_batch = draw(st.integers(1, 8))
    return {
        "kind": draw(st.sampled_from(["adaptive", "fixed"])),
        "max_batch": max_batch,
        "preferred": draw(st.lists(st.integers(1, max_batch), max_size=3)),
        "concurrency": draw(st.integers(1, 3)),
        "gaps": draw(st.lists(st.sampled_from([0.0, 0.0, 0.0005, 0.002]), min_size=n, max_size=n)),
        "item_fail": draw(st.sets(st.integers(0, n - 1))),
        "batch_boom": draw(st.sets(st.integers(0, n - 1), max_size=3)),
        "cancel": draw(st.sets(st.integers(0, n - 1))),
        "cancel_after": draw(st.sampled_from([0.0, 0.001, 0.004])),
    }


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_every_request_answered_once_by_its_own_result(sc: dict[str, object]) -> None:
    asyncio.run(_run_scenario(sc))


async def _run_scenario(sc: dict[str, object]) -> None:
    gaps: list[float] = sc["gaps"]  # type: ignore[assignment]
    item_fail: set[int] = sc["item_fail"]  # type: ignore[assignment]
    batch_boom: set[int] = sc["batch_boom"]  # type: ignore[assignment]
    cancel: set[int] = sc["cancel"]  # type: ignore[assignment]
    max_batch: int = sc["max_batch"]  # type: ignore[assignment]
    concurrency: int = sc["concurrency"]  # type: ignore[assignment]
    seen: list[list[int]] = []
    running = 0
    peak = 0

    async def fn(items: list[int]) -> Sequence[int | Exception]:
        nonlocal running, peak
        seen.append(list(items))
        running += 1
        peak = max(peak, running)
        try:
            await asyncio.sleep(0.001)
            if batch_boom & set(items):
                raise BatchError(items)
            return [ItemError(i) if i in item_fail else i * 10 for i in items]
        finally:
            running -= 1

    b = make(
        str(sc["kind"]),
        fn,
        max_batch_size=max_batch,
        preferred_batch_sizes=sc["preferred"],
        max_concurrency=concurrency,
    )
    tasks = []
    for i, gap in enumerate(gaps):
        if gap:
            await asyncio.sleep(gap)
        tasks.append(asyncio.create_task(b.submit(i)))
    await asyncio.sleep(float(sc["cancel_after"]))  # type: ignore[arg-type]
    for i in cancel:
        tasks[i].cancel()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    await b.close()

    flat = [i for batch in seen for i in batch]
    assert len(flat) == len(set(flat)), "an item reached batch_fn twice"
    assert all(1 <= len(batch) <= max_batch for batch in seen)
    assert peak <= concurrency
    batch_of = {i: batch for batch in seen for i in batch}
    for i, out in enumerate(outcomes):
        if isinstance(out, asyncio.CancelledError):
            assert i in cancel
            continue
        assert i in batch_of, f"request {i} answered without being executed"
        if batch_boom & set(batch_of[i]):
            assert isinstance(out, BatchError) and i in out.args[0]
        elif i in item_fail:
            assert isinstance(out, ItemError) and out.args == (i,)
        else:
            assert out == i * 10
    assert set(range(len(gaps))) - cancel <= set(flat), "a live request was never executed"
    assert b.pending == 0 and b.in_flight == 0


async def _blocked_batcher(
    kind: str, **kw: object
) -> tuple[Batcher[int, int], list[list[int]], asyncio.Event]:
    """A batcher whose batch_fn records batches and blocks until the event is set."""
    gate = asyncio.Event()
    seen: list[list[int]] = []

    async def fn(items: list[int]) -> list[int]:
        seen.append(list(items))
        await gate.wait()
        return [i + 1 for i in items]

    return make(kind, fn, **kw), seen, gate


@pytest.mark.parametrize("kind", ["adaptive", "fixed"])
async def test_cancelled_pending_request_never_reaches_batch_fn(kind: str) -> None:
    b, seen, gate = await _blocked_batcher(kind, max_batch_size=8, window=0.0)
    first = asyncio.create_task(b.submit(0))
    await asyncio.sleep(0.01)  # dispatched alone, executor now busy
    doomed = asyncio.create_task(b.submit(1))
    kept = asyncio.create_task(b.submit(2))
    await asyncio.sleep(0)
    doomed.cancel()
    await asyncio.sleep(0)
    assert b.pending == 1
    gate.set()
    assert await first == 1 and await kept == 3
    with pytest.raises(asyncio.CancelledError):
        await doomed
    await b.close()
    assert seen == [[0], [2]]


@pytest.mark.parametrize("kind", ["adaptive", "fixed"])
async def test_close_without_drain_fails_pending_and_refuses_new(kind: str) -> None:
    b, seen, gate = await _blocked_batcher(kind, max_batch_size=8, window=0.0)
    running = asyncio.create_task(b.submit(0))
    await asyncio.sleep(0.01)
    waiting = [asyncio.create_task(b.submit(i)) for i in (1, 2)]
    await asyncio.sleep(0)
    closing = asyncio.create_task(b.close(drain=False))
    await asyncio.sleep(0.01)
    for t in waiting:
        with pytest.raises(BatcherClosed):
            await t
    assert not closing.done(), "close must wait for the batch already executing"
    gate.set()
    await closing
    assert await running == 1
    assert seen == [[0]]
    with pytest.raises(BatcherClosed):
        await b.submit(9)


@pytest.mark.parametrize("kind", ["adaptive", "fixed"])
async def test_close_with_drain_runs_pending_without_waiting_for_the_window(kind: str) -> None:
    b, seen, gate = await _blocked_batcher(kind, max_batch_size=8, window=60.0)
    gate.set()
    tasks = [asyncio.create_task(b.submit(i)) for i in range(3)]
    await asyncio.sleep(0)
    await asyncio.wait_for(b.close(drain=True), timeout=10)
    assert [t.result() for t in tasks] == [1, 2, 3]
    assert sorted(i for batch in seen for i in batch) == [0, 1, 2]


async def test_wrong_result_length_fails_the_whole_batch() -> None:
    async def fn(items: list[int]) -> list[int]:
        return [0]

    b = make("fixed", fn, max_batch_size=3, window=60.0)
    outs = await asyncio.gather(*(b.submit(i) for i in range(3)), return_exceptions=True)
    assert all(isinstance(o, BatchSizeMismatch) and (o.expected, o.got) == (3, 1) for o in outs)
    await b.close()


async def test_requests_gathered_while_busy_form_the_next_batch() -> None:
    b, seen, gate = await _blocked_batcher("adaptive", max_batch_size=16, window=0.5)
    first = asyncio.create_task(b.submit(0))
    await asyncio.sleep(0.01)
    rest = [asyncio.create_task(b.submit(i)) for i in range(1, 11)]
    await asyncio.sleep(0.01)
    assert seen == [[0]] and b.pending == 10
    gate.set()
    await asyncio.gather(first, *rest)
    await b.close()
    assert seen == [[0], list(range(1, 11))], "one batch, in arrival order"


async def test_preferred_size_dispatches_immediately() -> None:
    b, seen, gate = await _blocked_batcher(
        "fixed", max_batch_size=8, preferred_batch_sizes=[4], window=60.0
    )
    gate.set()
    tasks = [asyncio.create_task(b.submit(i)) for i in range(5)]
    await asyncio.sleep(0.05)
    assert seen == [[0, 1, 2, 3]] and b.pending == 1, "4 go at once, the 5th waits for the window"
    await b.close()
    assert tasks[4].result() == 5


def test_adaptive_lone_request_goes_at_once_where_fixed_waits_the_window() -> None:
    async def fn(items: list[int]) -> list[int]:
        return items

    window = 0.5

    async def main() -> dict[str, float]:
        loop = asyncio.get_running_loop()
        elapsed = {}
        for kind in ("adaptive", "fixed"):
            b = make(kind, fn, max_batch_size=32, window=window)
            for i in range(3):  # sparse: one at a time
                start = loop.time()
                assert await b.submit(i) == i
                elapsed[kind] = loop.time() - start
            await b.close()
        return elapsed

    # on the virtual clock the figures are exact, not subject to a loaded CI machine
    elapsed = run_virtual(main())
    assert elapsed["fixed"] == pytest.approx(window)
    assert elapsed["adaptive"] == 0.0


async def test_adaptive_waits_under_load_then_fills_the_batch() -> None:
    b, seen, gate = await _blocked_batcher("adaptive", max_batch_size=4, window=5.0)
    assert isinstance(b, AdaptiveBatcher)
    first = asyncio.create_task(b.submit(0))
    await asyncio.sleep(0)
    more = [asyncio.create_task(b.submit(i)) for i in (1, 2)]  # arrive fast: small EWMA gap
    await asyncio.sleep(0.01)
    gate.set()
    await first
    await asyncio.sleep(0.01)
    assert b.window > 0 and b.pending == 2, "batch can fill within the cap: it should wait"
    last = [asyncio.create_task(b.submit(i)) for i in (3, 4)]
    await asyncio.gather(*more, *last)
    assert seen == [[0], [1, 2, 3, 4]]
    await b.close()


def test_invalid_configuration_is_refused() -> None:
    async def fn(items: list[int]) -> list[int]:
        return items

    for kw in ({"max_batch_size": 0}, {"max_concurrency": 0}, {"preferred_batch_sizes": [9]}):
        with pytest.raises(ValueError):
            make("adaptive", fn, **{"max_batch_size": 8, **kw})
