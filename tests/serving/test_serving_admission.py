"""Admission control: priority then FIFO order, bounded queue and wait, no leaked slots."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from infersight.serving import AdmissionController, Overloaded, run_virtual

Op = tuple[str, int]  # ("arrive", priority) | ("cancel", nth arrival) | ("release", _)

ops = st.lists(
    st.one_of(
        st.tuples(st.just("arrive"), st.integers(0, 2)),
        st.tuples(st.just("cancel"), st.integers(0, 30)),
        st.tuples(st.just("release"), st.just(0)),
    ),
    max_size=40,
)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 3), st.integers(0, 5), ops)
def test_admission_order_matches_a_priority_fifo_model(
    slots: int, max_queue: int, ops: list[Op]
) -> None:
    asyncio.run(_run_model(slots, max_queue, ops))


async def _run_model(slots: int, max_queue: int, ops: list[Op]) -> None:
    ac = AdmissionController(
        slots, max_queue=max_queue, max_wait=60.0, registry=CollectorRegistry()
    )
    admitted: list[int] = []  # arrival numbers, in admission order
    gates: dict[int, asyncio.Event] = {}
    tasks: list[asyncio.Task[None]] = []

    async def client(n: int, priority: int) -> None:
        async with ac.admit(priority):
            admitted.append(n)
            gates[n] = asyncio.Event()
            await gates[n].wait()

    # The model: holders, and a queue served by (priority, arrival number).
    holding: list[int] = []
    queue: list[tuple[int, int]] = []
    expected: list[int] = []
    rejected: set[int] = set()
    cancelled: set[int] = set()

    def model_admit_next() -> None:
        while len(holding) < slots and queue:
            _, n = min(queue)
            queue.remove(min(queue))
            holding.append(n)
            expected.append(n)

    for kind, arg in ops:
        if kind == "arrive":
            n = len(tasks)
            tasks.append(asyncio.create_task(client(n, arg)))
            if len(holding) < slots and not queue:
                holding.append(n)
                expected.append(n)
            elif len(queue) >= max_queue:
                rejected.add(n)
            else:
                queue.append((arg, n))
        elif kind == "cancel" and arg < len(tasks) and arg not in rejected | cancelled:
            tasks[arg].cancel()
            cancelled.add(arg)
            if arg in holding:
                holding.remove(arg)
            queue[:] = [(p, n) for p, n in queue if n != arg]
            model_admit_next()
        elif kind == "release" and holding:
            n = holding.pop(0)
            gates[n].set()
            model_admit_next()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert ac.busy == len(holding) <= slots
        assert ac.queued == len(queue)

    assert admitted == expected
    for n in set(gates) - cancelled:
        gates[n].set()
    for n in {n for _, n in queue}:
        tasks[n].cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for n, res in enumerate(results):
        if n in rejected:
            assert isinstance(res, Overloaded) and res.reason == "queue_full"
        elif res is not None:
            assert isinstance(res, asyncio.CancelledError)
    assert ac.busy == 0 and ac.queued == 0


async def test_waiter_times_out_at_max_wait_and_leaves_no_residue() -> None:
    ac = AdmissionController(1, max_queue=4, max_wait=0.05, registry=CollectorRegistry())
    gate = asyncio.Event()

    async def hold() -> None:
        async with ac.admit():
            await gate.wait()

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)
    with pytest.raises(Overloaded) as info:
        async with ac.admit():
            pytest.fail("must not be admitted while the slot is held")
    assert info.value.reason == "wait_exceeded"
    assert ac.queued == 0 and ac.busy == 1
    gate.set()
    await holder
    assert ac.busy == 0


async def test_rejects_at_once_when_estimated_wait_exceeds_max_wait() -> None:
    registry = CollectorRegistry()
    ac = AdmissionController(1, max_queue=10, max_wait=0.3, ewma_alpha=1.0, registry=registry)
    async with ac.admit():
        await asyncio.sleep(0.2)  # teaches the controller: a slot is held ~0.2 s
    gate = asyncio.Event()

    async def hold() -> None:
        async with ac.admit():
            await gate.wait()

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)
    first = asyncio.create_task(hold())  # estimated wait ~0.2 s: queued
    await asyncio.sleep(0)
    assert ac.queued == 1
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(Overloaded) as info:
        async with ac.admit():  # estimated wait ~0.4 s > 0.3 s: rejected without waiting
            pass
    assert loop.time() - start < 0.1
    assert info.value.reason == "wait_exceeded"
    assert info.value.retry_after > 0 and int(info.value.retry_after_header) >= 1
    assert (
        registry.get_sample_value(
            "infersight_rejections_total", {"name": "default", "reason": "wait_exceeded"}
        )
        == 1.0
    )
    gate.set()
    await asyncio.gather(holder, first)
    assert ac.busy == 0 and ac.queued == 0


async def test_slot_handed_to_a_cancelled_waiter_passes_on() -> None:
    ac = AdmissionController(1, max_queue=4, max_wait=60.0, registry=CollectorRegistry())
    order: list[str] = []

    async def client(tag: str) -> None:
        async with ac.admit():
            order.append(tag)

    held = ac.admit()
    await held.__aenter__()
    w1 = asyncio.create_task(client("w1"))
    w2 = asyncio.create_task(client("w2"))
    await asyncio.sleep(0)
    assert ac.queued == 2
    await held.__aexit__(None, None, None)  # hands the slot to w1 without yielding...
    w1.cancel()  # ...which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await w1
    await asyncio.wait_for(w2, timeout=5)
    assert order == ["w2"]
    assert ac.busy == 0 and ac.queued == 0


def test_hold_time_and_waits_follow_the_loop_clock() -> None:
    """On a virtual clock (as docs/serving.md suggests for checking a configuration) the hold
    estimate and the queue wait are the loop's times, so the refusal on arrival happens."""

    async def main() -> None:
        registry = CollectorRegistry()
        ac = AdmissionController(1, max_queue=10, max_wait=1.5, ewma_alpha=1.0, registry=registry)
        async with ac.admit():
            await asyncio.sleep(1.0)
        assert ac.estimated_wait(1) == pytest.approx(1.0)

        async def hold(seconds: float) -> None:
            async with ac.admit():
                await asyncio.sleep(seconds)

        holder = asyncio.create_task(hold(1.0))
        await asyncio.sleep(0)
        queued = asyncio.create_task(hold(1.0))  # estimated 1 s <= 1.5 s: waits
        await asyncio.sleep(0)
        with pytest.raises(Overloaded) as info:
            await hold(0.0)  # estimated 2 s > 1.5 s: refused at once
        assert info.value.reason == "wait_exceeded"
        await asyncio.gather(holder, queued)
        assert registry.get_sample_value(
            "infersight_queue_wait_seconds_sum", {"name": "default"}
        ) == pytest.approx(1.0)

    run_virtual(main())


def test_retry_after_header_is_whole_seconds_at_least_one() -> None:
    assert Overloaded("queue_full", 0.01).retry_after_header == "1"
    assert Overloaded("queue_full", 2.2).retry_after_header == "3"
