"""A batch function that hangs, raises CancelledError or a BaseException: every caller gets
exactly one answer, bounded in time. On the virtual clock (`run_virtual`): exact and instant."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from infersight.serving import (
    AdaptiveBatcher,
    Batcher,
    BatcherClosed,
    BatchFailed,
    BatchTimeout,
    FixedWindowBatcher,
    run_virtual,
)


async def hang(items: list[int]) -> list[int]:
    await asyncio.Event().wait()  # never set
    return items


def make(
    kind: str, fn: Callable[[list[int]], Coroutine[Any, Any, list[int]]], **kw: Any
) -> Batcher[int, int]:
    cls = AdaptiveBatcher if kind == "adaptive" else FixedWindowBatcher
    # a full batch (3 callers) or a lone caller: dispatched at once by either policy
    return cls(fn, max_batch_size=3, registry=CollectorRegistry(), **kw)  # type: ignore[arg-type]


async def answers(tasks: list[asyncio.Task[int]]) -> list[BaseException | int]:
    done = await asyncio.gather(*tasks, return_exceptions=True)
    return list(done)


@pytest.mark.parametrize("kind", ["adaptive", "fixed"])
def test_a_hung_batch_fails_its_callers_at_the_batch_timeout(kind: str) -> None:
    async def main() -> None:
        b = make(kind, hang, batch_timeout=2.0, max_queue_wait=1.0)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        tasks = [asyncio.create_task(b.submit(i)) for i in range(3)]
        got = await answers(tasks)
        assert all(isinstance(g, BatchTimeout) for g in got), got
        assert loop.time() - t0 <= 2.0 + 0.1  # virtual time: the timeout, not for ever
        # the executor is free again: the next caller is served (and times out too, alone)
        assert isinstance((await answers([asyncio.create_task(b.submit(9))]))[0], BatchTimeout)

    run_virtual(main())


@pytest.mark.parametrize("kind", ["adaptive", "fixed"])
def test_close_without_drain_does_not_wait_for_ever(kind: str) -> None:
    async def main() -> None:
        for timeout in (5.0, None):
            b = make(kind, hang, batch_timeout=timeout)
            loop = asyncio.get_running_loop()
            running = asyncio.create_task(b.submit(1))
            await asyncio.sleep(0.1)
            t0 = loop.time()
            await asyncio.wait_for(b.close(drain=False), 60)
            assert loop.time() - t0 <= (timeout or 0) + 0.1
            [got] = await answers([running])
            assert isinstance(got, BatchTimeout if timeout else BatcherClosed), got

    run_virtual(main())


@pytest.mark.parametrize("kind", ["adaptive", "fixed"])
def test_a_cancelled_error_from_the_batch_fn_is_not_a_cancellation_of_the_callers(
    kind: str,
) -> None:
    async def cancels(items: list[int]) -> list[int]:
        raise asyncio.CancelledError()

    async def main() -> None:
        b = make(kind, cancels)
        tasks = [asyncio.create_task(b.submit(i)) for i in range(3)]
        got = await answers(tasks)
        assert all(isinstance(g, BatchFailed) for g in got), got
        assert not any(t.cancelled() for t in tasks)
        assert "CancelledError" in str(got[0])

    run_virtual(main())


class Fatal(BaseException):
    pass


@pytest.mark.parametrize("kind", ["adaptive", "fixed"])
def test_a_base_exception_from_the_batch_fn_answers_every_caller_once(kind: str) -> None:
    async def dies(items: list[int]) -> list[int]:
        raise Fatal("gone")

    async def main() -> None:
        b = make(kind, dies)
        tasks = [asyncio.create_task(b.submit(i)) for i in range(3)]
        _, pending = await asyncio.wait(tasks, timeout=10)
        assert not pending, "callers left unanswered"
        got = [t.exception() for t in tasks]
        assert all(isinstance(g, BatchFailed) and isinstance(g.__cause__, Fatal) for g in got)
        await b.close()

    run_virtual(main())


def test_batch_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch_timeout"):
        make("fixed", hang, batch_timeout=0)
